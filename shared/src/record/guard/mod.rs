//! The sensitive-content guard: records are public, so anything that looks
//! like a credential or a private identifier is refused before it is stored.
//!
//! Each rule aims at a format with structure (a checksum, a fixed prefix, a
//! label) rather than at "long random-looking strings", so that what a fund
//! record legitimately carries passes: 64-hex hashes (our own leaf hashes),
//! Solana addresses and signatures in prose, UUIDs, epoch timestamps. The
//! guard reports which rule matched and never the matching text.
//!
//! Invisible characters (zero-width spaces and joiners, the byte-order mark,
//! soft hyphens: Unicode's default-ignorable code points) are removed before
//! scanning, so they cannot split a secret into pieces no rule recognises.

mod credentials;
mod keys;
mod personal;

use credentials::*;
use keys::*;
use personal::*;
use regex::Regex;
use subtle::ConstantTimeEq;

/// Why a piece of text was refused. `as_str` is the rule name in API errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SensitiveRule {
    /// PEM private keys; Solana keypairs as base58, hex or a JSON array of 64
    /// numbers; WIF and xprv keys; labelled 32-byte seeds in hex or base58.
    PrivateKey,
    /// 12–24 BIP39 English words with a valid checksum.
    SeedPhrase,
    /// AWS access key ids and labelled secret access keys.
    AwsKey,
    /// API keys of well-known formats and labelled secrets or passwords.
    ApiKey,
    /// JSON Web Tokens.
    Jwt,
    /// `Bearer <token>` and `Authorization:` header values.
    BearerToken,
    /// The service's own write token.
    WriteToken,
    /// A URL carrying `user:password@`.
    UrlCredentials,
    /// A URL with a secret-looking query or fragment parameter.
    UrlSecretParameter,
    /// A payment card number (known issuer prefix, valid Luhn digit).
    CardNumber,
    /// An IBAN (known country length, valid mod-97 check).
    Iban,
    /// An e-mail address.
    Email,
}

impl SensitiveRule {
    /// Every rule, in the order the guard checks them (the write token first).
    pub(crate) const ALL: [SensitiveRule; 12] = [
        SensitiveRule::WriteToken,
        SensitiveRule::PrivateKey,
        SensitiveRule::AwsKey,
        SensitiveRule::Jwt,
        SensitiveRule::UrlCredentials,
        SensitiveRule::UrlSecretParameter,
        SensitiveRule::BearerToken,
        SensitiveRule::ApiKey,
        SensitiveRule::Email,
        SensitiveRule::CardNumber,
        SensitiveRule::Iban,
        SensitiveRule::SeedPhrase,
    ];

    /// Stable rule name, used in error details.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SensitiveRule::PrivateKey => "private_key",
            SensitiveRule::SeedPhrase => "seed_phrase",
            SensitiveRule::AwsKey => "aws_key",
            SensitiveRule::ApiKey => "api_key",
            SensitiveRule::Jwt => "jwt",
            SensitiveRule::BearerToken => "bearer_token",
            SensitiveRule::WriteToken => "write_token",
            SensitiveRule::UrlCredentials => "url_credentials",
            SensitiveRule::UrlSecretParameter => "url_secret_parameter",
            SensitiveRule::CardNumber => "card_number",
            SensitiveRule::Iban => "iban",
            SensitiveRule::Email => "email",
        }
    }

    /// A plain sentence for the error message (never containing the text).
    pub(crate) fn describe(self) -> &'static str {
        match self {
            SensitiveRule::PrivateKey => "looks like a private key",
            SensitiveRule::SeedPhrase => {
                "contains a seed phrase (BIP39 words with a valid checksum)"
            }
            SensitiveRule::AwsKey => "contains an AWS access key",
            SensitiveRule::ApiKey => "contains an API key, password or labelled secret",
            SensitiveRule::Jwt => "contains a JSON Web Token",
            SensitiveRule::BearerToken => "contains a bearer token or Authorization header",
            SensitiveRule::WriteToken => "contains the service's write token",
            SensitiveRule::UrlCredentials => "contains a URL with a user name and password",
            SensitiveRule::UrlSecretParameter => "contains a URL with a secret-looking parameter",
            SensitiveRule::CardNumber => "contains a payment card number",
            SensitiveRule::Iban => "contains a bank account number (IBAN)",
            SensitiveRule::Email => "contains an e-mail address",
        }
    }
}

/// The guard, holding what it must recognise beyond fixed formats: the
/// service's own write token (as written, and in the encodings a writer
/// might paste it in) and the texts of the log's signing key.
#[derive(Clone, Default)]
pub struct Guard {
    write_token: Option<Vec<u8>>,
    /// The token's encodings compared as written: base64, standard and
    /// URL-safe, padded or not.
    token_encodings: Vec<Vec<u8>>,
    /// The token, the token reversed and its hex, lowercased: compared with
    /// the lowercased text (and that text without white space), so any
    /// letter case, and a token split by spaces, matches.
    token_folded: Vec<Vec<u8>>,
    signing_secrets: Vec<Vec<u8>>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field(
                "write_token",
                &self.write_token.as_ref().map(|_| "[redacted]"),
            )
            .field("signing_secrets", &self.signing_secrets.len())
            .finish()
    }
}

