//! Never two histories: the signer signs a head only after checking it
//! extends the largest checkpoint it has signed before, as remembered
//! apart from the ledger ([`SignerMemory`]), and remembers the new head
//! before anything signed of it is served.
//!
//! A store that lost its head, was restored from an older backup, was
//! emptied or replaced, or forked, answers a head that is smaller than the
//! remembered checkpoint, or of the same size with another root, or larger
//! but not consistent with it (a consistency proof from the remembered
//! size to the head, from the store's own tiles, does not verify). In
//! every such case nothing is signed: checkpoints and proofs fail
//! ([`super::LogError::RefusedToSign`], a 500), an error-level log line and
//! a `log.refused_to_sign` event say why (once per head and memory), and
//! everything that signs nothing (appends, tiles, the ledger, the
//! dashboard) keeps working.

use crate::merkle::{Digest, Head};
use crate::ports::event_sink::{Events, OutsideEvent};
use crate::ports::signer_memory::SignerMemory;
use crate::tlog::checkpoint::Checkpoint;
use crate::tlog::note::VerifierKey;
use std::sync::{Arc, Mutex};

/// How often a signer retries when other signers move the memory under it.
pub(super) const MAX_ATTEMPTS: usize = 8;

/// The event a refusal publishes (its `detail-type`).
pub const REFUSED_TO_SIGN: &str = "log.refused_to_sign";

/// A checkpoint the signer remembers: its note as stored, and what it says.
#[derive(Debug, Clone)]
pub(super) struct Remembered {
    /// The note text as the memory holds it (the compare-and-swap's key).
    pub(super) note: String,
    /// Its size and root.
    pub(super) head: Head,
}

/// What the signer knows of its memory in this process.
#[derive(Debug, Default)]
struct Known {
    /// The remembered checkpoint as last read or written; outer `None`:
    /// not read yet (or to be read again).
    remembered: Option<Option<Remembered>>,
    /// The newest head checked to extend it and remembered.
    vouched: Option<Head>,
    /// The last refusal logged and published, so each is reported once.
    reported: Option<(Head, Option<Head>)>,
}

/// The signer's memory and what this process knows of it.
pub(super) struct Custody {
    memory: Arc<dyn SignerMemory>,
    events: Events,
    known: Mutex<Known>,
}

impl std::fmt::Debug for Custody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Custody")
            .field("memory", &self.memory.describe())
            .finish_non_exhaustive()
    }
}

/// Why the signer will not sign a head.
#[derive(Debug, Clone)]
pub(super) struct Refusal {
    /// The head it was asked to sign.
    pub(super) head: Head,
    /// The checkpoint it remembers, when it could read one.
    pub(super) remembered: Option<Head>,
    /// Why, in a sentence.
    pub(super) reason: String,
}

impl Custody {
    pub(super) fn new(memory: Arc<dyn SignerMemory>, events: Events) -> Custody {
        Custody {
            memory,
            events,
            known: Mutex::new(Known::default()),
        }
    }

    /// The same custody keeping its memory in `memory`.
    pub(super) fn with_memory(self, memory: Arc<dyn SignerMemory>) -> Custody {
        Custody::new(memory, self.events)
    }

