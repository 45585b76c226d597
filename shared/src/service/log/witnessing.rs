//! Witnessing (c2sp.org/tlog-witness): the log brings its newest signed
//! checkpoint to every witness of its policy, concurrently, each with the
//! consistency proof from the size that witness last cosigned, and keeps
//! the newest checkpoint whose cosignatures meet the policy's quorum: the
//! one it serves.
//!
//! A round never runs on the append path; rounds never overlap (a second
//! waits for the first). Every round ends within its bound: the
//! witnesses' timeout, counted from when the round was asked for, covers
//! the whole round (the consultation before a first signature, every
//! request and the size hint's retry), so `POST /log/cosign` answers
//! within that timeout and a second. What each answer means is the
//! `answers` module's.
//!
//! Times the service can vouch for: a cosignature this round gathered,
//! dated no earlier than 60 s before the round had its head and no later
//! than 60 s after it ended, by the service's clock, counts for the
//! checkpoint's quorum time (one kept from an earlier round of the same
//! head does not); one dated outside still counts for the served
//! checkpoint's quorum (its signature is valid) but not for time, and the
//! round's answer names its witness with the skew (`clockSkewSeconds`). A
//! checkpoint joins the witnessed history only with a quorum of such
//! cosignatures, and the store keeps the history's times from ever
//! decreasing with size.

use super::{Log, LogError, WitnessedTimes};
use crate::clock::CLOCK_TOLERANCE_SECONDS;
use crate::merkle::Head;
use crate::ports::witness_client::WitnessClient;
use crate::ports::witness_memory::WitnessMemory;
use crate::tlog::checkpoint::Checkpoint;
use crate::tlog::cosignature::Cosignature;
use crate::tlog::note::split_note;
use crate::tlog::policy::{Policy, Witness};
use futures_util::lock::Mutex;
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// The event an alarm publishes (its `detail-type`).
pub const WITNESS_ALARM: &str = "log.witness_alarm";
/// How long one round may take to hear from its witnesses, in seconds
/// (each request gets what is left of it; the contract publishes it).
pub const WITNESS_TIMEOUT_SECONDS: u64 = 5;
/// [`WITNESS_TIMEOUT_SECONDS`] as a duration.
pub(crate) const WITNESS_TIMEOUT: Duration = Duration::from_secs(WITNESS_TIMEOUT_SECONDS);
/// How far ahead of the clock a cosignature may be dated.
pub(super) const MAX_FUTURE_SECONDS: i64 = 600;

/// When a round, or a consultation outside one, must be over, by the
/// log's clock; and whether it is a round's (a round asks the witnesses
/// again at once when the last consultation did not settle; a read at most
/// every ten seconds, so readers cannot make the log hammer its
/// witnesses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Deadline {
    /// On the log's monotonic ticks.
    at: Duration,
    pub(super) round: bool,
}

/// The log's witnesses: its policy, what it keeps of them, how it reaches
/// them.
pub(super) struct Witnessing {
    pub(super) policy: Arc<Policy>,
    pub(super) memory: Arc<dyn WitnessMemory>,
    pub(super) client: Arc<dyn WitnessClient>,
    /// The witnessed history as the read views see it (one for the log, so
    /// what it learns once, when witnessing began, is shared).
    times: WitnessedTimes,
    round: Mutex<()>,
    /// The deadlines of the rounds waiting for the running one, by ticket:
    /// the running round ends by the earliest of them, so whichever order
    /// the lock wakes its waiters in, each answers within its own bound.
    waiting: std::sync::Mutex<Waiting>,
    /// The same for the consultations waiting for the running one (a read
    /// that asks the witnesses waits for a round's consultation, or the
    /// reverse).
    consults_waiting: std::sync::Mutex<Waiting>,
    /// The alarm each witness last raised (its status), until it cosigns
    /// again: an alarm repeated round after round is logged and published
    /// once.
    pub(super) alarms: std::sync::Mutex<std::collections::BTreeMap<String, u16>>,
    /// The witnesses whose last cosignature was dated outside its round
    /// (warned of once, until one comes dated within).
    skewed: std::sync::Mutex<BTreeSet<String>>,
}