impl Guard {
    /// A guard that also refuses text containing `write_token`.
    pub fn new(write_token: Option<&str>) -> Guard {
        use base64::Engine as _;
        use base64::engine::general_purpose::{
            STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD,
        };
        let token = write_token.filter(|t| !t.is_empty());
        let (token_encodings, token_folded) = token.map_or_else(Default::default, |token| {
            let encodings = [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
                .iter()
                .map(|engine| engine.encode(token).into_bytes())
                .collect();
            let lower = token.to_ascii_lowercase();
            let folded = [lower.chars().rev().collect(), lower, hex::encode(token)]
                .into_iter()
                .map(String::into_bytes)
                .collect();
            (encodings, folded)
        });
        Guard {
            write_token: token.map(|t| t.as_bytes().to_vec()),
            token_encodings,
            token_folded,
            signing_secrets: Vec::new(),
        }
    }

    /// The same guard also refusing `secrets` (the log's signing key in its
    /// encodings) as `private_key`.
    pub(crate) fn with_signing_secrets(mut self, secrets: Vec<String>) -> Guard {
        self.signing_secrets = secrets
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(String::into_bytes)
            .collect();
        self
    }

    /// The first rule `text` breaks, if any: in the text as written
    /// (without its invisible characters) and, when it holds a `%`, in its
    /// percent-decoded form too, so no rule is dodged by percent-encoding.
    pub(crate) fn scan(&self, text: &str) -> Option<SensitiveRule> {
        let visible: String;
        let text = if text.chars().any(crate::record::text::is_invisible) {
            visible = text
                .chars()
                .filter(|c| !crate::record::text::is_invisible(*c))
                .collect();
            visible.as_str()
        } else {
            text
        };
        self.scan_visible(text).or_else(|| {
            let decoded = text
                .contains('%')
                .then(|| percent_encoding::percent_decode_str(text).decode_utf8_lossy())
                .filter(|decoded| decoded != text)?;
            self.scan_visible(&decoded)
        })
    }

    /// The first rule `text` (without invisible characters) breaks.
    fn scan_visible(&self, text: &str) -> Option<SensitiveRule> {
        if self.contains_write_token(text) {
            return Some(SensitiveRule::WriteToken);
        }
        if self
            .signing_secrets
            .iter()
            .any(|secret| contains_in_constant_time(text.as_bytes(), secret))
        {
            return Some(SensitiveRule::PrivateKey);
        }
        let checks: [(Detector, SensitiveRule); 11] = [
            (has_private_key, SensitiveRule::PrivateKey),
            (has_aws_key, SensitiveRule::AwsKey),
            (has_jwt, SensitiveRule::Jwt),
            (has_url_credentials, SensitiveRule::UrlCredentials),
            (has_url_secret_parameter, SensitiveRule::UrlSecretParameter),
            (has_bearer_token, SensitiveRule::BearerToken),
            (has_api_key, SensitiveRule::ApiKey),
            (has_email, SensitiveRule::Email),
            (has_card_number, SensitiveRule::CardNumber),
            (has_iban, SensitiveRule::Iban),
            (has_seed_phrase, SensitiveRule::SeedPhrase),
        ];
        checks
            .into_iter()
            .find(|(check, _)| check(text))
            .map(|(_, rule)| rule)
    }

    /// Whether `text` contains the write token, in any letter case,
    /// reversed, split by white space (a no-break space included), or its
    /// hex or base64. Every window is compared in constant time so the scan
    /// does not reveal how much of it matched.
    fn contains_write_token(&self, text: &str) -> bool {
        let Some(token) = &self.write_token else {
            return false;
        };
        let folded = text.to_ascii_lowercase();
        let unspaced: String = folded.chars().filter(|c| !c.is_whitespace()).collect();
        contains_in_constant_time(text.as_bytes(), token)
            | self
                .token_folded
                .iter()
                .any(|form| contains_in_constant_time(unspaced.as_bytes(), form))
            | self
                .token_encodings
                .iter()
                .any(|encoding| contains_in_constant_time(text.as_bytes(), encoding))
            | self
                .token_folded
                .iter()
                .any(|form| contains_in_constant_time(folded.as_bytes(), form))
    }
}

/// Whether `haystack` contains `secret`, comparing every window in
/// constant time.
fn contains_in_constant_time(haystack: &[u8], secret: &[u8]) -> bool {
    if secret.is_empty() || haystack.len() < secret.len() {
        return false;
    }
    let mut found = subtle::Choice::from(0);
    for window in haystack.windows(secret.len()) {
        found |= window.ct_eq(secret);
    }
    found.into()
}

/// A format detector: whether a text contains one instance of the format.
type Detector = fn(&str) -> bool;

/// A compiled rule pattern (the patterns are constants: one that does not
/// compile is a bug caught by the first test).
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("guard patterns are valid")
}

#[cfg(test)]
mod tests;
