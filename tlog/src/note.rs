//! Signed notes (c2sp.org/signed-note) with Ed25519 keys: the log's signing
//! key and its verifier key in the note encodings, and signing and
//! verifying a note.
//!
//! ```text
//! signer key:    PRIVATE+KEY+<name>+<key ID, 8 hex>+<base64(0x01 || 32-byte seed)>
//! verifier key:  <name>+<key ID, 8 hex>+<base64(0x01 || 32-byte public key)>
//! key ID:        SHA-256(name || 0x0A || 0x01 || public key)[:4]
//! signature:     — <name> <base64(key ID || Ed25519 signature of the note text)>
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signer as _, Verifier as _};
use sha2::{Digest as _, Sha256};

/// The signature type byte of Ed25519 in signed notes.
pub(crate) const ED25519: u8 = 0x01;
/// The prefix of a signer key's text.
pub(crate) const PRIVATE_PREFIX: &str = "PRIVATE+KEY+";
/// The em dash that starts a signature line (U+2014).
pub(crate) const SIGNATURE_DASH: &str = "\u{2014}";

/// Why a key or a note could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    /// The key's text is not in the signed-note encoding.
    #[error("the key is not a signed-note Ed25519 key ({0})")]
    BadKey(&'static str),
    /// The note is not a signed note.
    #[error("the note is malformed ({0})")]
    Malformed(&'static str),
    /// No signature by the given key is on the note.
    #[error("the note carries no signature by the verifier key {0}")]
    NotSignedBy(String),
    /// A signature by the key is on the note but does not verify.
    #[error("the note's signature by {0} does not verify")]
    BadSignature(String),
}

/// A key name: non-empty, no Unicode spaces, no `+`.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c == '+')
}

/// `SHA-256(name || 0x0A || 0x01 || public key)[:4]`.
pub(crate) fn key_id(name: &str, public_key: &[u8; 32]) -> [u8; 4] {
    let mut hash = Sha256::new();
    hash.update(name.as_bytes());
    hash.update([b'\n', ED25519]);
    hash.update(public_key);
    let digest = hash.finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}

/// The log's signing key. Its `Debug` never shows the seed.
#[derive(Clone)]
pub struct SigningKey {
    name: String,
    key: ed25519_dalek::SigningKey,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("name", &self.name)
            .field("key", &"[redacted]")
            .finish()
    }
}

impl SigningKey {
    /// A key named `name` from a 32-byte seed.
    pub fn from_seed(name: &str, seed: [u8; 32]) -> Result<SigningKey, NoteError> {
        if !valid_name(name) {
            return Err(NoteError::BadKey("the name is empty or has a space or '+'"));
        }
        Ok(SigningKey {
            name: name.to_owned(),
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
        })
    }

    /// A new key named `name` from the operating system's randomness.
    pub fn generate(name: &str) -> Result<SigningKey, NoteError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|_| NoteError::BadKey("no randomness"))?;
        SigningKey::from_seed(name, seed)
    }

    /// Parses the signer encoding `PRIVATE+KEY+<name>+<id>+<base64>`; the
    /// ID must be the key's own.
    pub fn parse(text: &str) -> Result<SigningKey, NoteError> {
        let rest = text
            .trim()
            .strip_prefix(PRIVATE_PREFIX)
            .ok_or(NoteError::BadKey("it does not start with PRIVATE+KEY+"))?;
        let (name, id, data) = split_key(rest)?;
        let seed: [u8; 32] = typed_key(data)?;
        let key = SigningKey::from_seed(name, seed)?;
        if hex::encode(key.id()) != id {
            return Err(NoteError::BadKey("the key ID does not match the key"));
        }
        Ok(key)
    }

    /// The signer encoding (a secret: for the key file only).
    pub fn to_private_text(&self) -> String {
        format!(
            "{PRIVATE_PREFIX}{}+{}+{}",
            self.name,
            hex::encode(self.id()),
            self.seed_text()
        )
    }

    /// The base64 of the type byte and the seed: the private text's last
    /// part (which may itself hold '+', base64's 62nd digit).
    fn seed_text(&self) -> String {
        let mut data = vec![ED25519];
        data.extend_from_slice(self.key.as_bytes());
        BASE64.encode(data)
    }

    /// The key's name (the log's origin).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key ID.
    pub fn id(&self) -> [u8; 4] {
        key_id(&self.name, self.key.verifying_key().as_bytes())
    }

    /// The verifier key for this key.
    pub fn verifier(&self) -> VerifierKey {
        VerifierKey {
            name: self.name.clone(),
            key: self.key.verifying_key(),
        }
    }

    /// `text` (a note text ending in a newline) signed: the text, a blank
    /// line and this key's signature line.
    pub fn sign(&self, text: &str) -> String {
        let mut signature = self.id().to_vec();
        signature.extend_from_slice(&self.key.sign(text.as_bytes()).to_bytes());
        format!(
            "{text}\n{SIGNATURE_DASH} {} {}\n",
            self.name,
            BASE64.encode(signature)
        )
    }

    /// The secrets of this key a record must never carry: its signer
    /// encoding and the base64 of its seed alone.
    pub fn secret_texts(&self) -> Vec<String> {
        vec![self.to_private_text(), self.seed_text()]
    }
}

