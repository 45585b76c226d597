//! The witnesses are the signer's memory of last resort. A memory kept
//! beside the ledger is lost or restored with it; a witness keeps the
//! latest checkpoint it cosigned, a note signed by this log's own key and
//! so proof of what the key signed. With a policy, before the log signs a
//! new head for the first time in a process (and, while its first memory
//! holds nothing, until the witnesses have settled it), it asks each
//! witness what it holds of this log: the monitoring read (`GET
//! <url>/<hex SHA-256(origin)>/checkpoint`) where the witness serves it,
//! else the size a `409` names to an `add-checkpoint` of the empty tree
//! (which every history shares). While any witness holds a larger tree,
//! or another root at its size, the log signs nothing (every signing view
//! answers 500, an error line and `log.witness_alarm` say why), and a
//! larger checkpoint the witness holds is written into the log's memories
//! so the refusal outlives the process.
//!
//! Settled only when no earlier quorum can hide. Witnesses that answer
//! prove what they hold, not what the silent ones hold; so a log whose
//! first memory does not hold the head it is asked to sign (no memory, a
//! memory behind the store, or one restored from a backup: nothing tells
//! them apart) signs only once the witnesses that did *not* answer could
//! not on their own have met the policy's quorum (k of n: at least
//! n − k + 1 answered). Any earlier quorum then shares a witness with those
//! that answered, whose latest checkpoint the ledger must extend. Until
//! then it signs nothing, names the witnesses it waits for, and asks again
//! at the next round. Under a policy whose quorums can be disjoint (1 of
//! 2, 2 of 4) that is more than a quorum: the old rule (a quorum of
//! answers) let a minority that never saw the log settle it.
//!
//! One witness cannot stop the log: a size it names that the memories
//! contradict (a `409` naming a tree larger than any the log remembers,
//! without the checkpoint to show) is an alarm against that witness, which
//! counts as silent for the rule above; only a checkpoint signed by this
//! log's key that the ledger does not extend is evidence, and stops the
//! signing.

use super::custody::{Refusal, Remembered};
use super::prove::Nothing;
use super::witnessing::Deadline;
use super::{Log, LogError};
use crate::merkle::Head;
use crate::ports::witness_client::WitnessReply;
use crate::tlog::checkpoint::Checkpoint;
use crate::tlog::note::VerifierKey;
use crate::tlog::policy::{Policy, Witness};
use crate::tlog::witness::{AddCheckpoint, SIZE_HINT_TYPE, origin_hash, parse_size_hint};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use std::collections::BTreeSet;

/// What one witness holds of this log.
#[derive(Debug)]
pub(super) enum Holds {
    /// A checkpoint this log's key signed, as its monitoring read serves it.
    Checkpoint(Remembered),
    /// A tree of this size, as a `409` names it.
    Size(u64),
    /// Nothing: it never cosigned this log (or does not trust its key).
    Nothing,
}

/// What the witnesses said, when none holds a tree the store does not
/// extend.
#[derive(Debug, Default)]
pub(super) struct WitnessWord {
    /// Whether the witnesses that did not answer could not, on their own,
    /// have met the quorum.
    pub(super) settled: bool,
}

