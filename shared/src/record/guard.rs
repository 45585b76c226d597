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

use regex::Regex;
use std::sync::LazyLock;
use subtle::ConstantTimeEq;

/// Why a piece of text was refused. `as_str` is the rule name in API errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SensitiveRule {
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
    pub const ALL: [SensitiveRule; 12] = [
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
    pub fn as_str(self) -> &'static str {
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
    pub fn describe(self) -> &'static str {
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
    /// The token and its hex, lowercased: compared with the lowercased text,
    /// so any letter case matches.
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
            let folded = [token.to_ascii_lowercase(), hex::encode(token)]
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
    pub fn with_signing_secrets(mut self, secrets: Vec<String>) -> Guard {
        self.signing_secrets = secrets
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(String::into_bytes)
            .collect();
        self
    }

    /// The first rule `text` breaks, if any.
    pub fn scan(&self, text: &str) -> Option<SensitiveRule> {
        let visible: String;
        let text = if text.chars().any(is_default_ignorable) {
            visible = text.chars().filter(|c| !is_default_ignorable(*c)).collect();
            visible.as_str()
        } else {
            text
        };
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

    /// Whether `text` contains the write token, in any letter case, or its
    /// hex or base64. Every window is compared in constant time so the scan
    /// does not reveal how much of it matched.
    fn contains_write_token(&self, text: &str) -> bool {
        let Some(token) = &self.write_token else {
            return false;
        };
        let folded = text.to_ascii_lowercase();
        contains_in_constant_time(text.as_bytes(), token)
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

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("guard patterns are valid")
}

static PEM_PRIVATE_KEY: LazyLock<Regex> =
    LazyLock::new(|| regex(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"));
static KEYPAIR_BYTES: LazyLock<Regex> =
    LazyLock::new(|| regex(r"\[\s*(?:\d{1,3}\s*,\s*){63}\d{1,3}\s*\]"));
static LABELLED_HEX_KEY: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:(?:private|secret|priv|signing)[\s_-]?key|seed|pk|keypair|secret)\b\W{0,3}\s*(?:0x)?[0-9a-f]{64}\b",
    )
});
/// A labelled base58 word the size of a 32-byte seed (32 to 44 characters).
static LABELLED_BASE58_KEY: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:(?:private|secret|priv|signing)[\s_-]?key|seed|pk|keypair|secret)\b\W{0,3}\s*([1-9A-HJ-NP-Za-km-z]{32,44})\b",
    )
});
static BASE58_WORD: LazyLock<Regex> = LazyLock::new(|| regex(r"\b[1-9A-HJ-NP-Za-km-z]{50,120}\b"));
static HEX_128: LazyLock<Regex> = LazyLock::new(|| regex(r"\b(?:0x)?[0-9a-fA-F]{128}\b"));
/// A base64 word the size of 64 bytes (standard or URL-safe, padded or not).
static BASE64_64: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?:^|[^A-Za-z0-9+/_-])([A-Za-z0-9+/_-]{86}(?:==)?)(?:[^A-Za-z0-9+/_=-]|$)")
});

/// Whether `word`, in one of the encodings wallets export keys in (base58,
/// hex with or without `0x`, base64 standard or URL-safe), is the 64 bytes
/// of an Ed25519 keypair.
fn is_encoded_keypair(word: &str) -> bool {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let hex_digits = word.strip_prefix("0x").unwrap_or(word);
    let unpadded = word.trim_end_matches('=');
    let decodings = [
        bs58::decode(word).into_vec().ok(),
        (hex_digits.len() == 128)
            .then(|| hex::decode(hex_digits).ok())
            .flatten(),
        STANDARD_NO_PAD.decode(unpadded).ok(),
        URL_SAFE_NO_PAD.decode(unpadded).ok(),
    ];
    decodings
        .into_iter()
        .flatten()
        .any(|bytes| is_ed25519_keypair(&bytes))
}

/// Whether a keypair sits in `text` split by white space into two or more
/// words (a line break or spaces pasted into it): every run of consecutive
/// words of key characters that joins to a keypair's length is tried.
fn has_split_keypair(text: &str) -> bool {
    let key_word = |w: &&str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'-'))
    };
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| matches!(c, ',' | '.' | ';' | '(' | ')' | '"' | '\'')))
        .collect();
    (0..words.len()).any(|start| {
        let mut joined = String::new();
        for (count, word) in words[start..].iter().enumerate() {
            if !key_word(word) || joined.len() + word.len() > 130 {
                return false;
            }
            joined.push_str(word);
            if count > 0 && (86..=130).contains(&joined.len()) && is_encoded_keypair(&joined) {
                return true;
            }
        }
        false
    })
}

