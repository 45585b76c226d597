//! The log use case: the ledger published as a C2SP transparency log
//! ([`crate::tlog`] holds the specifications it follows).
//!
//! [`Log`] owns its ledger store and answers the checkpoint, a tile, a
//! proof. It never signs two histories: before signing a head it checks
//! that head extends the largest checkpoint it has signed, remembered
//! apart from the ledger ([`crate::ports::signer_memory`]; the check is
//! the `custody` and `vouch` modules'). A proof reads the head, then the
//! tiles its hashes live in that the log's memo of upper subtrees does not
//! hold (two store reads, O(log n) hashes); it is tied to the stored head
//! and verified before it is signed or served (the `prove` module). A
//! tile is one read. With a witness policy, cosigning rounds bring each
//! new checkpoint to the witnesses and the newest one that meets the
//! quorum is the one served (the `witnessing` module).

mod answers;
mod consult;
mod custody;
mod holds;
mod prove;
mod schedule;
mod vouch;
mod witnessed_time;
mod witnessing;

pub use custody::{CustodyStatus, REFUSED_TO_SIGN, UNWITNESSED_CUSTODY};
pub use schedule::CosignSchedule;
pub use witnessed_time::{
    CONSISTENCY_EXTRA, RECORDING_WINDOW_SECONDS, Recorded, WitnessTable, WitnessedAt,
    WitnessedInclusion, WitnessedTimes, lag_seconds,
};
pub use witnessing::{CosignRound, WITNESS_ALARM, WITNESS_TIMEOUT_SECONDS};
pub(crate) use witnessing::{WitnessSignature, Witnessed};

use crate::clock::{Clock, Ticks, system_clock, system_ticks, ticks_of};
use crate::config::LogConfig;
use crate::merkle::Head;
use crate::ports::event_sink::{Events, no_events};
use crate::ports::ledger_store::{StoreError, TileReads};
use crate::ports::signer_memory::{InProcess, SignerMemory};
use crate::tlog::checkpoint::CheckpointSigner;
use crate::tlog::note::{NoteError, SigningKey, VerifierKey};
use crate::tlog::proof::{ProofError, SubtreeMemo};
use crate::tlog::tiles::{self, TileId, TileKind, TilePath};
use custody::Custody;
use prove::{ConsistencyOf, Nothing};
use std::sync::Arc;
use witnessing::{Deadline, Witnessing};

/// Why a log request cannot be answered.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// No signing key is configured: checkpoints and proofs cannot be
    /// signed.
    #[error(
        "the log has no signing key configured, so it cannot sign checkpoints or proofs; tiles and every other view still work"
    )]
    SigningUnavailable,
    /// The tile is not in the tree (beyond it, or not at that width).
    #[error("no such tile in the log's tree")]
    NoSuchTile,
    /// A parameter names a record or tree size the log does not have
    /// (yet): beyond its head.
    #[error("{message}")]
    BeyondLog {
        /// The query parameter at fault.
        parameter: &'static str,
        /// What is missing, in words, with the log's size.
        message: String,
    },
    /// Two parameters contradict each other (a leaf beyond the tree asked
    /// for, an older size above the newer).
    #[error("{message}")]
    OutOfRange {
        /// The query parameter at fault.
        parameter: &'static str,
        /// What is wrong, in words.
        message: String,
    },
    /// The ledger's head does not extend the largest checkpoint the log
    /// has signed (the store went back, was replaced, or forked): nothing
    /// is signed (a 500; the reason is logged and published).
    #[error("the log refuses to sign: {0}")]
    RefusedToSign(String),
    /// No checkpoint has met the witness policy's quorum yet (or, for a
    /// cosigning round, the log has no policy).
    #[error(
        "no checkpoint of the log has been cosigned by a quorum of its witnesses yet; GET /log/checkpoint?head=1 answers the log-signed head"
    )]
    NotWitnessed,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<ProofError> for LogError {
    /// The ranges are checked before a proof is computed, so a proof that
    /// fails has found the store's tiles inconsistent with its head.
    fn from(error: ProofError) -> LogError {
        LogError::Store(StoreError::Corrupt(error.to_string()))
    }
}

/// The log use case on one ledger store (through the reads it needs, the
/// tiles and the head): its identity (origin and, when
/// configured, signing key), the subtrees its proofs computed, and the
/// custody that keeps it from signing two histories.
pub struct Log {
    store: Arc<dyn TileReads>,
    origin: String,
    signer: Option<CheckpointSigner>,
    memo: SubtreeMemo,
    custody: Custody,
    witnessing: Option<Witnessing>,
    /// Where "now" comes from: the cosignatures' dates are checked against
    /// it (the custody simulator steps a virtual one).
    clock: Clock,
    /// What deadlines and the consultations' retries are counted on:
    /// monotonic, so a wall clock stepped back never stretches a bound.
    ticks: Ticks,
}

