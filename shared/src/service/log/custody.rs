//! Never two histories: the signer signs a head only after checking it
//! extends every checkpoint it is known to have signed, as remembered
//! apart from the ledger ([`SignerMemory`]) and, with a witness policy, as
//! the witnesses hold it (the `consult` module), and remembers the new
//! head before anything signed of it is served.
//!
//! The signer remembers in one or more places, the first the one that
//! travels with the key (freedom-local: a file beside the key file,
//! outside the data dir), the others the store's (a row or a KV key that a
//! restored store brings back older). A store that lost its head, was
//! restored from an older backup, was emptied or replaced, or forked,
//! answers a head that is smaller than a remembered checkpoint, or of the
//! same size with another root, or larger but not consistent with it. In
//! every such case nothing is signed: checkpoints and proofs fail
//! ([`super::LogError::RefusedToSign`], a 500), an error-level log line and
//! a `log.refused_to_sign` event say why (once per head and memory), and
//! everything that signs nothing (appends, tiles, the ledger, the
//! dashboard) keeps working.
//!
//! When the first memory holds nothing (a key from the environment on a
//! fresh store, a key file whose memory was lost), nothing says what the
//! key signed before: a non-empty head is signed only once the witnesses
//! have said they hold no larger or other tree of this log (with a
//! policy), or once the operator has said this key signed nothing this
//! ledger does not extend (`--new-log`, `FF_LOG_NEW_LOG`). The empty tree
//! is the same in every history: it is signed, never remembered.

use crate::merkle::{Digest, Head};
use crate::ports::event_sink::{Events, OutsideEvent};
use crate::ports::signer_memory::SignerMemory;
use crate::tlog::checkpoint::Checkpoint;
use crate::tlog::note::VerifierKey;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a signer retries when other signers move the memory under it.
pub(super) const MAX_ATTEMPTS: usize = 8;

/// What start-up says once when the log has no witness policy: its
/// memories are its only defence, and a backup that brings them back with
/// the ledger rolls them back together.
pub const UNWITNESSED_CUSTODY: &str = "the log has no witness policy (FF_LOG_POLICY): its memory of what it signed is the only thing that stops it signing a second history, and a backup restored together with that memory (the folder holding both the data dir and <key file>.signed, or a KV snapshot holding log:signed) rolls it back with the ledger, so the log would sign a second tree under its key; back up the ledger and the key's memory apart (never restore an older <key file>.signed), or run witnesses: with any policy a restored memory is caught by what they hold";

/// The event a refusal publishes (its `detail-type`).
pub const REFUSED_TO_SIGN: &str = "log.refused_to_sign";

/// How long after a consultation that did not settle whether the log may
/// sign (the witnesses that did not answer could on their own have met the
/// quorum) a read asks the witnesses again; every round asks at once.
pub(super) const CONSULT_AGAIN_AFTER: Duration = Duration::from_secs(10);

/// A checkpoint the signer remembers: its note as stored, and what it says.
#[derive(Debug, Clone)]
pub(super) struct Remembered {
    /// The note text as the memory holds it (the compare-and-swap's key).
    pub(super) note: String,
    /// Its size and root.
    pub(super) head: Head,
}

/// What each memory holds, as last read.
#[derive(Debug, Clone)]
pub(super) struct Recollection {
    /// Per memory, in the custody's order: the note it holds (verified
    /// under the log's key), `None` when it holds none.
    notes: Vec<Option<Remembered>>,
    /// Per memory, the text it holds that is not this key's checkpoint
    /// (a memory of another key, read only to be replaced).
    foreign: Vec<Option<String>>,
}

impl Recollection {
    /// What the first memory (the one that travels with the key) holds.
    pub(super) fn primary(&self) -> Option<&Remembered> {
        self.notes.first().and_then(Option::as_ref)
    }

    /// Each distinct checkpoint the memories hold.
    pub(super) fn distinct(&self) -> Vec<Remembered> {
        let mut out: Vec<Remembered> = Vec::new();
        for remembered in self.notes.iter().flatten() {
            if !out.iter().any(|r| r.head == remembered.head) {
                out.push(remembered.clone());
            }
        }
        out
    }

    /// The largest checkpoint any memory holds.
    pub(super) fn largest(&self) -> Option<&Remembered> {
        self.notes.iter().flatten().max_by_key(|r| r.head.size)
    }

    /// Whether every memory holds `head`'s checkpoint.
    fn all_hold(&self, head: Head) -> bool {
        self.notes
            .iter()
            .all(|n| n.as_ref().is_some_and(|r| r.head == head))
    }
}

