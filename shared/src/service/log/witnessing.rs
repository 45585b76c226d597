//! Witnessing (c2sp.org/tlog-witness): the log brings its newest signed
//! checkpoint to every witness of its policy, concurrently, each with the
//! consistency proof from the size that witness last cosigned, and keeps
//! the newest checkpoint whose cosignatures meet the policy's quorum: the
//! one it serves.
//!
//! A round never runs on the append path; rounds never overlap (a second
//! waits for the first). Per witness: `200` gives cosignature lines, only
//! those that verify under the witness's key (and are not dated more than
//! ten minutes ahead) are kept; a `409` with `text/x.tlog.size` names the
//! size it last cosigned, kept, and the request is made once more from it
//! (a size below the one kept: the witness lost its state, a warning; a
//! size above the log's head: the witness saw a larger tree, an alarm);
//! another `409` or a `422` says the witness found a fork or a bad proof:
//! an alarm (error log line and a `log.witness_alarm` event), and the log
//! keeps serving. Anything else (403, 404, 429, 5xx, no answer within the
//! timeout) skips that witness this round.

use super::{Log, LogError, WitnessedTimes};
use crate::merkle::Head;
use crate::ports::event_sink::OutsideEvent;
use crate::ports::witness_client::{WitnessClient, WitnessReply};
use crate::ports::witness_memory::WitnessMemory;
use crate::tlog::checkpoint::Checkpoint;
use crate::tlog::cosignature::Cosignature;
use crate::tlog::note::split_note;
use crate::tlog::policy::{Policy, Witness};
use crate::tlog::witness::{AddCheckpoint, SIZE_HINT_TYPE, parse_size_hint};
use futures_util::lock::Mutex;
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// The event an alarm publishes (its `detail-type`).
pub const WITNESS_ALARM: &str = "log.witness_alarm";
/// How long one witness may take to answer.
pub(crate) const WITNESS_TIMEOUT: Duration = Duration::from_secs(5);
/// How far ahead of the clock a cosignature may be dated.
const MAX_FUTURE_SECONDS: i64 = 600;

/// The log's witnesses: its policy, what it keeps of them, how it reaches
/// them.
pub(super) struct Witnessing {
    pub(super) policy: Arc<Policy>,
    memory: Arc<dyn WitnessMemory>,
    pub(super) client: Arc<dyn WitnessClient>,
    /// The witnessed history as the read views see it (one for the log, so
    /// what it learns once, when witnessing began, is shared).
    times: WitnessedTimes,
    round: Mutex<()>,
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
        }
    }

    /// The cosignatures by the policy's witnesses on `note` (a checkpoint
    /// signed by the log), by witness index: lines from unknown keys are
    /// ignored, as are those of a known key that do not verify or are
    /// dated too far ahead.
    fn cosignatures_on(&self, note: &str) -> Vec<(usize, Cosignature)> {
        let Ok((text, lines)) = split_note(note) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for (index, witness) in self.policy.witnesses().iter().enumerate() {
            let first = lines.iter().find_map(|(name, encoded)| {
                witness.key.verify_line(text, name, encoded).ok().flatten()
            });
            if let Some(cosignature) = first.filter(dated_in_time) {
                found.push((index, cosignature));
            }
        }
        found
    }
}

/// Whether a cosignature is dated at most ten minutes ahead of the clock.
fn dated_in_time(cosignature: &Cosignature) -> bool {
    let latest = chrono::Utc::now()
        .timestamp()
        .saturating_add(MAX_FUTURE_SECONDS);
    i64::try_from(cosignature.time).is_ok_and(|t| t <= latest)
}

/// One witness's answer, as the round reads it.
enum Answer {
    Cosigned(Cosignature),
    Skipped(String),
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
        let found = witnessing.cosignatures_on(&note);
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