/// A signed checkpoint and the head it signs.
#[derive(Debug, Clone)]
pub struct SignedCheckpoint {
    /// The head signed.
    pub head: Head,
    /// The signed note text.
    pub note: Arc<str>,
}

/// A tile's bytes and whether they can never change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileBody {
    /// Hashes (32 bytes each) or an entry bundle.
    pub bytes: Vec<u8>,
    /// A full tile (256 wide) never changes; a partial one is replaced by
    /// wider ones as the log grows.
    pub immutable: bool,
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log")
            .field("origin", &self.origin)
            .field("signs", &self.signer.is_some())
            .field("custody", &self.custody)
            .finish_non_exhaustive()
    }
}

impl Log {
    /// The log of the ledger in `store`, named `origin`, signing with `key`
    /// when there is one (its name must be the origin).
    pub fn new(
        store: Arc<dyn TileReads>,
        origin: &str,
        key: Option<SigningKey>,
    ) -> Result<Log, NoteError> {
        if let Some(key) = &key
            && key.name() != origin
        {
            return Err(NoteError::BadKey("the key's name is not the log's origin"));
        }
        Ok(Log {
            store,
            origin: origin.to_owned(),
            signer: key.map(CheckpointSigner::new),
            memo: SubtreeMemo::default(),
            custody: Custody::new(vec![Arc::new(InProcess::default())], no_events())
                .with_new_log(true),
            witnessing: None,
            clock: system_clock(),
            ticks: system_ticks(),
        })
    }

    /// The same log reading the time from `clock` (the system clock by
    /// default), for its dates and its deadlines alike (tests and the
    /// custody simulator; deadlines never go back even if `clock` does).
    pub fn with_clock(mut self, clock: Clock) -> Log {
        self.ticks = ticks_of(Arc::clone(&clock));
        self.clock = clock;
        self
    }

    /// The monotonic time deadlines are counted on.
    pub(super) fn ticks(&self) -> std::time::Duration {
        (self.ticks)()
    }

    /// [`Log::ticks`] in milliseconds (the consultations' retries).
    pub(super) fn tick_millis(&self) -> i64 {
        i64::try_from(self.ticks().as_millis()).unwrap_or(i64::MAX)
    }

    /// Now, by the log's clock.
    pub(super) fn now(&self) -> chrono::DateTime<chrono::Utc> {
        (self.clock)()
    }

    /// The log `config` describes, of the ledger in `store`.
    pub fn configured(store: Arc<dyn TileReads>, config: LogConfig) -> Log {
        Log::new(store, &config.origin, config.signing_key)
            .expect("log_config checked the key's name")
    }

    /// The same log remembering the largest checkpoint it signed in
    /// `memory` (by default it remembers only while the process lives, and
    /// signs whatever its ledger holds). A memory that holds nothing makes
    /// it sign a non-empty head only once its witnesses or the operator
    /// ([`Log::with_new_log`]) say so.
    pub fn with_memory(self, memory: Arc<dyn SignerMemory>) -> Log {
        self.with_memories(vec![memory])
    }

    /// The same log remembering in every one of `memories`: the first the
    /// one that travels with the key (a file beside the key file, outside
    /// the data dir), the others the store's. A head must extend what each
    /// holds; while the first holds nothing, a non-empty head is signed
    /// only once the witnesses or the operator say so. Not told it is a new
    /// log (call [`Log::with_new_log`] after).
    pub fn with_memories(mut self, memories: Vec<Arc<dyn SignerMemory>>) -> Log {
        self.custody = self.custody.with_memories(memories).with_new_log(false);
        self
    }

    /// The same log, told (`--new-log`, `FF_LOG_NEW_LOG`) that its key has
    /// signed nothing its ledger does not extend: while its first memory
    /// holds nothing it signs the ledger as it is. Ignored while that
    /// memory holds a checkpoint.
    pub fn with_new_log(mut self, new_log: bool) -> Log {
        self.custody = self.custody.with_new_log(new_log);
        self
    }

    /// Where the signer stands (read from its memories): what it remembers,
    /// or what it waits for before signing a non-empty head.
    pub async fn custody_status(&self) -> Result<CustodyStatus, StoreError> {
        match self.verifier_key() {
            Some(verifier) => {
                self.custody
                    .status(&verifier, self.witnessing.is_some())
                    .await
            }
            None => Ok(CustodyStatus::Remembers {
                size: 0,
                memory: "no signing key: nothing is signed".into(),
            }),
        }
    }