impl Log {
    /// Asks every witness what it holds of this log (one consultation at
    /// a time; a request that waited for another's uses its outcome),
    /// each within `deadline`: a refusal when one serves a checkpoint of
    /// this log's key that the store does not extend (checked against the
    /// store's head read again, so a round that another process brought
    /// further is not taken for a fork). Settled when the witnesses that
    /// did not answer (or named a size the memories contradict) could not
    /// on their own meet the quorum.
    pub(super) async fn ask_witnesses(
        &self,
        stored: Head,
        confirmed: bool,
        deadline: Deadline,
    ) -> Result<Result<WitnessWord, Refusal>, LogError> {
        let Some(witnessing) = &self.witnessing else {
            return Ok(Ok(WitnessWord::default()));
        };
        let _one = self.custody.consulting.lock().await;
        if !self
            .custody
            .consultation_due(confirmed, deadline.round, self.now().timestamp_millis())
        {
            return Ok(Ok(WitnessWord {
                settled: self.custody.settled(),
            }));
        }
        let verifier = self.signer()?.verifier();
        let policy = &witnessing.policy;
        let mut asking: FuturesUnordered<_> = policy
            .witnesses()
            .iter()
            .enumerate()
            .map(|(index, witness)| {
                let verifier = &verifier;
                async move {
                    (
                        index,
                        witness,
                        self.held_by(witness, verifier, deadline).await,
                    )
                }
            })
            .collect();
        let mut answered = BTreeSet::new();
        while let Some((index, witness, answer)) = asking.next().await {
            let holds = match answer {
                Ok(holds) => holds,
                Err(detail) => {
                    tracing::warn!(witness = %witness.name, %detail, "could not ask the witness what it holds of this log");
                    continue;
                }
            };
            match holds {
                Holds::Checkpoint(kept) => {
                    if !self.store_extends(&kept).await? {
                        let reason = format!(
                            "the witness {} holds a checkpoint of {} records signed by this log's key that the ledger ({} records) does not extend: the store went back or forked",
                            witness.name, kept.head.size, stored.size
                        );
                        self.custody.learn(&verifier, &kept).await;
                        return Ok(Err(Refusal {
                            head: stored,
                            remembered: Some(kept.head),
                            reason,
                        }));
                    }
                }
                Holds::Size(size) => {
                    if let Some(reason) = self.contradicted(witness, size, stored).await? {
                        self.witness_alarm(witness, stored, 409, reason).await;
                        continue;
                    }
                }
                Holds::Nothing => {}
            }
            answered.insert(index);
            // Enough answered that the rest, silent, could not hide a
            // quorum: their answers cannot change the outcome.
            if no_quorum_hides(policy, &answered) {
                break;
            }
        }
        drop(asking);
        let silent: BTreeSet<usize> = (0..policy.witnesses().len())
            .filter(|index| !answered.contains(index))
            .collect();
        let settled = no_quorum_hides(policy, &answered);
        let waiting = silent
            .iter()
            .map(|&index| policy.witnesses()[index].name.clone())
            .collect();
        // A head its memory holds is signed whatever the witnesses said
        // (`confirmed`), but only their word settles the next new head.
        self.custody
            .consulted(settled, waiting, self.now().timestamp_millis());
        Ok(Ok(WitnessWord { settled }))
    }

    /// Why a tree of `size` records a witness says it cosigned (a size
    /// alone, its root not served) cannot be squared with what the log
    /// knows: larger than the store's head (read again) while the log
    /// remembers less, or larger than any checkpoint the memories hold
    /// (read again). The memories are written before anything signed is
    /// served, so either the witness is wrong or the memories went back
    /// with the store; without the witness's checkpoint nothing shows
    /// which, so the witness is not counted as having answered (an alarm
    /// names it), unless the operator said this key signed nothing else
    /// (`--new-log`) and the size is within the ledger.
    async fn contradicted(
        &self,
        witness: &Witness,
        size: u64,
        stored: Head,
    ) -> Result<Option<String>, LogError> {
        if size <= stored.size && self.custody.new_log() {
            return Ok(None);
        }
        let verifier = self.signer()?.verifier();
        self.custody.forget();
        let remembered = match self.custody.recollect(&verifier, stored).await? {
            Ok(recollection) => recollection.largest().map_or(0, |r| r.head.size),
            Err(refusal) => return Ok(Some(refusal.reason)),
        };
        if size <= remembered {
            return Ok(None);
        }
        Ok(Some(
            if size > stored.size && self.store.head().await?.size < size {
                format!(
                    "the witness {} says it cosigned a tree of {size} records of this log, larger than the ledger's {} and than any the log remembers signing ({remembered}), and does not serve that checkpoint: the store and its memories went back, or the witness misbehaves; it is not counted as having answered",
                    witness.name, stored.size
                )
            } else {
                format!(
                    "the witness {} says it cosigned a tree of {size} records of this log, more than its memories hold ({remembered}), and does not serve that checkpoint to compare: the memories went back with the store, or the witness misbehaves; it is not counted as having answered",
                    witness.name
                )
            },
        ))
    }

