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
//! A witness that does not answer is skipped. A log whose first memory
//! holds something signs on after one consultation whatever answered; one
//! whose first memory holds nothing signs a non-empty head only once
//! witnesses enough to meet the policy's quorum have answered.

use super::custody::{Refusal, Remembered};
use super::prove::Nothing;
use super::witnessing::WITNESS_TIMEOUT;
use super::{Log, LogError};
use crate::merkle::Head;
use crate::ports::witness_client::WitnessReply;
use crate::tlog::checkpoint::Checkpoint;
use crate::tlog::note::VerifierKey;
use crate::tlog::policy::Witness;
use crate::tlog::witness::{AddCheckpoint, SIZE_HINT_TYPE, origin_hash, parse_size_hint};
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
    /// Whether witnesses enough to meet the quorum answered.
    pub(super) settled: bool,
}

impl Log {
    /// Asks every witness what it holds of this log (one consultation at
    /// a time; a request that waited for another's uses its outcome): a
    /// refusal when one holds a tree the store does not extend (checked
    /// against the store's head read again, so a round that another
    /// process brought further is not taken for a fork; a checkpoint the
    /// witness serves is proved a prefix of it).
    pub(super) async fn ask_witnesses(
        &self,
        stored: Head,
        confirmed: bool,
    ) -> Result<Result<WitnessWord, Refusal>, LogError> {
        let Some(witnessing) = &self.witnessing else {
            return Ok(Ok(WitnessWord::default()));
        };
        let _one = self.custody.consulting.lock().await;
        if !self.custody.consultation_due(confirmed) {
            return Ok(Ok(WitnessWord {
                settled: self.custody.settled(),
            }));
        }
        let verifier = self.signer()?.verifier();
        let answers =
            futures_util::future::join_all(witnessing.policy.witnesses().iter().enumerate().map(
                |(index, witness)| {
                    let verifier = &verifier;
                    async move { (index, witness, self.held_by(witness, verifier).await) }
                },
            ))
            .await;
        let mut answered = BTreeSet::new();
        let mut word = WitnessWord::default();
        for (index, witness, answer) in answers {
            let holds = match answer {
                Ok(holds) => holds,
                Err(detail) => {
                    tracing::warn!(witness = %witness.name, %detail, "could not ask the witness what it holds of this log");
                    continue;
                }
            };
            answered.insert(index);
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
                    if let Some(reason) = self.unproven_size(witness, size, stored).await? {
                        return Ok(Err(Refusal {
                            head: stored,
                            remembered: None,
                            reason,
                        }));
                    }
                }
                Holds::Nothing => {}
            }
        }
        word.settled = !answered.is_empty() && witnessing.policy.check(&answered).met;
        self.custody.consulted(word.settled || confirmed);
        Ok(Ok(word))
    }

    /// Why a tree of `size` records a witness cosigned (a size alone, its
    /// root not served) keeps the log from signing `stored`: it is larger
    /// than the store's head (read again), or larger than any checkpoint
    /// the memories hold (read again). The memories are written before
    /// anything signed is served, so a witness never legitimately holds
    /// more than they do: they went back, and without the witness's root
    /// nothing shows whether the ledger is the history it holds, unless
    /// the operator said this key signed nothing else (`--new-log`).
    async fn unproven_size(
        &self,
        witness: &Witness,
        size: u64,
        stored: Head,
    ) -> Result<Option<String>, LogError> {
        if size <= stored.size && self.custody.new_log() {
            return Ok(None);
        }
        if size > stored.size && self.store.head().await?.size < size {
            return Ok(Some(format!(
                "the witness {} has cosigned a tree of {size} records of this log, larger than the ledger's {}: the store went back or forked",
                witness.name, stored.size
            )));
        }
        let verifier = self.signer()?.verifier();
        self.custody.forget();
        let remembered = match self.custody.recollect(&verifier, stored).await? {
            Ok(recollection) => recollection.largest().map_or(0, |r| r.head.size),
            Err(refusal) => return Ok(Some(refusal.reason)),
        };
        Ok((size > remembered).then(|| {
            format!(
                "the witness {} has cosigned a tree of {size} records of this log, more than its memories hold ({remembered}), and does not serve that checkpoint to compare: the memories went back with the store; restore them, or start with --new-log only if this key signed nothing the ledger does not extend",
                witness.name
            )
        }))
    }

    /// Whether the store's current head extends `kept` (a checkpoint a
    /// witness holds that the head a request read does not reach).
    async fn store_extends(&self, kept: &Remembered) -> Result<bool, LogError> {
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
    ) -> Result<Holds, String> {
        let Some(witnessing) = &self.witnessing else {
            return Err("the log is not witnessed".into());
        };
        let Some(url) = &witness.url else {
            return Err("the policy gives no URL".into());
        };
        if let Some(kept) = self.monitoring_read(witness, verifier).await {
            return Ok(Holds::Checkpoint(kept));
        }
        let signer = self.signer().map_err(|e| e.to_string())?;
        let body = AddCheckpoint {
            old: 0,
            proof: Vec::new(),
            checkpoint: signer.sign(Head::empty()).to_string(),
        }
        .to_body();
        let reply = witnessing
            .client
            .add_checkpoint(url, &body, WITNESS_TIMEOUT)
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
    ) -> Option<Remembered> {
        let witnessing = self.witnessing.as_ref()?;
        let url = witness.url.as_ref()?;
        let reply: WitnessReply = witnessing
            .client
            .latest_checkpoint(url, &origin_hash(&self.origin), WITNESS_TIMEOUT)
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