    /// The same log publishing a refusal to sign to `events`.
    pub fn with_events(mut self, events: Events) -> Log {
        self.custody = self.custody.with_events(events);
        self
    }

    /// Where the log remembers the largest checkpoint it signed, in words.
    pub fn memory(&self) -> String {
        self.custody.describe()
    }

    /// The log's origin (the first line of its checkpoints).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The key readers verify checkpoints with, when the log signs.
    pub fn verifier_key(&self) -> Option<VerifierKey> {
        self.signer.as_ref().map(CheckpointSigner::verifier)
    }

    /// The texts of the signing key that no record may carry.
    pub fn secret_texts(&self) -> Vec<String> {
        self.signer
            .as_ref()
            .map(CheckpointSigner::secret_texts)
            .unwrap_or_default()
    }

    /// The ledger's current head (one store read; nothing is signed).
    pub async fn head(&self) -> Result<Head, LogError> {
        Ok(self.store.head().await?)
    }

    fn signer(&self) -> Result<&CheckpointSigner, LogError> {
        self.signer.as_ref().ok_or(LogError::SigningUnavailable)
    }

    /// The signed checkpoint of the current head: one store read, and at a
    /// new head one tile read more to check it extends what the log signed
    /// before (then the signer's memory is written); signed once per head.
    pub async fn checkpoint(&self) -> Result<SignedCheckpoint, LogError> {
        self.checkpoint_by(self.deadline(false)).await
    }

    /// [`Log::checkpoint`], any consultation of the witnesses over by
    /// `deadline`.
    async fn checkpoint_by(&self, deadline: Deadline) -> Result<SignedCheckpoint, LogError> {
        let signer = self.signer()?;
        let head = self.store.head().await?;
        self.vouched_by(head, Nothing { head }, deadline).await?;
        Ok(SignedCheckpoint {
            head,
            note: signer.sign(head),
        })
    }

    /// The signed checkpoint of `head`, a head `store` has (or had): signed
    /// only once the store's current head is vouched for and `head` proved
    /// a prefix of it (one tile read for both).
    pub(crate) async fn signed_checkpoint(&self, head: Head) -> Result<Arc<str>, LogError> {
        let signer = self.signer()?;
        let current = self.store.head().await?;
        if head.size > current.size {
            return Err(StoreError::Corrupt("a head beyond the ledger's".into()).into());
        }
        let asked = ConsistencyOf {
            from: head.size,
            to: current.size,
        };
        let prefix = self.vouched(current, asked).await?;
        if prefix.from_root != head.root_hash {
            return Err(StoreError::Corrupt(
                "a head asked to be signed is not part of the ledger".into(),
            )
            .into());
        }
        Ok(signer.sign(head))
    }

    /// The tile `path` names, at the current head: one store read. A tile
    /// the tree does not have at that width is [`LogError::NoSuchTile`].
    pub async fn tile(&self, path: &TilePath) -> Result<TileBody, LogError> {
        let width = path.width();
        let (size, bytes) = match path.kind {
            TileKind::Hashes(level) => {
                let id = TileId {
                    level,
                    index: path.index,
                };
                let read = self.store.tiles(&[id]).await?;
                if !path.exists_in(read.head.size) {
                    return Err(LogError::NoSuchTile);
                }
                let hashes = read
                    .tiles
                    .get(&id)
                    .and_then(|hashes| hashes.get(..width as usize))
                    .ok_or(ProofError::MissingTile {
                        level,
                        index: path.index,
                    })?;
                (read.head.size, hashes.iter().flat_map(|h| h.0).collect())
            }
            TileKind::Entries => {
                let first_seq = path
                    .index
                    .checked_mul(tiles::TILE_WIDTH)
                    .and_then(|first| first.checked_add(1))
                    .ok_or(LogError::NoSuchTile)?;
                let run = self.store.entry_run(first_seq, width).await?;
                if !path.exists_in(run.head.size) {
                    return Err(LogError::NoSuchTile);
                }
                if run.entries.len() as u64 != width {
                    return Err(StoreError::Corrupt(format!(
                        "entry bundle {} is missing records below the head",
                        path.index
                    ))
                    .into());
                }
                let bundle =
                    tiles::entry_bundle(run.entries.iter().map(|e| e.canonical.as_bytes()))
                        .ok_or_else(|| {
                            StoreError::Corrupt("a record is longer than an entry can carry".into())
                        })?;
                (run.head.size, bundle)
            }
        };
        Ok(TileBody {
            bytes,
            immutable: path.partial.is_none() && path.exists_in(size),
        })
    }
}
