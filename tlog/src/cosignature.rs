//! Witness cosignatures (c2sp.org/tlog-cosignature v1.1, `cosignature/v1`):
//! a witness's statement, at a time, that it checked a checkpoint is
//! consistent with every checkpoint of that log it cosigned before. Two
//! kinds of witness key sign them:
//!
//! ```text
//! Ed25519 (type 0x04):
//!   witness key:  <name>+<key ID>+<base64(0x04 || 32-byte public key)>
//!   key ID:       SHA-256(name || 0x0A || 0x04 || public key)[:4]
//!   signed:       "cosignature/v1\ntime <t>\n" || the checkpoint's note text
//!   signature:    — <name> <base64(key ID || 8-byte big-endian t || 64-byte signature)>
//! ML-DSA-44 (type 0x06, FIPS 204, empty context):
//!   witness key:  <name>+<key ID>+<base64(0x06 || 1312-byte public key)>
//!   key ID:       SHA-256(name || 0x0A || 0x06 || public key)[:4]
//!   signed:       "subtree/v1\n\0" || u8 len || name || u64 t || u8 len || origin
//!                 || u64 start (0) || u64 end (the size) || 32-byte root hash
//!   signature:    — <name> <base64(key ID || 8-byte big-endian t || 2420-byte signature)>
//! ```
//!
//! Like the reference implementation, a key written with the plain Ed25519
//! type byte (0x01) is read as the same key used for cosigning: its key ID
//! is then computed with 0x04. An ML-DSA-44 private key is its 32-byte seed
//! (`PRIVATE+KEY+<name>+<id>+<base64(0x06 || seed)>`), as the Go reference's
//! keys are; its signatures are hedged (FIPS 204's randomized variant).
//! Extension lines of a checkpoint are not covered by an ML-DSA-44
//! cosignature (the specification says so).

use super::checkpoint::Checkpoint;
use super::note::{ED25519, NoteError, PRIVATE_PREFIX, SIGNATURE_DASH, split_key, valid_name};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signer as _, Verifier as _};
use ml_dsa::MlDsa44;
use sha2::{Digest as _, Sha256};

/// The signature type of Ed25519 `cosignature/v1` in signed notes.
pub const COSIGNATURE_V1: u8 = 0x04;
/// The signature type of ML-DSA-44 `cosignature/v1` (FIPS 204).
pub const ML_DSA_44: u8 = 0x06;
/// An ML-DSA-44 public key's length in bytes.
const ML_DSA_44_PUBLIC_KEY: usize = 1312;
/// An ML-DSA-44 signature's length in bytes.
const ML_DSA_44_SIGNATURE: usize = 2420;
/// The label that starts an ML-DSA-44 cosignature's signed message.
const SUBTREE_LABEL: &[u8; 12] = b"subtree/v1\n\0";

/// `SHA-256(name || 0x0A || type || key)[:4]`.
fn typed_key_id(name: &str, key_type: u8, public_key: &[u8]) -> [u8; 4] {
    let mut hash = Sha256::new();
    hash.update(name.as_bytes());
    hash.update([b'\n', key_type]);
    hash.update(public_key);
    let digest = hash.finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}

/// The message an Ed25519 cosignature signs: the header and the checkpoint
/// text.
fn signed_message(time: u64, checkpoint_text: &str) -> Vec<u8> {
    let mut message = format!("cosignature/v1\ntime {time}\n").into_bytes();
    message.extend_from_slice(checkpoint_text.as_bytes());
    message
}