/// The signed-note encoding of a signer key (any log's, c2sp.org/signed-note).
const SIGNED_NOTE_PRIVATE_KEY: &str = "PRIVATE+KEY+";

fn has_private_key(text: &str) -> bool {
    text.contains(SIGNED_NOTE_PRIVATE_KEY)
        || PEM_PRIVATE_KEY.is_match(text)
        || KEYPAIR_BYTES.is_match(text)
        || LABELLED_HEX_KEY.is_match(text)
        || LABELLED_BASE58_KEY.captures_iter(text).any(|c| {
            bs58::decode(&c[1])
                .into_vec()
                .is_ok_and(|bytes| bytes.len() == 32)
        })
        || BASE58_WORD.find_iter(text).any(|m| {
            is_wif_or_extended_key(m.as_str())
                || bs58::decode(m.as_str())
                    .into_vec()
                    .is_ok_and(|bytes| is_ed25519_keypair(&bytes))
        })
        || HEX_128.find_iter(text).any(|m| {
            hex::decode(m.as_str().trim_start_matches("0x"))
                .is_ok_and(|bytes| is_ed25519_keypair(&bytes))
        })
        || BASE64_64
            .captures_iter(text)
            .any(|c| is_encoded_keypair(&c[1]))
        || has_split_keypair(text)
}

/// A Solana keypair as `solana-keygen` and wallets (Phantom) export it: a
/// 32-byte Ed25519 seed followed by its public key. A transaction signature
/// is 64 bytes too, but its second half is not the first half's public key.
fn is_ed25519_keypair(bytes: &[u8]) -> bool {
    let Ok(keypair) = <&[u8; 64]>::try_from(bytes) else {
        return false;
    };
    let (seed, public) = keypair.split_at(32);
    let Ok(seed) = <[u8; 32]>::try_from(seed) else {
        return false;
    };
    let derived = ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key();
    subtle::ConstantTimeEq::ct_eq(derived.as_bytes().as_slice(), public).into()
}

/// Unicode's default-ignorable code points: characters that render as
/// nothing (zero-width spaces and joiners, the byte-order mark, soft
/// hyphens, variation selectors, tags).
fn is_default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// Bitcoin WIF private keys (`5…`, `K…`, `L…`, testnet `9…`, `c…`) and BIP32
/// extended private keys (`xprv`, `tprv`, `yprv`, `zprv`), both base58check.
/// A Solana signature is plain base58 with no checksum, so it does not match.
fn is_wif_or_extended_key(word: &str) -> bool {
    let Ok(payload) = bs58::decode(word).with_check(None).into_vec() else {
        return false;
    };
    let wif = matches!(payload.first(), Some(0x80 | 0xef)) && matches!(payload.len(), 33 | 34);
    let extended = payload.len() == 78
        && ["xprv", "tprv", "yprv", "zprv"]
            .iter()
            .any(|p| word.starts_with(p));
    wif || extended
}

static AWS_ACCESS_KEY_ID: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}\b")
});
static AWS_SECRET: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)aws.{0,20}secret.{0,20}[:=]\s*['\x22]?[A-Za-z0-9/+=]{40}\b"));

fn has_aws_key(text: &str) -> bool {
    AWS_ACCESS_KEY_ID.is_match(text) || AWS_SECRET.is_match(text)
}

static JWT: LazyLock<Regex> =
    LazyLock::new(|| regex(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"));

fn has_jwt(text: &str) -> bool {
    JWT.is_match(text)
}

static BEARER: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]+=*)"));
static AUTHORIZATION_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(?:proxy-)?authorization\s*:\s*(?:basic|bearer|token|digest)?\s*\S{8,}")
});

/// `Bearer <credential>`; "bearer bonds" and the like pass: a credential is at
/// least 16 characters, or at least 8 with a digit or symbol in it.
fn has_bearer_token(text: &str) -> bool {
    let looks_like_credential = |token: &str| {
        token.len() >= 16 || (token.len() >= 8 && token.chars().any(|c| !c.is_ascii_alphabetic()))
    };
    BEARER
        .captures_iter(text)
        .any(|c| looks_like_credential(&c[1]))
        || AUTHORIZATION_HEADER.is_match(text)
}