    /// The same custody reporting refusals to `events`.
    pub(super) fn with_events(self, events: Events) -> Custody {
        Custody::new(self.memory, events)
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where the memory is, in words.
    pub(super) fn describe(&self) -> String {
        self.memory.describe()
    }

    /// Whether `head` was already checked and remembered.
    pub(super) fn vouched(&self, head: Head) -> bool {
        self.known().vouched == Some(head)
    }

    /// The remembered checkpoint, read from the memory unless this process
    /// knows it; one that `verifier` did not sign for `origin` is a refusal.
    pub(super) async fn remembered(
        &self,
        verifier: &VerifierKey,
        head: Head,
    ) -> Result<Result<Option<Remembered>, Refusal>, crate::ports::StoreError> {
        if let Some(known) = self.known().remembered.clone() {
            return Ok(Ok(known));
        }
        let Some(note) = self.memory.recall().await? else {
            self.known().remembered = Some(None);
            return Ok(Ok(None));
        };
        match Checkpoint::open(&note, verifier) {
            Ok(checkpoint) => {
                let remembered = Remembered {
                    note,
                    head: Head {
                        size: checkpoint.size,
                        root_hash: checkpoint.root,
                    },
                };
                self.known().remembered = Some(Some(remembered.clone()));
                Ok(Ok(Some(remembered)))
            }
            Err(error) => Ok(Err(Refusal {
                head,
                remembered: None,
                reason: format!(
                    "{} holds a checkpoint this log's key did not sign ({error}): restore the memory, or remove it only if this key never signed another history",
                    self.memory.describe()
                ),
            })),
        }
    }

    /// Remembers `note`, the signed checkpoint of `head`, in place of
    /// `previous`; `false` when another signer moved the memory first
    /// (what this process knows is dropped, to be read again).
    pub(super) async fn remember(
        &self,
        previous: Option<&Remembered>,
        head: Head,
        note: &str,
    ) -> Result<bool, crate::ports::StoreError> {
        let swapped = self
            .memory
            .remember(previous.map(|r| r.note.as_str()), note)
            .await?;
        let mut known = self.known();
        if swapped {
            known.remembered = Some(Some(Remembered {
                note: note.to_owned(),
                head,
            }));
            known.vouched = Some(head);
        } else {
            known.remembered = None;
        }
        Ok(swapped)
    }

    /// Marks `head` as checked (it is the remembered checkpoint itself).
    pub(super) fn vouch(&self, head: Head) {
        self.known().vouched = Some(head);
    }

    /// Logs and publishes `refusal` the first time this process meets it.
    /// Where the log's events go (refusals here, witness alarms too).
    pub(super) fn events(&self) -> &Events {
        &self.events
    }

    pub(super) async fn report(&self, origin: &str, refusal: &Refusal) {
        {
            let mut known = self.known();
            let key = (refusal.head, refusal.remembered);
            if known.reported == Some(key) {
                return;
            }
            known.reported = Some(key);
        }
        let hex = |head: Option<Head>| head.map(|h| h.root_hash.to_hex());
        tracing::error!(
            origin,
            head_size = refusal.head.size,
            head_root = %refusal.head.root_hash,
            remembered_size = refusal.remembered.map(|h| h.size),
            remembered_root = hex(refusal.remembered),
            memory = %self.memory.describe(),
            reason = %refusal.reason,
            "the log refuses to sign: the ledger does not extend the largest checkpoint signed"
        );
        if self.events.is_enabled() {
            self.events
                .publish(vec![OutsideEvent {
                    detail_type: REFUSED_TO_SIGN,
                    detail: serde_json::json!({
                        "origin": origin,
                        "head": refusal.head,
                        "remembered": refusal.remembered,
                        "memory": self.memory.describe(),
                        "reason": refusal.reason,
                    }),
                }])
                .await;
        }
    }
}

/// What signing a head still needs, once it is known not to be refused.
#[derive(Debug)]
pub(super) enum Vouch {
    /// It was checked and remembered already.
    Done,
    /// Remember it in place of `previous`, after proving it extends
    /// `previous` when `prove` says so.
    Remember {
        /// The remembered checkpoint it replaces.
        previous: Option<Remembered>,
        /// Whether a consistency proof from `previous` must verify first.
        prove: bool,
    },
}

/// How a head may relate to the remembered checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Relation {
    /// It is the remembered checkpoint.
    Same,
    /// It is larger: it extends the remembered checkpoint if a consistency
    /// proof from the remembered size verifies (none is needed from an
    /// empty tree).
    Larger {
        /// Whether a proof is needed.
        prove: bool,
    },
}

/// How `head` relates to the `remembered` checkpoint before any proof, or
/// a refusal when it cannot extend it.
pub(super) fn compare(head: Head, remembered: &Remembered) -> Result<Relation, String> {
    let kept = remembered.head;
    if head.size < kept.size {
        return Err(format!(
            "the ledger's head has {} records but the log has signed a checkpoint of {}: the store went back (restored, emptied, or a key lost)",
            head.size, kept.size
        ));
    }
    if head.size == kept.size {
        return if head.root_hash == kept.root_hash {
            Ok(Relation::Same)
        } else {
            Err(format!(
                "the ledger's tree of {} records has another root than the checkpoint the log signed at that size",
                head.size
            ))
        };
    }
    Ok(Relation::Larger {
        prove: kept.size > 0,
    })
}

/// Whether a consistency proof's older root is the remembered one.
pub(super) fn proves(from_root: &Digest, remembered: &Remembered) -> Result<(), String> {
    if *from_root == remembered.head.root_hash {
        Ok(())
    } else {
        Err(format!(
            "the ledger's first {} records are not the ones the log signed: another history",
            remembered.head.size
        ))
    }
}
