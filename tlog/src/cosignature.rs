//! Witness cosignatures (c2sp.org/tlog-cosignature, `cosignature/v1`): a
//! witness's statement, at a time, that it checked a checkpoint is
//! consistent with every checkpoint of that log it cosigned before.
//!
//! ```text
//! witness key:   <name>+<key ID, 8 hex>+<base64(0x04 || 32-byte Ed25519 public key)>
//! key ID:        SHA-256(name || 0x0A || 0x04 || public key)[:4]
//! signed:        "cosignature/v1\ntime <t>\n" || the checkpoint's note text
//! signature:     — <name> <base64(key ID || 8-byte big-endian t || Ed25519 signature)>
//! ```
//!
//! Like the reference implementation, a key written with the plain Ed25519
//! type byte (0x01) is read as the same key used for cosigning: its key ID
//! is then computed with 0x04. ML-DSA-44 keys (type 0x06) are read so a
//! policy may list them, but no maintained crate verifies their
//! signatures here, so their lines are ignored as from an unknown key.

use super::note::{ED25519, NoteError, PRIVATE_PREFIX, SIGNATURE_DASH, split_key, valid_name};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signer as _, Verifier as _};
use sha2::{Digest as _, Sha256};

/// The signature type of Ed25519 `cosignature/v1` in signed notes.
pub const COSIGNATURE_V1: u8 = 0x04;
/// The signature type of ML-DSA-44 cosignatures (read, never verified).
pub const ML_DSA_44: u8 = 0x06;

/// `SHA-256(name || 0x0A || type || key)[:4]`.
fn typed_key_id(name: &str, key_type: u8, public_key: &[u8]) -> [u8; 4] {
    let mut hash = Sha256::new();
    hash.update(name.as_bytes());
    hash.update([b'\n', key_type]);
    hash.update(public_key);
    let digest = hash.finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}

/// The message a cosignature signs: the header and the checkpoint text.
fn signed_message(time: u64, checkpoint_text: &str) -> Vec<u8> {
    let mut message = format!("cosignature/v1\ntime {time}\n").into_bytes();
    message.extend_from_slice(checkpoint_text.as_bytes());
    message
}

/// The public half of a witness's key, as a policy names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WitnessKey {
    name: String,
    key: WitnessPublicKey,
}

/// The kinds of witness key a policy may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
enum WitnessPublicKey {
    /// Ed25519 `cosignature/v1`: verified.
    Ed25519(ed25519_dalek::VerifyingKey),
    /// ML-DSA-44 (its key bytes): listed, never verified.
    MlDsa44(Vec<u8>),
}

/// A cosignature that verified: who made it and when (seconds since the
/// epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cosignature {
    /// The signature line as it goes in the note (with its dash and newline).
    pub line: String,
    /// The time the witness says it cosigned, in seconds since the epoch.
    pub time: u64,
}

impl WitnessKey {
    /// Parses a witness's verifier key (`<name>+<id>+<base64>`, type 0x04,
    /// 0x01 read as 0x04, or 0x06); the ID must be the key's own.
    pub fn parse(text: &str) -> Result<WitnessKey, NoteError> {
        let (name, id, data) = split_key(text.trim())?;
        if !valid_name(name) {
            return Err(NoteError::BadKey("the name is empty or has a space or '+'"));
        }
        let bytes = BASE64
            .decode(data)
            .map_err(|_| NoteError::BadKey("the key data is not base64"))?;
        let (&key_type, rest) = bytes
            .split_first()
            .ok_or(NoteError::BadKey("the key data is empty"))?;
        let key = match key_type {
            ED25519 | COSIGNATURE_V1 => {
                let raw: [u8; 32] = rest
                    .try_into()
                    .map_err(|_| NoteError::BadKey("the key is not 32 bytes"))?;
                let expected = [
                    typed_key_id(name, COSIGNATURE_V1, &raw),
                    typed_key_id(name, key_type, &raw),
                ];
                if !expected.iter().any(|e| hex::encode(e) == id) {
                    return Err(NoteError::BadKey("the key ID does not match the key"));
                }
                WitnessPublicKey::Ed25519(
                    ed25519_dalek::VerifyingKey::from_bytes(&raw)
                        .map_err(|_| NoteError::BadKey("not an Ed25519 public key"))?,
                )
            }
            ML_DSA_44 if rest.len() == 1312 => WitnessPublicKey::MlDsa44(rest.to_vec()),
            _ => {
                return Err(NoteError::BadKey(
                    "not a cosignature key (type 0x04, 0x01 or 0x06)",
                ));
            }
        };
        Ok(WitnessKey {
            name: name.to_owned(),
            key,
        })
    }