/// The message an ML-DSA-44 cosignature by `name` of `checkpoint` at `time`
/// signs (`cosigned_message`, a checkpoint: start 0, end its size); `None`
/// when the name or the origin is longer than 255 bytes.
fn cosigned_message(name: &str, time: u64, checkpoint: &Checkpoint) -> Option<Vec<u8>> {
    let name_length = u8::try_from(name.len()).ok()?;
    let origin_length = u8::try_from(checkpoint.origin.len()).ok()?;
    let mut message =
        Vec::with_capacity(12 + 1 + name.len() + 8 + 1 + checkpoint.origin.len() + 48);
    message.extend_from_slice(SUBTREE_LABEL);
    message.push(name_length);
    message.extend_from_slice(name.as_bytes());
    message.extend_from_slice(&time.to_be_bytes());
    message.push(origin_length);
    message.extend_from_slice(checkpoint.origin.as_bytes());
    message.extend_from_slice(&0u64.to_be_bytes());
    message.extend_from_slice(&checkpoint.size.to_be_bytes());
    message.extend_from_slice(&checkpoint.root.0);
    Some(message)
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
    /// Ed25519 `cosignature/v1`.
    Ed25519(ed25519_dalek::VerifyingKey),
    /// ML-DSA-44 `cosignature/v1`: the key's 1312 bytes as written.
    MlDsa44(Box<[u8; ML_DSA_44_PUBLIC_KEY]>),
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
            ML_DSA_44 => {
                let raw: [u8; ML_DSA_44_PUBLIC_KEY] = rest
                    .try_into()
                    .map_err(|_| NoteError::BadKey("an ML-DSA-44 key is not 1312 bytes"))?;
                if hex::encode(typed_key_id(name, ML_DSA_44, &raw)) != id {
                    return Err(NoteError::BadKey("the key ID does not match the key"));
                }
                WitnessPublicKey::MlDsa44(Box::new(raw))
            }
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

    /// The key's signature type: [`COSIGNATURE_V1`] (Ed25519) or
    /// [`ML_DSA_44`].
    pub fn key_type(&self) -> u8 {
        match &self.key {
            WitnessPublicKey::Ed25519(_) => COSIGNATURE_V1,
            WitnessPublicKey::MlDsa44(_) => ML_DSA_44,
        }
    }

    /// The key's public bytes, as its verifier encoding carries them
    /// after the type byte.
    fn public_bytes(&self) -> &[u8] {
        match &self.key {
            WitnessPublicKey::Ed25519(key) => key.as_bytes(),
            WitnessPublicKey::MlDsa44(key) => key.as_slice(),
        }
    }

    /// The key ID its signature lines carry.
    pub fn id(&self) -> [u8; 4] {
        typed_key_id(&self.name, self.key_type(), self.public_bytes())
    }

    /// Whether `other` holds the same public key, whatever its name: a
    /// signature does not cover the key's name, so one key under two names
    /// would count one witness twice.
    pub fn same_public_key(&self, other: &WitnessKey) -> bool {
        self.key == other.key
    }

    /// The key in its canonical verifier encoding (type 0x04 for Ed25519).
    pub fn to_text(&self) -> String {
        let mut data = vec![self.key_type()];
        data.extend_from_slice(self.public_bytes());
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
        let Ok(bytes) = BASE64.decode(encoded) else {
            return Ok(None);
        };
        if name != self.name || bytes.len() < 4 || bytes[..4] != self.id() {
            return Ok(None);
        }
        let bad = || NoteError::BadSignature(self.to_text());
        let body = &bytes[4..];
        let (time, signature) = body.split_at_checked(8).ok_or_else(bad)?;
        let time = u64::from_be_bytes(time.try_into().map_err(|_| bad())?);
        let verified = match &self.key {
            WitnessPublicKey::Ed25519(key) => ed25519_dalek::Signature::from_slice(signature)
                .is_ok_and(|signature| {
                    key.verify(&signed_message(time, checkpoint_text), &signature)
                        .is_ok()
                }),
            WitnessPublicKey::MlDsa44(key) => {
                let checkpoint = Checkpoint::parse(checkpoint_text)?;
                verify_ml_dsa_44(key, &self.name, time, &checkpoint, signature)
            }
        };
        if !verified {
            return Err(bad());
        }
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

/// Whether `signature` (2420 bytes) is `key`'s ML-DSA-44 signature, with
/// an empty context, of the cosigned message of `checkpoint` by `name` at
/// `time`.
fn verify_ml_dsa_44(
    key: &[u8; ML_DSA_44_PUBLIC_KEY],
    name: &str,
    time: u64,
    checkpoint: &Checkpoint,
    signature: &[u8],
) -> bool {
    if signature.len() != ML_DSA_44_SIGNATURE {
        return false;
    }
    let Some(message) = cosigned_message(name, time, checkpoint) else {
        return false;
    };
    let Ok(signature) = ml_dsa::EncodedSignature::<MlDsa44>::try_from(signature) else {
        return false;
    };
    let Some(signature) = ml_dsa::Signature::<MlDsa44>::decode(&signature) else {
        return false;
    };
    let Ok(key) = ml_dsa::EncodedVerifyingKey::<MlDsa44>::try_from(key.as_slice()) else {
        return false;
    };
    ml_dsa::VerifyingKey::<MlDsa44>::decode(&key).verify_with_context(&message, &[], &signature)
}

/// A witness's private key: cosigns checkpoints. Its `Debug` never shows
/// the seed.
#[derive(Clone)]
pub struct CosignerKey {
    name: String,
    key: PrivateKey,
}

/// The kinds of witness private key.
#[derive(Clone)]
enum PrivateKey {
    /// Ed25519, from its seed.
    Ed25519(ed25519_dalek::SigningKey),
    /// ML-DSA-44: its 32-byte seed (what the key file keeps) and the key
    /// expanded from it.
    MlDsa44([u8; 32], Box<ml_dsa::SigningKey<MlDsa44>>),
}

impl std::fmt::Debug for CosignerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CosignerKey")
            .field("name", &self.name)
            .field("key", &"[redacted]")
            .finish()
    }
}