/// Whether the witnesses have been consulted in this process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Consulted {
    /// Not yet.
    #[default]
    No,
    /// Yes, and none holds a larger or other tree.
    Settled,
    /// Yes, but the witnesses that did not answer could on their own
    /// have met the quorum (when, on the log's monotonic ticks, in
    /// milliseconds).
    Unsettled(i64),
}

/// What the signer knows of its memory in this process.
#[derive(Debug, Default)]
struct Known {
    /// The memories as last read or written; `None`: to be read.
    recollection: Option<Recollection>,
    /// The newest head checked to extend them and remembered.
    vouched: Option<Head>,
    /// The last refusal logged and published, so each is reported once.
    reported: Option<(Head, Option<Head>, String)>,
    /// Whether the witnesses were consulted.
    consulted: Consulted,
    /// The witnesses a consultation that did not settle waits for (their
    /// policy names).
    waiting: Vec<String>,
    /// Whether the last consultation that did not settle heard a witness
    /// name a tree larger than the memories hold: until one settles, a
    /// head the first memory holds needs the witnesses' word too (the
    /// memory may be a restored one).
    contradicted: bool,
    /// Set when a witness revealed a larger or other tree of this log:
    /// this process signs nothing more (the reason).
    halted: Option<String>,
}

/// The signer's memories and what this process knows of them.
pub(super) struct Custody {
    memories: Vec<Arc<dyn SignerMemory>>,
    new_log: bool,
    events: Events,
    known: Mutex<Known>,
    /// One consultation of the witnesses at a time.
    pub(super) consulting: futures_util::lock::Mutex<()>,
}

impl std::fmt::Debug for Custody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Custody")
            .field("memory", &self.describe())
            .field("new_log", &self.new_log)
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

/// Where the signer remembers, and whether this process may sign anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CustodyStatus {
    /// The first memory holds a checkpoint of `size` records.
    Remembers {
        /// The largest size any memory holds.
        size: u64,
        /// Where the memories are, in words.
        memory: String,
    },
    /// The first memory holds nothing: a non-empty head is signed only
    /// once the witnesses or the operator say so.
    Forgotten {
        /// The largest size another memory holds (0: none).
        other: u64,
        /// Where the memories are, in words.
        memory: String,
        /// Whether the operator said this is a new log.
        new_log: bool,
        /// Whether the log has witnesses to ask.
        witnessed: bool,
    },
}

impl std::fmt::Display for CustodyStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CustodyStatus::Remembers { size, memory } => write!(
                f,
                "the log remembers signing a checkpoint of {size} records ({memory}) and signs only heads that extend it"
            ),
            CustodyStatus::Forgotten {
                memory,
                new_log: true,
                ..
            } => write!(
                f,
                "no memory of what this key signed ({memory}); told this is a new log (--new-log or FF_LOG_NEW_LOG), it signs the ledger as it is and remembers from now on"
            ),
            CustodyStatus::Forgotten {
                other,
                memory,
                witnessed,
                ..
            } => {
                write!(f, "no memory of what this key signed ({memory})")?;
                if *other > 0 {
                    write!(f, ", though the store remembers {other} records")?;
                }
                if *witnessed {
                    write!(
                        f,
                        ": a non-empty ledger is signed once the witnesses say they hold no larger or other tree of this log"
                    )
                } else {
                    write!(
                        f,
                        ": a non-empty ledger is not signed until started with --new-log (FF_LOG_NEW_LOG=true under Lambda), which says this key signed nothing this ledger does not extend"
                    )
                }
            }
        }
    }
}

impl Custody {
    pub(super) fn new(memories: Vec<Arc<dyn SignerMemory>>, events: Events) -> Custody {
        Custody {
            memories,
            new_log: false,
            events,
            known: Mutex::new(Known::default()),
            consulting: futures_util::lock::Mutex::new(()),
        }
    }

    /// The same custody keeping its memory in `memories`, the first the
    /// one that travels with the key.
    pub(super) fn with_memories(self, memories: Vec<Arc<dyn SignerMemory>>) -> Custody {
        Custody {
            memories,
            known: Mutex::new(Known::default()),
            ..self
        }
    }

    /// The same custody reporting refusals to `events`.
    pub(super) fn with_events(self, events: Events) -> Custody {
        Custody { events, ..self }
    }

    /// The same custody, told (or not) that this is a new log.
    pub(super) fn with_new_log(self, new_log: bool) -> Custody {
        Custody { new_log, ..self }
    }