    /// The key's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key ID its signature lines carry.
    pub fn id(&self) -> [u8; 4] {
        match &self.key {
            WitnessPublicKey::Ed25519(key) => {
                typed_key_id(&self.name, COSIGNATURE_V1, key.as_bytes())
            }
            WitnessPublicKey::MlDsa44(key) => typed_key_id(&self.name, ML_DSA_44, key),
        }
    }

    /// Whether `other` holds the same public key, whatever its name: a
    /// signature does not cover the key's name, so one key under two names
    /// would count one witness twice.
    pub fn same_public_key(&self, other: &WitnessKey) -> bool {
        self.key == other.key
    }

    /// Whether cosignatures by this key can be verified here.
    pub fn verifiable(&self) -> bool {
        matches!(self.key, WitnessPublicKey::Ed25519(_))
    }

    /// The key in its canonical verifier encoding (type 0x04 for Ed25519).
    pub fn to_text(&self) -> String {
        let mut data = Vec::new();
        match &self.key {
            WitnessPublicKey::Ed25519(key) => {
                data.push(COSIGNATURE_V1);
                data.extend_from_slice(key.as_bytes());
            }
            WitnessPublicKey::MlDsa44(key) => {
                data.push(ML_DSA_44);
                data.extend_from_slice(key);
            }
        }
        format!(
            "{}+{}+{}",
            self.name,
            hex::encode(self.id()),
            BASE64.encode(data)
        )
    }

    /// `line` (a signature line, with or without its dash and newline) as a
    /// cosignature of `checkpoint_text` by this key: `None` when the line
    /// is not by this key (another name or key ID), an error when it is by
    /// this key and does not verify.
    pub fn verify_line(
        &self,
        checkpoint_text: &str,
        name: &str,
        encoded: &str,
    ) -> Result<Option<Cosignature>, NoteError> {
        let WitnessPublicKey::Ed25519(key) = &self.key else {
            return Ok(None);
        };
        let Ok(bytes) = BASE64.decode(encoded) else {
            return Ok(None);
        };
        if name != self.name || bytes.len() < 4 || bytes[..4] != self.id() {
            return Ok(None);
        }
        let bad = || NoteError::BadSignature(self.to_text());
        let body = &bytes[4..];
        if body.len() != 8 + 64 {
            return Err(bad());
        }
        let time = u64::from_be_bytes(body[..8].try_into().map_err(|_| bad())?);
        let signature = ed25519_dalek::Signature::from_slice(&body[8..]).map_err(|_| bad())?;
        key.verify(&signed_message(time, checkpoint_text), &signature)
            .map_err(|_| bad())?;
        Ok(Some(Cosignature {
            line: format!("{SIGNATURE_DASH} {name} {encoded}\n"),
            time,
        }))
    }

    /// The cosignatures by this key among `lines` (signature lines, dash and
    /// all, as a witness answers them) over `checkpoint_text`: lines by
    /// other keys are ignored, one by this key that does not verify is an
    /// error.
    pub fn cosignatures_in(
        &self,
        checkpoint_text: &str,
        lines: &str,
    ) -> Result<Vec<Cosignature>, NoteError> {
        let mut found = Vec::new();
        for line in lines.lines().filter(|l| !l.is_empty()) {
            let (name, encoded) = line
                .strip_prefix(SIGNATURE_DASH)
                .and_then(|l| l.strip_prefix(' '))
                .and_then(|l| l.split_once(' '))
                .ok_or(NoteError::Malformed("a signature line without its dash"))?;
            if let Some(cosignature) = self.verify_line(checkpoint_text, name, encoded)? {
                found.push(cosignature);
            }
        }
        Ok(found)
    }
}

/// A witness's private key: cosigns checkpoints. Its `Debug` never shows
/// the seed.
#[derive(Clone)]
pub struct CosignerKey {
    name: String,
    key: ed25519_dalek::SigningKey,
}

impl std::fmt::Debug for CosignerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CosignerKey")
            .field("name", &self.name)
            .field("key", &"[redacted]")
            .finish()
    }
}

impl CosignerKey {
    /// A key named `name` from a 32-byte seed.
    pub fn from_seed(name: &str, seed: [u8; 32]) -> Result<CosignerKey, NoteError> {
        if !valid_name(name) {
            return Err(NoteError::BadKey("the name is empty or has a space or '+'"));
        }
        Ok(CosignerKey {
            name: name.to_owned(),
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
        })
    }