/// A cosigning algorithm, as a witness's operator chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// Ed25519 (type 0x04).
    Ed25519,
    /// ML-DSA-44 (type 0x06), FIPS 204: secure against quantum computers.
    MlDsa44,
}

impl CosignerKey {
    /// An Ed25519 key named `name` from a 32-byte seed.
    pub fn from_seed(name: &str, seed: [u8; 32]) -> Result<CosignerKey, NoteError> {
        CosignerKey::from_seed_of(Algorithm::Ed25519, name, seed)
    }

    /// An `algorithm` key named `name` from a 32-byte seed.
    pub fn from_seed_of(
        algorithm: Algorithm,
        name: &str,
        seed: [u8; 32],
    ) -> Result<CosignerKey, NoteError> {
        if !valid_name(name) {
            return Err(NoteError::BadKey("the name is empty or has a space or '+'"));
        }
        let key = match algorithm {
            Algorithm::Ed25519 => PrivateKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(&seed)),
            Algorithm::MlDsa44 => PrivateKey::MlDsa44(
                seed,
                Box::new(ml_dsa::SigningKey::<MlDsa44>::from_seed(&seed.into())),
            ),
        };
        Ok(CosignerKey {
            name: name.to_owned(),
            key,
        })
    }

    /// A new Ed25519 key named `name` from the operating system's randomness.
    pub fn generate(name: &str) -> Result<CosignerKey, NoteError> {
        CosignerKey::generate_of(Algorithm::Ed25519, name)
    }

    /// A new `algorithm` key named `name` from the operating system's
    /// randomness.
    pub fn generate_of(algorithm: Algorithm, name: &str) -> Result<CosignerKey, NoteError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|_| NoteError::BadKey("no randomness"))?;
        CosignerKey::from_seed_of(algorithm, name, seed)
    }

    /// Parses `PRIVATE+KEY+<name>+<id>+<base64(type || seed)>`, type 0x04
    /// (or 0x01, read as the same key used for cosigning) or 0x06.
    pub fn parse(text: &str) -> Result<CosignerKey, NoteError> {
        let rest = text
            .trim()
            .strip_prefix(PRIVATE_PREFIX)
            .ok_or(NoteError::BadKey("it does not start with PRIVATE+KEY+"))?;
        let (name, _id, data) = split_key(rest)?;
        let bytes = BASE64
            .decode(data)
            .map_err(|_| NoteError::BadKey("the key data is not base64"))?;
        let (algorithm, seed) = match bytes.split_first() {
            Some((&(ED25519 | COSIGNATURE_V1), seed)) => (Algorithm::Ed25519, seed),
            Some((&ML_DSA_44, seed)) => (Algorithm::MlDsa44, seed),
            _ => {
                return Err(NoteError::BadKey(
                    "not a cosigning key (type 0x04, 0x01 or 0x06)",
                ));
            }
        };
        let seed = seed
            .try_into()
            .map_err(|_| NoteError::BadKey("the seed is not 32 bytes"))?;
        CosignerKey::from_seed_of(algorithm, name, seed)
    }

    /// The key's algorithm.
    pub fn algorithm(&self) -> Algorithm {
        match self.key {
            PrivateKey::Ed25519(_) => Algorithm::Ed25519,
            PrivateKey::MlDsa44(..) => Algorithm::MlDsa44,
        }
    }

    /// The signer encoding, type 0x04 or 0x06 (a secret: for the key file
    /// only).
    pub fn to_private_text(&self) -> String {
        let mut data = match &self.key {
            PrivateKey::Ed25519(key) => {
                let mut data = vec![COSIGNATURE_V1];
                data.extend_from_slice(key.as_bytes());
                data
            }
            PrivateKey::MlDsa44(seed, _) => {
                let mut data = vec![ML_DSA_44];
                data.extend_from_slice(seed);
                data
            }
        };
        let text = format!(
            "{PRIVATE_PREFIX}{}+{}+{}",
            self.name,
            hex::encode(self.witness_key().id()),
            BASE64.encode(&data)
        );
        data.fill(0);
        text
    }

    /// The verifier key a policy lists for this witness.
    pub fn witness_key(&self) -> WitnessKey {
        let key = match &self.key {
            PrivateKey::Ed25519(key) => WitnessPublicKey::Ed25519(key.verifying_key()),
            PrivateKey::MlDsa44(_, key) => {
                let encoded = key.expanded_key().verifying_key().encode();
                let mut raw = Box::new([0u8; ML_DSA_44_PUBLIC_KEY]);
                raw.copy_from_slice(encoded.as_slice());
                WitnessPublicKey::MlDsa44(raw)
            }
        };
        WitnessKey {
            name: self.name.clone(),
            key,
        }
    }

    /// The cosignature line (dash to newline) of `checkpoint_text` at
    /// `time` (seconds since the epoch). An ML-DSA-44 key signs the
    /// checkpoint's origin, size and root (its first three lines), so the
    /// text must be a checkpoint's.
    pub fn cosign(&self, checkpoint_text: &str, time: u64) -> Result<String, NoteError> {
        let mut signature = self.witness_key().id().to_vec();
        signature.extend_from_slice(&time.to_be_bytes());
        match &self.key {
            PrivateKey::Ed25519(key) => signature
                .extend_from_slice(&key.sign(&signed_message(time, checkpoint_text)).to_bytes()),
            PrivateKey::MlDsa44(_, key) => {
                let checkpoint = Checkpoint::parse(checkpoint_text)?;
                let message = cosigned_message(&self.name, time, &checkpoint)
                    .ok_or(NoteError::Malformed("the origin is longer than 255 bytes"))?;
                let mut randomness = [0u8; 32];
                getrandom::fill(&mut randomness).map_err(|_| NoteError::BadKey("no randomness"))?;
                // FIPS 204's ML-DSA.Sign with an empty context: M' = 0 || 0 || M.
                let signed = key
                    .expanded_key()
                    .sign_internal(&[&[0, 0], &message], &randomness.into());
                signature.extend_from_slice(signed.encode().as_slice());
            }
        }
        Ok(format!(
            "{SIGNATURE_DASH} {} {}\n",
            self.name,
            BASE64.encode(signature)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECKPOINT: &str = "example.com/log\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";

    #[test]
    fn a_cosignature_verifies_under_its_key_only_and_only_unaltered() {
        let key = CosignerKey::from_seed("w1.example", [3; 32]).unwrap();
        let line = key.cosign(CHECKPOINT, 1_700_000_000).unwrap();
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

    /// An ML-DSA-44 cosignature verifies under its key only, over the
    /// checkpoint it signed only; a flipped bit of the signature fails.
    #[test]
    fn an_ml_dsa_44_cosignature_verifies_and_a_forged_one_fails() {
        let key = CosignerKey::from_seed_of(Algorithm::MlDsa44, "pq.example", [7; 32]).unwrap();
        let line = key.cosign(CHECKPOINT, 1_700_000_000).unwrap();
        let witness = key.witness_key();
        assert_eq!(witness.key_type(), ML_DSA_44);
        let found = witness.cosignatures_in(CHECKPOINT, &line).unwrap();
        assert_eq!((found.len(), found[0].time), (1, 1_700_000_000));
        // Extension lines are not signed by an ML-DSA-44 cosignature.
        let extended = format!("{CHECKPOINT}an extension\n");
        assert_eq!(witness.cosignatures_in(&extended, &line).unwrap().len(), 1);
        let altered = CHECKPOINT.replace("\n3\n", "\n4\n");
        assert!(witness.cosignatures_in(&altered, &line).is_err());
        let (head, encoded) = line.trim_end().rsplit_once(' ').unwrap();
        let mut bytes = BASE64.decode(encoded).unwrap();
        bytes[100] ^= 1;
        let forged = format!("{head} {}\n", BASE64.encode(&bytes));
        assert!(witness.cosignatures_in(CHECKPOINT, &forged).is_err());
        let truncated = format!("{head} {}\n", BASE64.encode(&bytes[..200]));
        assert!(witness.cosignatures_in(CHECKPOINT, &truncated).is_err());
        // Another ML-DSA-44 key's line, and an Ed25519 key's, are ignored.
        let other = CosignerKey::from_seed_of(Algorithm::MlDsa44, "pq.example", [8; 32]).unwrap();
        assert!(
            other
                .witness_key()
                .cosignatures_in(CHECKPOINT, &line)
                .unwrap()
                .is_empty()
        );
        let ed = CosignerKey::from_seed("pq.example", [7; 32]).unwrap();
        assert!(
            ed.witness_key()
                .cosignatures_in(CHECKPOINT, &line)
                .unwrap()
                .is_empty()
        );
        // Keys round-trip through their texts; the private text is the seed.
        let again = CosignerKey::parse(&key.to_private_text()).unwrap();
        assert_eq!(again.witness_key(), witness);
        assert_eq!(again.algorithm(), Algorithm::MlDsa44);
        assert_eq!(WitnessKey::parse(&witness.to_text()).unwrap(), witness);
        let mut bad_id = witness.to_text();
        bad_id.replace_range(
            bad_id.find('+').unwrap() + 1..bad_id.find('+').unwrap() + 9,
            "00000000",
        );
        assert!(WitnessKey::parse(&bad_id).is_err());
        assert!(!format!("{key:?}").contains(&key.to_private_text()[30..]));
    }

    /// The vector made by another implementation (OpenSSL's ML-DSA through
    /// Python's cryptography, scripts/mldsa-cosignature.py): the same seed
    /// gives the same verifier key here, its cosignature verifies, and the
    /// same line over another size fails.
    #[test]
    fn another_implementation_s_ml_dsa_44_cosignature_verifies() {
        let vector = include_str!("../tests/vectors/mldsa44-cosignature.txt");
        let mut lines = vector.lines().filter(|l| !l.starts_with('#'));
        let seed: [u8; 32] = hex::decode(lines.next().unwrap())
            .unwrap()
            .try_into()
            .unwrap();
        let vkey = lines.next().unwrap();
        let note: Vec<&str> = lines.collect();
        let checkpoint = format!("{}\n", note[..3].join("\n"));
        let signature = note[4];
        let ours = CosignerKey::from_seed_of(Algorithm::MlDsa44, "example.com/pq", seed).unwrap();
        assert_eq!(ours.witness_key().to_text(), vkey);
        let witness = WitnessKey::parse(vkey).unwrap();
        let found = witness.cosignatures_in(&checkpoint, signature).unwrap();
        assert_eq!((found.len(), found[0].time), (1, 1_679_315_147));
        let other_size = checkpoint.replace("20852163", "20852164");
        assert!(witness.cosignatures_in(&other_size, signature).is_err());
    }
}