static API_KEY_FORMATS: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}",
        r"|github_pat_[A-Za-z0-9_]{22,}",
        r"|xox[abposr]-[A-Za-z0-9-]{10,}",
        r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
        r"|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}",
        r"|AIza[0-9A-Za-z_-]{35}",
        r"|glpat-[A-Za-z0-9_-]{20,}",
        r"|npm_[A-Za-z0-9]{36}",
        r"|SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})"
    ))
});
static LABELLED_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:api[_-]?key|api[_-]?secret|client[_-]?secret|secret[_-]?key|password|passwd|passphrase)\s*[:=]\s*\S{6,}",
    )
});

fn has_api_key(text: &str) -> bool {
    API_KEY_FORMATS.is_match(text) || LABELLED_SECRET.is_match(text)
}

static URL: LazyLock<Regex> = LazyLock::new(|| regex(r#"(?i)\b[a-z][a-z0-9+.-]*://[^\s<>"'`]+"#));

fn urls(text: &str) -> impl Iterator<Item = url::Url> + '_ {
    URL.find_iter(text)
        .filter_map(|m| url::Url::parse(m.as_str()).ok())
}

fn has_url_credentials(text: &str) -> bool {
    urls(text).any(|u| u.password().is_some_and(|p| !p.is_empty()))
}

/// Query or fragment parameter names that carry credentials.
const SECRET_PARAMETERS: &[&str] = &[
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "auth_token",
    "api_key",
    "apikey",
    "api-key",
    "key",
    "secret",
    "client_secret",
    "password",
    "passwd",
    "pwd",
    "pass",
    "auth",
    "authorization",
    "sig",
    "signature",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
    "session",
    "sessionid",
    "session_id",
    "private_key",
    "privatekey",
    "code",
];

fn has_url_secret_parameter(text: &str) -> bool {
    urls(text).any(|u| {
        let fragment_pairs = u
            .fragment()
            .map(|f| url::form_urlencoded::parse(f.as_bytes()).collect::<Vec<_>>());
        u.query_pairs()
            .chain(fragment_pairs.into_iter().flatten())
            .any(|(name, value)| {
                !value.is_empty() && SECRET_PARAMETERS.contains(&name.to_ascii_lowercase().as_str())
            })
    })
}

static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
});

fn has_email(text: &str) -> bool {
    EMAIL.is_match(text)
}

static CARD_CANDIDATE: LazyLock<Regex> = LazyLock::new(|| regex(r"\b\d(?:[ ./-]?\d){11,18}\b"));

/// 13–19 digits, written together or with one separator throughout (space,
/// dash, dot or slash, as card numbers are grouped), starting like a card
/// network's numbers (2–6) and passing the Luhn check. Epoch timestamps
/// start with 1; dates, versions and prices mix separators or are short.
fn has_card_number(text: &str) -> bool {
    CARD_CANDIDATE.find_iter(text).any(|m| {
        let mut separators = m.as_str().chars().filter(|c| !c.is_ascii_digit());
        let one_separator = match separators.next() {
            None => true,
            Some(first) => separators.all(|c| c == first),
        };
        let digits: Vec<u32> = m.as_str().chars().filter_map(|c| c.to_digit(10)).collect();
        one_separator
            && (13..=19).contains(&digits.len())
            && digits.first().is_some_and(|d| (2..=6).contains(d))
            && luhn_valid(&digits)
    })
}