    /// Whether the operator said this key signed nothing this ledger does
    /// not extend.
    pub(super) fn new_log(&self) -> bool {
        self.new_log
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where the memories are, in words.
    pub(super) fn describe(&self) -> String {
        self.memories
            .iter()
            .map(|m| m.describe())
            .collect::<Vec<_>>()
            .join(" and ")
    }

    /// Whether `head` was already checked and remembered.
    pub(super) fn vouched(&self, head: Head) -> bool {
        self.known().vouched == Some(head)
    }

    /// Drops what this process knows of the memories: the next read goes
    /// to them.
    pub(super) fn forget(&self) {
        self.known().recollection = None;
    }

    /// Why this process signs nothing more, when a witness said so.
    pub(super) fn halted(&self) -> Option<String> {
        self.known().halted.clone()
    }

    /// Stops this process signing anything, for `reason`.
    pub(super) fn halt(&self, reason: &str) {
        let mut known = self.known();
        if known.halted.is_none() {
            known.halted = Some(reason.to_owned());
        }
        known.vouched = None;
    }

    /// Whether the witnesses need asking before `head` is signed: once in
    /// each process, and while the last consultation did not settle, at
    /// every round (`round`) or, for a read, at most every
    /// [`CONSULT_AGAIN_AFTER`].
    pub(super) fn consultation_due(&self, confirmed: bool, round: bool, now_millis: i64) -> bool {
        match self.known().consulted {
            Consulted::No => true,
            Consulted::Settled => false,
            Consulted::Unsettled(at) => {
                !confirmed
                    && (round
                        || now_millis.saturating_sub(at)
                            >= i64::try_from(CONSULT_AGAIN_AFTER.as_millis()).unwrap_or(i64::MAX))
            }
        }
    }

    /// Records what a consultation settled, whether a witness contradicted
    /// the memories, and the witnesses it waits for when it did not settle.
    pub(super) fn consulted(
        &self,
        settled: bool,
        contradicted: bool,
        waiting: Vec<String>,
        now_millis: i64,
    ) {
        let mut known = self.known();
        known.consulted = if settled {
            Consulted::Settled
        } else {
            Consulted::Unsettled(now_millis)
        };
        known.contradicted = contradicted && !settled;
        known.waiting = if settled { Vec::new() } else { waiting };
    }

    /// Whether the last consultation, unsettled, heard a witness contradict
    /// the memories.
    pub(super) fn contradicted(&self) -> bool {
        self.known().contradicted
    }

    /// The witnesses the last consultation that did not settle waits for.
    pub(super) fn waiting(&self) -> Vec<String> {
        self.known().waiting.clone()
    }

    /// Whether an earlier consultation in this process settled.
    pub(super) fn settled(&self) -> bool {
        self.known().consulted == Consulted::Settled
    }

    /// What every memory holds, read from them unless this process knows
    /// it. A first memory holding a checkpoint this key did not sign is a
    /// refusal; another memory's is read as holding nothing of this key.
    pub(super) async fn recollect(
        &self,
        verifier: &VerifierKey,
        head: Head,
    ) -> Result<Result<Recollection, Refusal>, crate::ports::StoreError> {
        if let Some(known) = self.known().recollection.clone() {
            return Ok(Ok(known));
        }
        let texts = futures_util::future::join_all(self.memories.iter().map(|m| m.recall())).await;
        let mut notes = Vec::with_capacity(texts.len());
        let mut foreign = Vec::with_capacity(texts.len());
        for (index, text) in texts.into_iter().enumerate() {
            let Some(note) = text? else {
                notes.push(None);
                foreign.push(None);
                continue;
            };
            match Checkpoint::open(&note, verifier) {
                Ok(checkpoint) => {
                    notes.push(Some(Remembered {
                        note,
                        head: Head {
                            size: checkpoint.size,
                            root_hash: checkpoint.root,
                        },
                    }));
                    foreign.push(None);
                }
                Err(error) if index == 0 => {
                    return Ok(Err(Refusal {
                        head,
                        remembered: None,
                        reason: format!(
                            "{} holds a checkpoint this log's key did not sign ({error}): restore the memory, or remove it only if this key never signed another history",
                            self.memories[0].describe()
                        ),
                    }));
                }
                Err(_) => {
                    tracing::warn!(
                        memory = %self.memories[index].describe(),
                        "a memory holds a checkpoint of another key: read as holding nothing of this one, and replaced at the next signature"
                    );
                    notes.push(None);
                    foreign.push(Some(note));
                }
            }
        }
        let recollection = Recollection { notes, foreign };
        self.known().recollection = Some(recollection.clone());
        Ok(Ok(recollection))
    }

    /// Where the signer stands, read from the memories (for start-up).
    pub(super) async fn status(
        &self,
        verifier: &VerifierKey,
        witnessed: bool,
    ) -> Result<CustodyStatus, crate::ports::StoreError> {
        let recollection = match self.recollect(verifier, Head::empty()).await? {
            Ok(recollection) => recollection,
            Err(refusal) => {
                return Ok(CustodyStatus::Remembers {
                    size: 0,
                    memory: refusal.reason,
                });
            }
        };
        let largest = recollection.largest().map_or(0, |r| r.head.size);
        Ok(if recollection.primary().is_some() {
            CustodyStatus::Remembers {
                size: largest,
                memory: self.describe(),
            }
        } else {
            CustodyStatus::Forgotten {
                other: largest,
                memory: self.describe(),
                new_log: self.new_log,
                witnessed,
            }
        })
    }

    /// Remembers `note`, the signed checkpoint of `head`, in every memory
    /// that does not hold it yet (the first one first), each in place of
    /// what `recollection` says it held; `false` when another signer moved
    /// one first (what this process knows is dropped, to be read again).
    pub(super) async fn remember(
        &self,
        recollection: &Recollection,
        head: Head,
        note: &str,
    ) -> Result<bool, crate::ports::StoreError> {
        for (index, memory) in self.memories.iter().enumerate() {
            let held = recollection.notes[index].as_ref();
            if held.is_some_and(|r| r.head == head) {
                continue;
            }
            let previous = held
                .map(|r| r.note.as_str())
                .or(recollection.foreign[index].as_deref());
            if !memory.remember(previous, note).await? {
                self.known().recollection = None;
                return Ok(false);
            }
        }
        let mut known = self.known();
        let remembered = Remembered {
            note: note.to_owned(),
            head,
        };
        known.recollection = Some(Recollection {
            notes: vec![Some(remembered); self.memories.len()],
            foreign: vec![None; self.memories.len()],
        });
        known.vouched = Some(head);
        Ok(true)
    }

    /// Writes `learned`, a checkpoint this key signed that a witness holds,
    /// into every memory holding a smaller one (or none), so the refusal it
    /// leads to outlives this process. Best effort: a failure is logged.
    pub(super) async fn learn(&self, verifier: &VerifierKey, learned: &Remembered) {
        let recollection = match self.recollect(verifier, learned.head).await {
            Ok(Ok(recollection)) => recollection,
            _ => return,
        };
        for (index, memory) in self.memories.iter().enumerate() {
            let held = recollection.notes[index].as_ref();
            if held.is_some_and(|r| r.head.size >= learned.head.size) {
                continue;
            }
            let previous = held
                .map(|r| r.note.as_str())
                .or(recollection.foreign[index].as_deref());
            match memory.remember(previous, &learned.note).await {
                Ok(true) => tracing::warn!(
                    memory = %memory.describe(),
                    size = learned.head.size,
                    "remembered a larger checkpoint of this log that a witness holds"
                ),
                Ok(false) => {}
                Err(error) => tracing::warn!(%error, "cannot remember the witness's checkpoint"),
            }
        }
        self.known().recollection = None;
    }

    /// Marks `head` as checked (every memory holds it).
    pub(super) fn vouch(&self, recollection: &Recollection, head: Head) -> bool {
        if recollection.all_hold(head) {
            self.known().vouched = Some(head);
            true
        } else {
            false
        }
    }

    /// Where the log's events go (refusals here, witness alarms too).
    pub(super) fn events(&self) -> &Events {
        &self.events
    }

    /// Logs and publishes `refusal` the first time this process meets it.
    pub(super) async fn report(&self, origin: &str, refusal: &Refusal) {
        {
            let mut known = self.known();
            let key = (refusal.head, refusal.remembered, refusal.reason.clone());
            if known.reported.as_ref() == Some(&key) {
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
            memory = %self.describe(),
            reason = %refusal.reason,
            "the log refuses to sign: the ledger does not extend what the log has signed"
        );
        if self.events.is_enabled() {
            self.events
                .publish(vec![OutsideEvent {
                    detail_type: REFUSED_TO_SIGN,
                    detail: serde_json::json!({
                        "origin": origin,
                        "head": refusal.head,
                        "remembered": refusal.remembered,
                        "memory": self.describe(),
                        "reason": refusal.reason,
                    }),
                }])
                .await;
        }
    }
}

/// How a head may relate to a remembered checkpoint.
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