/// The rounds waiting for the running one.
#[derive(Debug, Default)]
pub(super) struct Waiting {
    next_ticket: u64,
    deadlines: std::collections::BTreeMap<u64, Duration>,
}

/// A round's place among those waiting: given up when it gets the lock, or
/// when the round is dropped while it waits (a client gone).
struct Queued<'a> {
    waiting: &'a std::sync::Mutex<Waiting>,
    ticket: u64,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .deadlines
            .remove(&self.ticket);
    }
}

impl Waiting {
    /// Registers a call that will wait, in `waiting`, for the one running,
    /// due by `at`.
    fn queue(waiting: &std::sync::Mutex<Waiting>, at: Duration) -> Queued<'_> {
        let mut guard = waiting.lock().unwrap_or_else(|p| p.into_inner());
        let ticket = guard.next_ticket;
        guard.next_ticket = ticket.wrapping_add(1);
        guard.deadlines.insert(ticket, at);
        Queued { waiting, ticket }
    }

    /// The earliest deadline among those waiting in `waiting`.
    fn earliest(waiting: &std::sync::Mutex<Waiting>) -> Option<Duration> {
        waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .deadlines
            .values()
            .min()
            .copied()
    }
}

impl Witnessing {
    /// Registers a consultation that will wait for the running one, due by
    /// `deadline`: the running one ends by then.
    pub(super) fn queue_consultation(&self, deadline: Deadline) -> impl Drop + '_ {
        Waiting::queue(&self.consults_waiting, deadline.at)
    }

    /// The earliest deadline among the calls waiting: the consultations,
    /// and the rounds (a round waiting for the lock will then need the
    /// consultation a read may be running).
    fn earliest_waiting(&self) -> Option<Duration> {
        let consults = Waiting::earliest(&self.consults_waiting);
        let rounds = Waiting::earliest(&self.waiting);
        consults.into_iter().chain(rounds).min()
    }
}

/// What one witness did in a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct WitnessOutcome {
    /// The policy's name for it.
    pub name: String,
    /// `cosigned` (this round), `held` (its cosignature of this head was
    /// already kept), `skipped` (no answer, a refusal, no URL), or `alarm`.
    pub outcome: &'static str,
    /// The size it is known to have cosigned last, after the round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Why it was skipped or raised an alarm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When its cosignature of this round is dated outside the round (by
    /// more than the 60 s tolerance): how far, in seconds (negative:
    /// before the round). It counts for the quorum, not for time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_skew_seconds: Option<i64>,
}

/// What a round did: `POST /log/cosign`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct CosignRound {
    /// The log's head size the round brought to the witnesses.
    pub tree_size: u64,
    /// Whether any witness was asked (a round with every cosignature of
    /// the head already kept asks none).
    pub asked: bool,
    /// Whether the head's checkpoint meets the quorum.
    pub quorum_met: bool,
    /// The size of the witnessed checkpoint served after the round, as
    /// this round knows it.
    pub witnessed_size: Option<u64>,
    /// The groups short of their threshold for the head, when not met.
    pub short: Vec<String>,
    /// Each witness, in the policy's order.
    pub witnesses: Vec<WitnessOutcome>,
}

/// A cosignature on the served checkpoint, for readers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WitnessSignature {
    /// The policy's name for the witness.
    pub name: String,
    /// Its verifier key.
    pub key: String,
    /// When it cosigned, seconds since the epoch.
    pub time: u64,
}