/// A verifier key: the log's name and Ed25519 public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifierKey {
    name: String,
    key: ed25519_dalek::VerifyingKey,
}

impl VerifierKey {
    /// Parses `<name>+<id>+<base64(0x01 || public key)>`; the ID must be the
    /// key's own.
    pub fn parse(text: &str) -> Result<VerifierKey, NoteError> {
        let (name, id, data) = split_key(text.trim())?;
        if !valid_name(name) {
            return Err(NoteError::BadKey("the name is empty or has a space or '+'"));
        }
        let bytes: [u8; 32] = typed_key(data)?;
        let key = ed25519_dalek::VerifyingKey::from_bytes(&bytes)
            .map_err(|_| NoteError::BadKey("not an Ed25519 public key"))?;
        let parsed = VerifierKey {
            name: name.to_owned(),
            key,
        };
        if hex::encode(parsed.id()) != id {
            return Err(NoteError::BadKey("the key ID does not match the key"));
        }
        Ok(parsed)
    }

    /// The key's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key ID.
    pub fn id(&self) -> [u8; 4] {
        key_id(&self.name, self.key.as_bytes())
    }

    /// The verifier encoding.
    pub fn to_text(&self) -> String {
        let mut data = vec![ED25519];
        data.extend_from_slice(self.key.as_bytes());
        format!(
            "{}+{}+{}",
            self.name,
            hex::encode(self.id()),
            BASE64.encode(data)
        )
    }

    /// The text of `note` if it carries a valid signature by this key
    /// (other signatures, such as witnesses' cosignatures, are ignored).
    pub fn open<'a>(&self, note: &'a str) -> Result<&'a str, NoteError> {
        let (text, signatures) = split_note(note)?;
        let id = self.id();
        let mut found = false;
        for (name, encoded) in signatures {
            let bytes = BASE64
                .decode(encoded)
                .map_err(|_| NoteError::Malformed("a signature is not base64"))?;
            if name != self.name || bytes.len() < 4 || bytes[..4] != id {
                continue;
            }
            found = true;
            let signature = ed25519_dalek::Signature::from_slice(&bytes[4..])
                .map_err(|_| NoteError::BadSignature(self.name.clone()))?;
            self.key
                .verify(text.as_bytes(), &signature)
                .map_err(|_| NoteError::BadSignature(self.name.clone()))?;
        }
        if found {
            Ok(text)
        } else {
            Err(NoteError::NotSignedBy(self.to_text()))
        }
    }
}

/// A note's text and its signature lines as `(name, base64 signature)`.
pub type SplitNote<'a> = (&'a str, Vec<(&'a str, &'a str)>);

/// A note cut at its blank line: the text (ending in a newline) and its
/// signature lines, each without its dash, as `(name, base64 signature)`.
/// Control characters other than newline, lines without their dash and a
/// last line without its newline are malformed.
pub fn split_note(note: &str) -> Result<SplitNote<'_>, NoteError> {
    if note.chars().any(|c| c.is_control() && c != '\n') {
        return Err(NoteError::Malformed("a control character"));
    }
    let split = note
        .find("\n\n")
        .ok_or(NoteError::Malformed("no blank line before the signatures"))?;
    let (text, signatures) = (&note[..split + 1], &note[split + 2..]);
    if !signatures.ends_with('\n') {
        return Err(NoteError::Malformed(
            "the signatures do not end in a newline",
        ));
    }
    signatures
        .lines()
        .map(|line| {
            line.strip_prefix(SIGNATURE_DASH)
                .and_then(|l| l.strip_prefix(' '))
                .ok_or(NoteError::Malformed("a signature line without its dash"))?
                .split_once(' ')
                .filter(|(name, encoded)| valid_name(name) && !encoded.is_empty())
                .ok_or(NoteError::Malformed(
                    "a signature line without a name and a signature",
                ))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|lines| (text, lines))
}