fn luhn_valid(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                if d * 2 > 9 { d * 2 - 9 } else { d * 2 }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Upper or lower case: banks print IBANs in capitals, people type them
/// either way.
static IBAN_CANDIDATE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b"));

/// IBAN lengths by country (ISO 13616 registry).
const IBAN_LENGTHS: &[(&str, usize)] = &[
    ("AD", 24),
    ("AE", 23),
    ("AL", 28),
    ("AT", 20),
    ("AZ", 28),
    ("BA", 20),
    ("BE", 16),
    ("BG", 22),
    ("BH", 22),
    ("BI", 27),
    ("BR", 29),
    ("BY", 28),
    ("CH", 21),
    ("CR", 22),
    ("CY", 28),
    ("CZ", 24),
    ("DE", 22),
    ("DJ", 27),
    ("DK", 18),
    ("DO", 28),
    ("EE", 20),
    ("EG", 29),
    ("ES", 24),
    ("FI", 18),
    ("FK", 18),
    ("FO", 18),
    ("FR", 27),
    ("GB", 22),
    ("GE", 22),
    ("GI", 23),
    ("GL", 18),
    ("GR", 27),
    ("GT", 28),
    ("HR", 21),
    ("HU", 28),
    ("IE", 22),
    ("IL", 23),
    ("IQ", 23),
    ("IS", 26),
    ("IT", 27),
    ("JO", 30),
    ("KW", 30),
    ("KZ", 20),
    ("LB", 28),
    ("LC", 32),
    ("LI", 21),
    ("LT", 20),
    ("LU", 20),
    ("LV", 21),
    ("LY", 25),
    ("MC", 27),
    ("MD", 24),
    ("ME", 22),
    ("MK", 19),
    ("MN", 20),
    ("MR", 27),
    ("MT", 31),
    ("MU", 30),
    ("NI", 28),
    ("NL", 18),
    ("NO", 15),
    ("OM", 23),
    ("PK", 24),
    ("PL", 28),
    ("PS", 29),
    ("PT", 25),
    ("QA", 29),
    ("RO", 24),
    ("RS", 22),
    ("RU", 33),
    ("SA", 24),
    ("SC", 31),
    ("SD", 18),
    ("SE", 24),
    ("SI", 19),
    ("SK", 24),
    ("SM", 27),
    ("SO", 23),
    ("ST", 25),
    ("SV", 28),
    ("TL", 23),
    ("TN", 24),
    ("TR", 26),
    ("UA", 29),
    ("VA", 22),
    ("VG", 24),
    ("XK", 20),
    ("YE", 30),
];

fn has_iban(text: &str) -> bool {
    IBAN_CANDIDATE.find_iter(text).any(|m| {
        let compact: String = m
            .as_str()
            .chars()
            .filter(|c| *c != ' ')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let expected = IBAN_LENGTHS
            .iter()
            .find(|(country, _)| compact.starts_with(country))
            .map(|(_, len)| *len);
        // The pattern is greedy and may run into a following capitalised word:
        // check the country's length from the start.
        expected.is_some_and(|len| compact.len() >= len && iban_mod97_valid(&compact[..len]))
    })
}

fn iban_mod97_valid(iban: &str) -> bool {
    let rearranged = iban[4..].chars().chain(iban[..4].chars());
    let mut remainder: u32 = 0;
    for c in rearranged {
        let value = match c.to_digit(36) {
            Some(v) => v,
            None => return false,
        };
        remainder = if value < 10 {
            (remainder * 10 + value) % 97
        } else {
            (remainder * 100 + value) % 97
        };
    }
    remainder == 1
}

static WORD: LazyLock<Regex> = LazyLock::new(|| regex(r"[A-Za-z]+"));
const SEED_LENGTHS: [usize; 5] = [24, 21, 18, 15, 12];

/// Runs of consecutive BIP39 English words, checked in every window of a
/// seed length for a valid checksum. Ordinary prose breaks such runs quickly
/// ("the", "and", "of" are not BIP39 words).
fn has_seed_phrase(text: &str) -> bool {
    let language = bip39::Language::English;
    let mut run: Vec<String> = Vec::new();
    let check_run = |run: &[String]| {
        SEED_LENGTHS
            .iter()
            .filter(|&&len| run.len() >= len)
            .any(|&len| {
                run.windows(len)
                    .any(|w| bip39::Mnemonic::parse_in_normalized(language, &w.join(" ")).is_ok())
            })
    };
    for word in WORD.find_iter(text) {
        let lower = word.as_str().to_ascii_lowercase();
        if language.find_word(&lower).is_some() {
            run.push(lower);
        } else {
            if check_run(&run) {
                return true;
            }
            run.clear();
        }
    }
    check_run(&run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard::new(Some("ff-write-token-for-tests-0123456789"))
    }

    fn rule(text: &str) -> Option<&'static str> {
        guard().scan(text).map(SensitiveRule::as_str)
    }

    #[test]
    fn refuses_each_kind_of_secret() {
        let cases: &[(&str, &str)] = &[
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=",
                "private_key",
            ),
            ("-----BEGIN EC PRIVATE KEY-----", "private_key"),
            (
                &format!("keypair [{}]", vec!["174"; 64].join(",")),
                "private_key",
            ),
            (
                "wallet 5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ",
                "private_key",
            ),
            (
                "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi",
                "private_key",
            ),
            (
                "private key: 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
                "private_key",
            ),
            (
                "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about",
                "seed_phrase",
            ),
            (
                "my words: legal winner thank year wave sausage worth useful legal winner thank yellow, keep safe",
                "seed_phrase",
            ),
            ("key AKIAIOSFODNN7EXAMPLE in use", "aws_key"),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_key",
            ),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "jwt",
            ),
            ("Bearer abc123def456ghi789", "bearer_token"),
            ("Authorization: Basic dXNlcjpwYXNz", "bearer_token"),
            ("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "api_key"),
            ("sk_live_0123456789abcdefABCDEF", "api_key"),
            ("password: hunter22!", "api_key"),
            ("see https://alice:s3cret@example.com/x", "url_credentials"),
            (
                "https://example.com/data?api_key=abcdef123",
                "url_secret_parameter",
            ),
            (
                "https://example.com/cb#access_token=abcdef123&x=1",
                "url_secret_parameter",
            ),
            (
                "https://bucket.s3.amazonaws.com/f?X-Amz-Signature=abc&X-Amz-Credential=def",
                "url_secret_parameter",
            ),
            ("card 4111 1111 1111 1111 exp 12/29", "card_number"),
            ("5500-0000-0000-0004", "card_number"),
            ("pay to GB82 WEST 1234 5698 7654 32 today", "iban"),
            ("DE89370400440532013000", "iban"),
            ("IBAN DE89370400440532013000 OK", "iban"),
            ("contact alice.smith@example.org", "email"),
            (
                "embeds ff-write-token-for-tests-0123456789 here",
                "write_token",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(rule(text), Some(*want), "{text}");
        }
    }

    #[test]
    fn passes_look_alikes_that_records_legitimately_carry() {
        let clean = [
            "leaf 6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d verified",
            "0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b",
            "bought FakeA1phaMintTestTestTestTestTestTestTespump on pumpswap",
            "So11111111111111111111111111111111111111112 and TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
            "tx 5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW landed",
            "run 123e4567-e89b-12d3-a456-426614174000 done",
            "observed at 1777896000000 ms",
            "price 4111.11, 1,234,567 shares",
            "https://dexscreener.com/solana/fakepair?chain=solana&ref=feed",
            "bearer bonds are not in scope",
            "token: FakeBravoMintTestTestTestTestTestTestTestTes looks risky",
            "Abandon the thesis: liquidity fell, volume dried up and the spread widened.",
            "next check 2026-05-04T12:00:00Z",
            "hold: wait for the weekly close above the range before adding",
            "seededSo11111111111111111111111111111111111111112 pool",
        ];
        for text in clean {
            assert_eq!(rule(text), None, "{text}");
        }
    }

    /// A Solana keypair as wallets export it: 32-byte seed, then the
    /// Ed25519 public key of that seed.
    fn keypair_bytes(seed: u8) -> Vec<u8> {
        let signing = ed25519_dalek::SigningKey::from_bytes(&[seed; 32]);
        let mut bytes = signing.to_bytes().to_vec();
        bytes.extend_from_slice(signing.verifying_key().as_bytes());
        bytes
    }

    #[test]
    fn solana_keypairs_in_their_exported_forms_are_refused() {
        for seed in [1u8, 7, 200] {
            let keypair = keypair_bytes(seed);
            let base58 = bs58::encode(&keypair).into_string();
            for text in [
                base58.clone(),
                format!("private key: {base58}"),
                format!("exported from Phantom ({base58}), keep it"),
                hex::encode(&keypair),
            ] {
                assert_eq!(rule(&text), Some("private_key"), "{text}");
            }
        }
        let seed = bs58::encode([9u8; 32]).into_string();
        assert_eq!(rule(&format!("private key: {seed}")), Some("private_key"));
        assert_eq!(rule(&format!("seed = {seed}")), Some("private_key"));
    }

    /// The forms a careless writer pastes that the first guard missed: a
    /// keypair in base64 (standard or URL-safe, padded or not), a keypair
    /// split by white space, a seed labelled `pk:`, `keypair:` or
    /// `secret:`, and the write token in base64, hex or another case.
    #[test]
    fn keypairs_seeds_and_the_token_in_other_encodings_are_refused() {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        for seed in [2u8, 77] {
            let keypair = keypair_bytes(seed);
            let base58 = bs58::encode(&keypair).into_string();
            let hex = hex::encode(&keypair);
            let (b1, b2) = base58.split_at(40);
            let (h1, h2) = hex.split_at(64);
            for text in [
                STANDARD.encode(&keypair),
                format!("backup: {} ok", URL_SAFE_NO_PAD.encode(&keypair)),
                format!("{b1} {b2}"),
                format!("key is {b1}\n{b2} keep it"),
                format!("{h1} {h2}"),
                format!("{} {} {}", &base58[..30], &base58[30..60], &base58[60..]),
            ] {
                assert_eq!(rule(&text), Some("private_key"), "{text}");
            }
        }
        let seed58 = bs58::encode([9u8; 32]).into_string();
        let seed_hex = hex::encode([9u8; 32]);
        for label in ["pk", "PK", "keypair", "secret", "Secret"] {
            for seed in [&seed58, &seed_hex] {
                let text = format!("{label}: {seed}");
                assert_eq!(rule(&text), Some("private_key"), "{text}");
            }
        }
        let token = "ff-write-token-for-tests-0123456789";
        for text in [
            token.to_uppercase(),
            format!("it was {}", "Ff-Write-Token-For-Tests-0123456789"),
            STANDARD.encode(token),
            format!("b64 {}", URL_SAFE_NO_PAD.encode(token)),
            hex::encode(token),
            hex::encode_upper(token),
        ] {
            assert_eq!(rule(&text), Some("write_token"), "{text}");
        }
        // Two words that happen to sit together stay words.
        assert_eq!(rule("Strategy momentum rebalanced into SOL and JUP"), None);
        assert_eq!(rule(&format!("pk: {}", "short")), None);
    }

    #[test]
    fn base58_of_64_bytes_that_is_not_a_keypair_passes() {
        // A transaction signature is 64 bytes too, but its halves are not a
        // seed and its public key.
        let mut signature = keypair_bytes(3);
        signature[40] ^= 1;
        let text = bs58::encode(&signature).into_string();
        assert_eq!(rule(&format!("signature {text}")), None);
        assert_eq!(rule(&format!("private key: {text}")), None);
        // A public key (32 bytes) with no secret label passes too.
        let public = bs58::encode(&keypair_bytes(3)[32..]).into_string();
        assert_eq!(rule(&format!("wallet {public}")), None);
    }

    #[test]
    fn card_numbers_with_dots_or_slashes_and_lowercase_ibans_are_refused() {
        for text in [
            "card 4111.1111.1111.1111",
            "card 4111/1111/1111/1111",
            "5500.0000.0000.0004 exp 12/29",
        ] {
            assert_eq!(rule(text), Some("card_number"), "{text}");
        }
        for text in ["iban gb82west12345698765432", "de89 3704 0044 0532 0130 00"] {
            assert_eq!(rule(text), Some("iban"), "{text}");
        }
        // Mixed separators are not how a card is written: version numbers,
        // dates and prices pass.
        for text in [
            "v4.111.1111/1111-1111",
            "price 4111.11",
            "on 2026/05/04 at 12.30",
        ] {
            assert_eq!(rule(text), None, "{text}");
        }
    }

    #[test]
    fn invisible_characters_do_not_hide_a_secret() {
        let token = "ff-write-token-for-tests-0123456789";
        for invisible in ['\u{200B}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{00AD}'] {
            let (a, b) = token.split_at(10);
            let split = format!("look: {a}{invisible}{b}");
            assert_eq!(rule(&split), Some("write_token"), "{split:?}");
            let aws = format!("key AKIA{invisible}IOSFODNN7EXAMPLE");
            assert_eq!(rule(&aws), Some("aws_key"), "{aws:?}");
        }
    }

    #[test]
    fn seed_words_with_a_bad_checksum_pass() {
        // Twelve BIP39 words, but the last word's checksum bits are wrong.
        let text = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon";
        assert_eq!(rule(text), None);
    }

    #[test]
    fn a_guard_without_a_token_still_checks_formats() {
        let guard = Guard::new(None);
        assert_eq!(guard.scan("ff-write-token-for-tests-0123456789"), None);
        assert_eq!(
            guard.scan("AKIAIOSFODNN7EXAMPLE"),
            Some(SensitiveRule::AwsKey)
        );
    }

    #[test]
    fn debug_never_shows_the_token() {
        assert!(!format!("{:?}", guard()).contains("ff-write-token"));
    }
}