    /// Whether the store's current head extends `kept` (a checkpoint a
    /// witness holds that the head a request read does not reach).
    pub(super) async fn store_extends(&self, kept: &Remembered) -> Result<bool, LogError> {
        let fresh = self.store.head().await?;
        if fresh.size < kept.head.size {
            return Ok(false);
        }
        if fresh.size == kept.head.size {
            return Ok(fresh.root_hash == kept.head.root_hash);
        }
        let (_, tie) = self
            .prove(&fresh, Nothing { head: fresh }, Some(kept.head.size))
            .await?;
        Ok(tie == Some(kept.head.root_hash))
    }

    /// What `witness` holds of this log: its monitoring read when it serves
    /// one signed by this log's key, else what a `409` to the empty tree's
    /// checkpoint names. `Err` (a sentence) when it did not say.
    pub(super) async fn held_by(
        &self,
        witness: &Witness,
        verifier: &VerifierKey,
        deadline: Deadline,
    ) -> Result<Holds, String> {
        let Some(witnessing) = &self.witnessing else {
            return Err("the log is not witnessed".into());
        };
        let Some(url) = &witness.url else {
            return Err("the policy gives no URL".into());
        };
        if let Some(kept) = self.monitoring_read(witness, verifier, deadline).await {
            return Ok(Holds::Checkpoint(kept));
        }
        let timeout = self.time_left(deadline).ok_or("no time left to ask")?;
        let signer = self.signer().map_err(|e| e.to_string())?;
        let body = AddCheckpoint {
            old: 0,
            proof: Vec::new(),
            checkpoint: signer.sign(Head::empty()).to_string(),
        }
        .to_body();
        let reply = witnessing
            .client
            .add_checkpoint(url, &body, timeout)
            .await?;
        match reply.status {
            200 | 403 | 404 => Ok(Holds::Nothing),
            409 if reply.content_type.as_deref() == Some(SIZE_HINT_TYPE) => {
                match parse_size_hint(&reply.body) {
                    Some(0) => Ok(Holds::Nothing),
                    Some(size) => Ok(Holds::Size(size)),
                    None => Err("a 409 whose size is unreadable".into()),
                }
            }
            status => Err(format!("answered {status}")),
        }
    }

    /// The latest checkpoint of this log `witness` serves at its monitoring
    /// read, when it serves one this log's key signed.
    pub(super) async fn monitoring_read(
        &self,
        witness: &Witness,
        verifier: &VerifierKey,
        deadline: Deadline,
    ) -> Option<Remembered> {
        let witnessing = self.witnessing.as_ref()?;
        let url = witness.url.as_ref()?;
        let timeout = self.time_left(deadline)?;
        let reply: WitnessReply = witnessing
            .client
            .latest_checkpoint(url, &origin_hash(&self.origin), timeout)
            .await
            .ok()
            .filter(|reply| reply.status == 200)?;
        let checkpoint = Checkpoint::open(&reply.body, verifier).ok()?;
        (checkpoint.origin == self.origin).then_some(Remembered {
            head: Head {
                size: checkpoint.size,
                root_hash: checkpoint.root,
            },
            note: reply.body,
        })
    }

    /// Stops this process signing anything for `refusal`'s reason (a witness
    /// revealed a tree the ledger does not extend): an error line, the
    /// refusal's event and `log.witness_alarm`.
    pub(super) async fn halt(&self, refusal: Refusal) -> LogError {
        self.custody.halt(&refusal.reason);
        self.publish_alarm(serde_json::json!({
            "origin": self.origin,
            "head": refusal.head,
            "witnessHolds": refusal.remembered,
            "reason": refusal.reason,
        }))
        .await;
        self.refuse(refusal).await
    }
}

/// Whether the witnesses not in `answered` could not, on their own, meet
/// the policy's quorum (with `quorum none`, when every witness answered).
fn no_quorum_hides(policy: &Policy, answered: &BTreeSet<usize>) -> bool {
    let silent: BTreeSet<usize> = (0..policy.witnesses().len())
        .filter(|index| !answered.contains(index))
        .collect();
    silent.is_empty() || (!policy.needs_no_cosignature() && !policy.check(&silent).met)
}