    /// One cosigning round (see the module's doc): brings the head's
    /// checkpoint to every witness whose cosignature of it is not kept yet
    /// (every witness when `force`), and keeps the result if it meets the
    /// quorum. Waits for a round already running.
    pub async fn cosign(&self, force: bool) -> Result<CosignRound, LogError> {
        let Some(witnessing) = &self.witnessing else {
            return Err(LogError::NotWitnessed);
        };
        let _round = witnessing.round.lock().await;
        let signed = self.checkpoint().await?;
        let head = signed.head;
        let state = witnessing.memory.read().await?;
        let mut held = match &state.witnessed {
            Some((size, note)) if *size == head.size && note.starts_with(&*signed.note) => {
                witnessing.cosignatures_on(note)
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
            async move { (*index, self.bring(witness, head, kept).await) }
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
            })
            .collect();
        for (index, (answer, size)) in answers {
            let outcome = &mut outcomes[index];
            outcome.size = size.or(outcome.size);
            match answer {
                Answer::Cosigned(cosignature) => {
                    outcome.outcome = "cosigned";
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
        let mut kept = false;
        if check.met {
            let mut note = signed.note.to_string();
            for (_, cosignature) in &held {
                note.push_str(&cosignature.line);
            }
            let times: Vec<(usize, u64)> = held.iter().map(|(i, c)| (*i, c.time)).collect();
            kept = witnessing
                .memory
                .keep_witnessed(head.size, &note, policy.quorum_time(&times))
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

    /// Brings `head`'s checkpoint to `witness`, from the size it is known
    /// to have cosigned (`kept`); once more from the size a `409` names.
    /// Answers what it did and the witness's size afterwards, if known.
    async fn bring(
        &self,
        witness: &Witness,
        head: Head,
        kept: Option<u64>,
    ) -> (Answer, Option<u64>) {
        let Some(witnessing) = &self.witnessing else {
            return (Answer::Skipped("the log is not witnessed".into()), kept);
        };
        let Some(url) = &witness.url else {
            return (Answer::Skipped("the policy gives no URL".into()), kept);
        };
        let key_text = witness.key.to_text();
        let mut from = kept.filter(|k| *k <= head.size).unwrap_or(0);
        for attempt in 0..2 {
            let (proof, note) = match self.consistency_signed(from, Some(head.size)).await {
                Ok(answer) => answer,
                Err(error) => return (Answer::Skipped(error.to_string()), kept),
            };
            let body = AddCheckpoint {
                old: from,
                proof: proof.path,
                checkpoint: note.to_string(),
            }
            .to_body();
            let reply = match witnessing
                .client
                .add_checkpoint(url, &body, WITNESS_TIMEOUT)
                .await
            {
                Ok(reply) => reply,
                Err(error) => {
                    return (
                        Answer::Skipped(error),
                        Some(from).filter(|_| kept.is_some()),
                    );
                }
            };
            match reply.status {
                200 => {
                    let text = &note[..note.find("\n\n").map_or(note.len(), |i| i + 1)];
                    let answer = match witness.key.cosignatures_in(text, &reply.body) {
                        Ok(found) => match found.iter().find(|c| dated_in_time(c)) {
                            Some(cosignature) => Answer::Cosigned(cosignature.clone()),
                            None => match found.iter().filter_map(seconds_ahead).min() {
                                Some(ahead) => {
                                    let detail = format!(
                                        "the witness's cosignature is dated {ahead} s ahead of this clock, more than the {MAX_FUTURE_SECONDS} s allowed, so it is not kept: this clock is slow or the witness's is fast"
                                    );
                                    self.alarm(witness, head, 200, detail, Halt::No).await
                                }
                                None => Answer::Skipped(
                                    "answered 200 without a usable cosignature by its key".into(),
                                ),
                            },
                        },
                        Err(error) => Answer::Skipped(format!("answered 200 with {error}")),
                    };
                    if let Err(error) = witnessing.memory.set_size(&key_text, head.size).await {
                        tracing::warn!(witness = %witness.name, %error, "cannot keep the witness's size");
                    }
                    return (answer, Some(head.size));
                }
                409 if is_size_hint(&reply) => {
                    let Some(size) = parse_size_hint(&reply.body) else {
                        return (
                            Answer::Skipped("a 409 whose size is unreadable".into()),
                            kept,
                        );
                    };
                    if size > head.size {
                        if self
                            .store
                            .head()
                            .await
                            .is_ok_and(|fresh| fresh.size >= size)
                        {
                            return (
                                Answer::Skipped(
                                    "the witness is ahead of this round: another round brought a newer head".into(),
                                ),
                                Some(size),
                            );
                        }
                        let detail = format!(
                            "the witness has cosigned a tree of {size} leaves, larger than the log's head of {}: the log went back or forked, or the witness misbehaves; the log signs nothing more",
                            head.size
                        );
                        self.learn_from(witness).await;
                        return (
                            self.alarm(witness, head, 409, detail, Halt::Yes).await,
                            Some(size),
                        );
                    }
                    if size == from {
                        let detail = format!(
                            "the witness holds a tree of {size} leaves yet refused the checkpoint of size {} from it: at the same size, another root (a fork, in the specification's wording before 2026-07); the log signs nothing more",
                            head.size
                        );
                        self.learn_from(witness).await;
                        return (
                            self.alarm(witness, head, 409, detail, Halt::Yes).await,
                            Some(size),
                        );
                    }
                    if kept.is_some_and(|k| size < k) {
                        tracing::warn!(witness = %witness.name, size, kept, "the witness has lost its state; bringing it up");
                    }
                    if let Err(error) = witnessing.memory.set_size(&key_text, size).await {
                        tracing::warn!(witness = %witness.name, %error, "cannot keep the witness's size");
                    }
                    if attempt == 1 {
                        return (
                            Answer::Skipped("the witness moved during the round".into()),
                            Some(size),
                        );
                    }
                    from = size;
                }
                409 | 422 => {
                    let detail = format!(
                        "the witness refused the checkpoint of size {} from size {from} ({}): it reports a fork or a bad proof; the log signs nothing more",
                        head.size, reply.status
                    );
                    self.learn_from(witness).await;
                    return (
                        self.alarm(witness, head, reply.status, detail, Halt::Yes)
                            .await,
                        kept,
                    );
                }
                status => {
                    return (Answer::Skipped(format!("answered {status}")), kept);
                }
            }
        }
        (
            Answer::Skipped("no cosignature after the size hint".into()),
            Some(from),
        )
    }

    /// Publishes a `log.witness_alarm` event with `detail`, when events go
    /// anywhere.
    pub(super) async fn publish_alarm(&self, detail: serde_json::Value) {
        let events = self.custody.events();
        if events.is_enabled() {
            events
                .publish(vec![OutsideEvent {
                    detail_type: WITNESS_ALARM,
                    detail,
                }])
                .await;
        }
    }

    /// Writes the checkpoint `witness` serves at its monitoring read into
    /// the log's memories when it is larger than theirs (best effort).
    async fn learn_from(&self, witness: &Witness) {
        let Some(verifier) = self.verifier_key() else {
            return;
        };
        if let Some(kept) = self.monitoring_read(witness, &verifier).await {
            self.custody.learn(&verifier, &kept).await;
        }
    }

    /// Raises an alarm about `witness`: an error-level log line and a
    /// `log.witness_alarm` event. With [`Halt::Yes`] (the witness revealed
    /// a tree the ledger does not extend) this process signs nothing more;
    /// reads and appends go on.
    async fn alarm(
        &self,
        witness: &Witness,
        head: Head,
        status: u16,
        detail: String,
        halt: Halt,
    ) -> Answer {
        if halt == Halt::Yes {
            self.custody.halt(&detail);
        }
        tracing::error!(
            origin = %self.origin,
            witness = %witness.name,
            key = %witness.key.to_text(),
            head_size = head.size,
            status,
            detail = %detail,
            "witness alarm"
        );
        self.publish_alarm(serde_json::json!({
            "origin": self.origin,
            "witness": witness.name,
            "key": witness.key.to_text(),
            "url": witness.url,
            "head": head,
            "status": status,
            "reason": detail,
        }))
        .await;
        Answer::Alarm(detail)
    }
}

/// Whether an alarm stops the log signing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Halt {
    /// It does: the witness holds a tree the ledger does not extend.
    Yes,
    /// It does not (a clock out of step).
    No,
}

/// How many seconds ahead of the clock `cosignature` is dated, when more
/// than allowed.
fn seconds_ahead(cosignature: &Cosignature) -> Option<i64> {
    let now = chrono::Utc::now().timestamp();
    i64::try_from(cosignature.time)
        .ok()
        .map(|t| t.saturating_sub(now))
        .filter(|ahead| *ahead > MAX_FUTURE_SECONDS)
}

fn is_size_hint(reply: &WitnessReply) -> bool {
    reply.content_type.as_deref() == Some(SIZE_HINT_TYPE)
}