/// The newest checkpoint that meets the policy's quorum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witnessed {
    /// Its tree size.
    pub size: u64,
    /// The largest checkpoint of the witnessed history, read with it.
    pub history_top: Option<u64>,
    /// Its root hash.
    pub root: crate::merkle::Digest,
    /// The note: the log's signed checkpoint and the cosignature lines.
    pub note: Arc<str>,
    /// The cosignatures that verified, in the policy's order.
    pub cosignatures: Vec<WitnessSignature>,
}

impl Witnessing {
    pub(super) fn new(
        policy: Policy,
        memory: Arc<dyn WitnessMemory>,
        client: Arc<dyn WitnessClient>,
    ) -> Witnessing {
        Witnessing {
            times: WitnessedTimes::new(&policy, Arc::clone(&memory)),
            policy: Arc::new(policy),
            memory,
            client,
            round: Mutex::new(()),
            waiting: std::sync::Mutex::default(),
            consults_waiting: std::sync::Mutex::default(),
            alarms: std::sync::Mutex::default(),
            skewed: std::sync::Mutex::default(),
        }
    }

    /// The cosignatures by the policy's witnesses on `note` (a checkpoint
    /// signed by the log), by witness index: lines from unknown keys are
    /// ignored, as are those of a known key that do not verify or are
    /// dated too far ahead.
    fn cosignatures_on(&self, note: &str, now: i64) -> Vec<(usize, Cosignature)> {
        let Ok((text, lines)) = split_note(note) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for (index, witness) in self.policy.witnesses().iter().enumerate() {
            let first = lines.iter().find_map(|(name, encoded)| {
                witness.key.verify_line(text, name, encoded).ok().flatten()
            });
            if let Some(cosignature) = first.filter(|c| dated_in_time(c, now)) {
                found.push((index, cosignature));
            }
        }
        found
    }
}

/// Whether a cosignature is dated at most ten minutes ahead of `now`
/// (seconds since the epoch).
pub(super) fn dated_in_time(cosignature: &Cosignature, now: i64) -> bool {
    let latest = now.saturating_add(MAX_FUTURE_SECONDS);
    i64::try_from(cosignature.time).is_ok_and(|t| t <= latest)
}

/// One witness's answer, as the round reads it.
pub(super) enum Answer {
    /// A cosignature that verified.
    Cosigned(Cosignature),
    /// Nothing this round (why).
    Skipped(String),
    /// An alarm against the witness (why).
    Alarm(String),
}

impl Log {
    /// The same log witnessed under `policy`: what it keeps of its
    /// witnesses in `memory`, and how it reaches them.
    pub fn with_witnesses(
        mut self,
        policy: Policy,
        memory: Arc<dyn WitnessMemory>,
        client: Arc<dyn WitnessClient>,
    ) -> Log {
        self.witnessing = Some(Witnessing::new(policy, memory, client));
        self
    }

    /// The witnessed history, for the views that show when each record
    /// was written (unwitnessed without a policy with a quorum).
    pub fn witnessed_times(&self) -> WitnessedTimes {
        self.witnessing
            .as_ref()
            .map(|witnessing| witnessing.times.clone())
            .unwrap_or_default()
    }

    /// The witness policy, when the log is witnessed.
    pub fn policy(&self) -> Option<&Policy> {
        self.witnessing.as_ref().map(|w| w.policy.as_ref())
    }

    /// Whether checkpoints are served only once witnessed (a policy whose
    /// quorum is not `none`).
    pub fn serves_witnessed(&self) -> bool {
        self.policy().is_some_and(|p| !p.needs_no_cosignature())
    }

