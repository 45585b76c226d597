//! Checkpoints (c2sp.org/tlog-checkpoint): the log's signed tree head.
//!
//! ```text
//! <origin>
//! <size>
//! <base64 root hash>
//!
//! — <key name> <base64(key ID || Ed25519 signature)>
//! ```

use super::note::{NoteError, SigningKey, VerifierKey};
use crate::merkle::{Digest, Head};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::sync::{Arc, Mutex};

/// A tree head named by the log's origin: the note text of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The log's name (a schema-less URL).
    pub origin: String,
    /// Number of leaves.
    pub size: u64,
    /// The Merkle Tree Hash of the `size` leaves.
    pub root: Digest,
}

impl Checkpoint {
    /// The checkpoint of `head` in the log named `origin`.
    pub fn of(origin: &str, head: Head) -> Checkpoint {
        Checkpoint {
            origin: origin.to_owned(),
            size: head.size,
            root: head.root_hash,
        }
    }

    /// The note text: origin, size and base64 root, each on its line.
    pub fn text(&self) -> String {
        format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            BASE64.encode(self.root.0)
        )
    }

    /// Reads a checkpoint's note text (extension lines after the third are
    /// allowed and ignored).
    pub fn parse(text: &str) -> Result<Checkpoint, NoteError> {
        let malformed = NoteError::Malformed;
        let mut lines = text.split('\n');
        let origin = lines
            .next()
            .filter(|o| !o.is_empty())
            .ok_or(malformed("no origin line"))?;
        let size = lines
            .next()
            .filter(|s| *s == "0" || !s.starts_with('0'))
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or(malformed(
                "the size is not a decimal without leading zeroes",
            ))?;
        let root: [u8; 32] = lines
            .next()
            .and_then(|r| BASE64.decode(r).ok())
            .and_then(|r| r.try_into().ok())
            .ok_or(malformed("the root is not a base64 SHA-256 hash"))?;
        Ok(Checkpoint {
            origin: origin.to_owned(),
            size,
            root: Digest(root),
        })
    }

    /// The checkpoint a signed note carries, if `verifier` signed it for
    /// its own origin.
    pub fn open(note: &str, verifier: &VerifierKey) -> Result<Checkpoint, NoteError> {
        let checkpoint = Checkpoint::parse(verifier.open(note)?)?;
        if checkpoint.origin != verifier.name() {
            return Err(NoteError::Malformed(
                "the origin is not the verifier key's name",
            ));
        }
        Ok(checkpoint)
    }
}

/// Signs the log's checkpoints. A head is signed once and its note kept
/// until the head moves (signing costs an Ed25519 signature; every
/// checkpoint and proof of the same head answers the same bytes).
#[derive(Debug)]
pub struct CheckpointSigner {
    key: SigningKey,
    latest: Mutex<Option<(Head, Arc<str>)>>,
}

impl CheckpointSigner {
    /// A signer with `key`, whose name is the log's origin.
    pub fn new(key: SigningKey) -> CheckpointSigner {
        CheckpointSigner {
            key,
            latest: Mutex::new(None),
        }
    }

    /// The log's origin.
    pub fn origin(&self) -> &str {
        self.key.name()
    }

    /// The verifier key readers check checkpoints with.
    pub fn verifier(&self) -> VerifierKey {
        self.key.verifier()
    }

    /// What a record must never carry: the key's secret encodings.
    pub fn secret_texts(&self) -> Vec<String> {
        self.key.secret_texts()
    }

    /// The signed checkpoint of `head`.
    pub fn sign(&self, head: Head) -> Arc<str> {
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((cached, note)) = latest.as_ref()
            && *cached == head
        {
            return Arc::clone(note);
        }
        let note: Arc<str> = self
            .key
            .sign(&Checkpoint::of(self.key.name(), head).text())
            .into();
        if latest
            .as_ref()
            .is_none_or(|(cached, _)| cached.size <= head.size)
        {
            *latest = Some((head, Arc::clone(&note)));
        }
        note
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merkle::leaf_hash;

    #[test]
    fn a_checkpoint_signs_and_opens_and_names_its_origin() {
        let key = SigningKey::from_seed("example.com/log", [1; 32]).unwrap();
        let signer = CheckpointSigner::new(key.clone());
        let head = Head {
            size: 3,
            root_hash: leaf_hash(b"x"),
        };
        let note = signer.sign(head);
        assert!(note.starts_with("example.com/log\n3\n"));
        assert!(note.contains("\n\n\u{2014} example.com/log "));
        let opened = Checkpoint::open(&note, &key.verifier()).unwrap();
        assert_eq!(opened, Checkpoint::of("example.com/log", head));
        assert!(
            Arc::ptr_eq(&note, &signer.sign(head)),
            "signed once per head"
        );
        assert!(Checkpoint::parse("log\n01\nAAAA\n").is_err());
    }
}