    /// A new key named `name` from the operating system's randomness.
    pub fn generate(name: &str) -> Result<CosignerKey, NoteError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|_| NoteError::BadKey("no randomness"))?;
        CosignerKey::from_seed(name, seed)
    }

    /// Parses `PRIVATE+KEY+<name>+<id>+<base64(type || seed)>`, type 0x04
    /// (or 0x01, read as the same key used for cosigning).
    pub fn parse(text: &str) -> Result<CosignerKey, NoteError> {
        let rest = text
            .trim()
            .strip_prefix(PRIVATE_PREFIX)
            .ok_or(NoteError::BadKey("it does not start with PRIVATE+KEY+"))?;
        let (name, _id, data) = split_key(rest)?;
        let bytes = BASE64
            .decode(data)
            .map_err(|_| NoteError::BadKey("the key data is not base64"))?;
        match bytes.split_first() {
            Some((&(ED25519 | COSIGNATURE_V1), seed)) => CosignerKey::from_seed(
                name,
                seed.try_into()
                    .map_err(|_| NoteError::BadKey("the seed is not 32 bytes"))?,
            ),
            _ => Err(NoteError::BadKey("not an Ed25519 key (type 0x04 or 0x01)")),
        }
    }

    /// The signer encoding, type 0x04 (a secret: for the key file only).
    pub fn to_private_text(&self) -> String {
        let mut data = vec![COSIGNATURE_V1];
        data.extend_from_slice(self.key.as_bytes());
        format!(
            "{PRIVATE_PREFIX}{}+{}+{}",
            self.name,
            hex::encode(self.witness_key().id()),
            BASE64.encode(data)
        )
    }

    /// The verifier key a policy lists for this witness.
    pub fn witness_key(&self) -> WitnessKey {
        WitnessKey {
            name: self.name.clone(),
            key: WitnessPublicKey::Ed25519(self.key.verifying_key()),
        }
    }

    /// The cosignature line (dash to newline) of `checkpoint_text` at
    /// `time` (seconds since the epoch).
    pub fn cosign(&self, checkpoint_text: &str, time: u64) -> String {
        let mut signature = self.witness_key().id().to_vec();
        signature.extend_from_slice(&time.to_be_bytes());
        signature.extend_from_slice(
            &self
                .key
                .sign(&signed_message(time, checkpoint_text))
                .to_bytes(),
        );
        format!(
            "{SIGNATURE_DASH} {} {}\n",
            self.name,
            BASE64.encode(signature)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECKPOINT: &str = "example.com/log\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";

    #[test]
    fn a_cosignature_verifies_under_its_key_only_and_only_unaltered() {
        let key = CosignerKey::from_seed("w1.example", [3; 32]).unwrap();
        let line = key.cosign(CHECKPOINT, 1_700_000_000);
        let found = key
            .witness_key()
            .cosignatures_in(CHECKPOINT, &line)
            .unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].time, 1_700_000_000);
        assert_eq!(found[0].line, line);
        let other = CosignerKey::from_seed("w1.example", [4; 32]).unwrap();
        assert!(
            other
                .witness_key()
                .cosignatures_in(CHECKPOINT, &line)
                .unwrap()
                .is_empty(),
            "another key's line is ignored (its key ID differs)"
        );
        let altered = CHECKPOINT.replace("\n3\n", "\n4\n");
        assert!(key.witness_key().cosignatures_in(&altered, &line).is_err());
    }

    #[test]
    fn keys_round_trip_and_a_plain_ed25519_key_reads_as_a_cosigning_key() {
        let key = CosignerKey::from_seed("w1.example", [5; 32]).unwrap();
        let again = CosignerKey::parse(&key.to_private_text()).unwrap();
        assert_eq!(again.witness_key(), key.witness_key());
        let text = key.witness_key().to_text();
        assert_eq!(WitnessKey::parse(&text).unwrap(), key.witness_key());
        let plain = crate::note::SigningKey::from_seed("w1.example", [5; 32])
            .unwrap()
            .verifier()
            .to_text();
        assert_eq!(WitnessKey::parse(&plain).unwrap(), key.witness_key());
        assert!(WitnessKey::parse("w1+00000000+AAAA").is_err());
        assert!(!format!("{key:?}").contains(&key.to_private_text()[30..]));
    }
}