    /// The newest witnessed checkpoint kept (one store read), checked again:
    /// signed by this log, meeting the quorum. `None` before any has.
    pub async fn witnessed(&self) -> Result<Option<Witnessed>, LogError> {
        let (Some(witnessing), Some(signer)) = (&self.witnessing, self.signer.as_ref()) else {
            return Ok(None);
        };
        let state = witnessing.memory.read().await?;
        let Some((size, note)) = state.witnessed else {
            return Ok(None);
        };
        let verifier = signer.verifier();
        let checkpoint = match Checkpoint::open(&note, &verifier) {
            Ok(checkpoint) if checkpoint.size == size => checkpoint,
            _ => {
                tracing::error!(
                    "the witnessed checkpoint kept is not signed by this log's key: not served"
                );
                return Ok(None);
            }
        };
        let found = witnessing.cosignatures_on(&note, self.now().timestamp());
        let indexes: BTreeSet<usize> = found.iter().map(|(i, _)| *i).collect();
        if !witnessing.policy.check(&indexes).met {
            return Ok(None);
        }
        let witnesses = witnessing.policy.witnesses();
        Ok(Some(Witnessed {
            size,
            history_top: state.history_top,
            root: checkpoint.root,
            note: note.into(),
            cosignatures: found
                .into_iter()
                .map(|(index, c)| WitnessSignature {
                    name: witnesses[index].name.clone(),
                    key: witnesses[index].key.to_text(),
                    time: c.time,
                })
                .collect(),
        }))
    }

    /// The witnessed checkpoint proofs are served against, when the log
    /// serves only witnessed checkpoints and one is kept.
    pub(super) async fn proof_anchor(&self) -> Result<Option<Witnessed>, LogError> {
        if !self.serves_witnessed() {
            return Ok(None);
        }
        self.witnessed().await
    }

    /// The note to embed in a proof for the tree `head`: the witnessed
    /// checkpoint when it is that tree's, else the log-signed one.
    pub(super) fn anchor_note(
        anchor: Option<&Witnessed>,
        head: Head,
        signed: impl FnOnce() -> Arc<str>,
    ) -> Arc<str> {
        match anchor {
            Some(witnessed) if witnessed.size == head.size && witnessed.root == head.root_hash => {
                Arc::clone(&witnessed.note)
            }
            _ => signed(),
        }
    }

    /// The deadline of a round (`round`) or a read starting now.
    pub(super) fn deadline(&self, round: bool) -> Deadline {
        Deadline {
            at: self.ticks().saturating_add(WITNESS_TIMEOUT),
            round,
        }
    }

    /// What is left until `deadline`, or until the earliest deadline of
    /// the calls waiting (rounds and consultations); `None` once it has
    /// passed.
    pub(super) fn time_left(&self, deadline: Deadline) -> Option<Duration> {
        let waiting = self
            .witnessing
            .as_ref()
            .and_then(Witnessing::earliest_waiting);
        let at = waiting.map_or(deadline.at, |waiting| waiting.min(deadline.at));
        Some(at.saturating_sub(self.ticks())).filter(|left| !left.is_zero())
    }

