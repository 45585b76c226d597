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
use super::holds::{Holds, SizeNamed};
use super::prove::Nothing;
use super::witnessing::Deadline;
use super::{Log, LogError};
use crate::merkle::Head;
use crate::tlog::note::VerifierKey;
use crate::tlog::policy::{Policy, Witness};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use std::collections::BTreeSet;

/// What one witness's answers to a consultation come to.
enum Verdict {
    /// It showed what it holds, and the ledger extends it.
    Answered,
    /// It showed nothing (why): it counts as silent.
    Silent(String),
    /// It named a tree the memories contradict (why): an alarm against
    /// it, and it counts as silent.
    Contradicts(String),
    /// It serves a checkpoint of this log's key the ledger does not extend.
    Evidence(Refusal),
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
        let queued = witnessing.queue_consultation(deadline);
        let _one = self.custody.consulting.lock().await;
        drop(queued);
        if !self
            .custody
            .consultation_due(confirmed, deadline.round, self.tick_millis())
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
                    let verdict = self.verdict(witness, verifier, stored, deadline).await;
                    (index, witness, verdict)
                }
            })
            .collect();
        let mut answered = BTreeSet::new();
        let mut contradicted = false;
        while let Some((index, witness, verdict)) = asking.next().await {
            match verdict? {
                Verdict::Answered => {
                    answered.insert(index);
                    // Enough answered that the rest, silent, could not hide
                    // a quorum: their answers cannot change the outcome.
                    if no_quorum_hides(policy, &answered) {
                        break;
                    }
                }
                Verdict::Silent(detail) => {
                    tracing::warn!(witness = %witness.name, %detail, "the witness did not show what it holds of this log: not counted as having answered");
                }
                Verdict::Contradicts(reason) => {
                    self.witness_alarm(witness, stored, 409, reason).await;
                    contradicted = true;
                }
                Verdict::Evidence(refusal) => return Ok(Err(refusal)),
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
            .consulted(settled, contradicted, waiting, self.tick_millis());
        Ok(Ok(WitnessWord { settled }))
    }

    /// What `witness`'s answers come to (see [`Verdict`]), the store's head
    /// being `stored`; asked within `deadline`, concurrently with the
    /// others.
    async fn verdict(
        &self,
        witness: &Witness,
        verifier: &VerifierKey,
        stored: Head,
        deadline: Deadline,
    ) -> Result<Verdict, LogError> {
        let holds = match self.held_by(witness, verifier, deadline).await {
            Ok(holds) => holds,
            Err(detail) => return Ok(Verdict::Silent(detail)),
        };
        let named = match holds {
            Holds::Checkpoint(kept) => {
                if !self.store_extends(&kept).await? {
                    let reason = format!(
                        "the witness {} holds a checkpoint of {} records signed by this log's key that the ledger ({} records) does not extend: the store went back or forked",
                        witness.name, kept.head.size, stored.size
                    );
                    self.custody.learn(verifier, &kept).await;
                    return Ok(Verdict::Evidence(Refusal {
                        head: stored,
                        remembered: Some(kept.head),
                        reason,
                    }));
                }
                match self.latest_confirmed(witness, &kept, deadline).await {
                    Ok(larger) => larger,
                    Err(detail) => return Ok(Verdict::Silent(detail)),
                }
            }
            Holds::Size(size) => Some(size),
            Holds::Nothing => None,
        };
        let Some(size) = named else {
            return Ok(Verdict::Answered);
        };
        Ok(
            match self.size_named(witness, size, stored, deadline).await? {
                SizeNamed::Prefix => Verdict::Answered,
                SizeNamed::Unproven(detail) => Verdict::Silent(detail),
                SizeNamed::Contradicts(reason) => Verdict::Contradicts(reason),
            },
        )
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