/// Splits `<name>+<id>+<data>` (the name may not contain `+`).
pub(crate) fn split_key(text: &str) -> Result<(&str, &str, &str), NoteError> {
    let mut parts = text.splitn(3, '+');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(name), Some(id), Some(data))
            if id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit()) =>
        {
            Ok((name, id, data))
        }
        _ => Err(NoteError::BadKey("expected <name>+<8 hex digits>+<base64>")),
    }
}

/// The 32 key bytes after the Ed25519 type byte in `data` (base64).
fn typed_key(data: &str) -> Result<[u8; 32], NoteError> {
    let bytes = BASE64
        .decode(data)
        .map_err(|_| NoteError::BadKey("the key data is not base64"))?;
    match bytes.split_first() {
        Some((&ED25519, rest)) => rest
            .try_into()
            .map_err(|_| NoteError::BadKey("the key is not 32 bytes")),
        _ => Err(NoteError::BadKey("not an Ed25519 key (type 0x01)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Base64 has '+' in its alphabet: the seed's text must be taken whole,
    /// not cut at its last '+' (a few characters the guard would then find
    /// in innocent records).
    #[test]
    fn the_secret_texts_hold_the_whole_seed_whatever_its_base64() {
        let mut with_plus = 0;
        for byte in 0..=255u8 {
            let key = SigningKey::from_seed("freedom-fund.local/log", [byte; 32]).unwrap();
            let private = key.to_private_text();
            let encoded = private.splitn(5, '+').nth(4).unwrap().to_owned();
            with_plus += usize::from(encoded.contains('+'));
            assert_eq!(key.secret_texts(), vec![private, encoded.clone()]);
            assert_eq!(encoded.len(), 44, "0x01 and 32 bytes, base64");
        }
        assert!(with_plus > 0, "some seeds' base64 holds a '+'");
    }

    fn key() -> SigningKey {
        SigningKey::from_seed("freedom-fund.local/log", [7; 32]).unwrap()
    }

    #[test]
    fn keys_round_trip_through_their_encodings() {
        let key = key();
        let again = SigningKey::parse(&key.to_private_text()).unwrap();
        assert_eq!(again.to_private_text(), key.to_private_text());
        let verifier = VerifierKey::parse(&key.verifier().to_text()).unwrap();
        assert_eq!(verifier, key.verifier());
        assert!(
            key.to_private_text()
                .starts_with("PRIVATE+KEY+freedom-fund.local/log+")
        );
        assert!(!format!("{key:?}").contains(&key.to_private_text()[40..]));
    }

    #[test]
    fn a_key_whose_id_does_not_match_is_refused() {
        let text = key().verifier().to_text();
        let (name, rest) = text.split_once('+').unwrap();
        let forged = format!("{name}+00000000{}", &rest[8..]);
        assert_eq!(
            VerifierKey::parse(&forged),
            Err(NoteError::BadKey("the key ID does not match the key"))
        );
        assert!(SigningKey::parse("PRIVATE+KEY+x+zz+AAAA").is_err());
    }

    #[test]
    fn a_signed_note_opens_only_with_its_key_and_only_unaltered() {
        let key = key();
        let note = key.sign("freedom-fund.local/log\n1\nAAAA\n");
        assert_eq!(
            key.verifier().open(&note).unwrap(),
            "freedom-fund.local/log\n1\nAAAA\n"
        );
        let other = SigningKey::from_seed("freedom-fund.local/log", [8; 32]).unwrap();
        assert!(matches!(
            other.verifier().open(&note),
            Err(NoteError::NotSignedBy(_))
        ));
        let altered = note.replacen("\n1\n", "\n2\n", 1);
        assert!(matches!(
            key.verifier().open(&altered),
            Err(NoteError::BadSignature(_))
        ));
    }
}