    /// One cosigning round (see the module's doc): brings the head's
    /// checkpoint to every witness whose cosignature of it is not kept yet
    /// (every witness when `force`), and keeps the result if it meets the
    /// quorum. Waits for a round already running; ends within the
    /// witnesses' timeout of being asked for.
    pub async fn cosign(&self, force: bool) -> Result<CosignRound, LogError> {
        let Some(witnessing) = &self.witnessing else {
            return Err(LogError::NotWitnessed);
        };
        let deadline = self.deadline(true);
        let queued = Waiting::queue(&witnessing.waiting, deadline.at);
        let _round = witnessing.round.lock().await;
        drop(queued);
        let signed = self.checkpoint_by(deadline).await?;
        let head = signed.head;
        let asked_at = self.now().timestamp();
        let state = witnessing.memory.read().await?;
        let mut held = match &state.witnessed {
            Some((size, note)) if *size == head.size && note.starts_with(&*signed.note) => {
                witnessing.cosignatures_on(note, asked_at)
            }
            _ => Vec::new(),
        };
        let policy = Arc::clone(&witnessing.policy);
        let to_ask: Vec<(usize, &Witness)> = policy
            .witnesses()
            .iter()
            .enumerate()
            .filter(|(index, _)| force || !held.iter().any(|(i, _)| i == index))
            .collect();
        let asked = !to_ask.is_empty();
        let answers = futures_util::future::join_all(to_ask.iter().map(|(index, witness)| {
            let kept = state.sizes.get(&witness.key.to_text()).copied();
            async move { (*index, self.bring(witness, head, kept, deadline).await) }
        }))
        .await;
        let mut outcomes: Vec<WitnessOutcome> = policy
            .witnesses()
            .iter()
            .map(|w| WitnessOutcome {
                name: w.name.clone(),
                outcome: "held",
                size: state.sizes.get(&w.key.to_text()).copied(),
                detail: None,
                clock_skew_seconds: None,
            })
            .collect();
        let mut gathered = BTreeSet::new();
        for (index, (answer, size)) in answers {
            let outcome = &mut outcomes[index];
            outcome.size = size.or(outcome.size);
            match answer {
                Answer::Cosigned(cosignature) => {
                    outcome.outcome = "cosigned";
                    witnessing
                        .alarms
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .remove(&policy.witnesses()[index].name);
                    gathered.insert(index);
                    held.retain(|(i, _)| *i != index);
                    held.push((index, cosignature));
                }
                Answer::Skipped(detail) => {
                    outcome.outcome = "skipped";
                    outcome.detail = Some(detail);
                }
                Answer::Alarm(detail) => {
                    outcome.outcome = "alarm";
                    outcome.detail = Some(detail);
                }
            }
        }
        held.sort_by_key(|(index, _)| *index);
        let indexes: BTreeSet<usize> = held.iter().map(|(i, _)| *i).collect();
        let check = policy.check(&indexes);
        let ended = self.now().timestamp();
        let low = asked_at.saturating_sub(CLOCK_TOLERANCE_SECONDS);
        let high = ended.saturating_add(CLOCK_TOLERANCE_SECONDS);
        let mut vouched_times = Vec::with_capacity(held.len());
        for (index, cosignature) in &held {
            // Only what this round gathered: a cosignature kept from an
            // earlier round was dated by that round's window, not this one's.
            if !gathered.contains(index) {
                continue;
            }
            let time = i64::try_from(cosignature.time).unwrap_or(i64::MAX);
            let name = &policy.witnesses()[*index].name;
            let mut skewed = witnessing.skewed.lock().unwrap_or_else(|p| p.into_inner());
            if (low..=high).contains(&time) {
                vouched_times.push((*index, cosignature.time));
                skewed.remove(name);
            } else {
                let skew = if time < low {
                    time.saturating_sub(asked_at)
                } else {
                    time.saturating_sub(ended)
                };
                outcomes[*index].clock_skew_seconds = Some(skew);
                // Said once while the witness's clock stays off; each
                // round's answer still gives the skew.
                if skewed.insert(name.clone()) {
                    tracing::warn!(
                        witness = %name,
                        clock_skew_seconds = skew,
                        "the witness's cosignature is dated outside the round that asked for it: it counts for the quorum, not for when the records were in the log"
                    );
                } else {
                    tracing::debug!(witness = %name, clock_skew_seconds = skew, "the witness's clock is still off");
                }
            }
        }
        let mut kept = false;
        if check.met {
            let mut note = signed.note.to_string();
            for (_, cosignature) in &held {
                note.push_str(&cosignature.line);
            }
            kept = witnessing
                .memory
                .keep_witnessed(head.size, &note, policy.quorum_time(&vouched_times))
                .await?;
        }
        // Known without another read: this head's, or what the round began
        // with (another process may have kept a larger one meanwhile).
        let witnessed_size = if kept {
            Some(head.size)
        } else {
            state.witnessed.as_ref().map(|(size, _)| *size)
        };
        Ok(CosignRound {
            tree_size: head.size,
            asked,
            quorum_met: check.met,
            witnessed_size,
            short: check.short,
            witnesses: outcomes,
        })
    }
}
