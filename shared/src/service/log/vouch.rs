//! The signing guard: a head is signed only once it is vouched for, that
//! is checked to extend every checkpoint the log is known to have signed
//! (its memories' and, after start-up, what its witnesses hold; the
//! consistency proof from the largest computed from the same tile read as
//! what was asked for) and remembered before anything signed of it is
//! served.

use super::custody::{self, Refusal, Relation, Remembered};
use super::prove::{Nothing, ProofKind};
use super::witnessing::Deadline;
use super::{Log, LogError};
use crate::merkle::Head;
use crate::ports::ledger_store::StoreError;

impl Log {
    /// `asked`, computed at `stored` (the store's current head) once that
    /// head is vouched for: checked to extend every checkpoint the log is
    /// known to have signed, with the consistency proof from the largest
    /// computed from the same tile read as `asked`, and remembered before
    /// anything signed of it is served. Once per head; a refusal is
    /// reported and answered.
    pub(super) async fn vouched<P: ProofKind + Copy>(
        &self,
        stored: Head,
        asked: P,
    ) -> Result<P::Proof, LogError> {
        self.vouched_by(stored, asked, self.deadline(false)).await
    }

    /// [`Log::vouched`], any consultation of the witnesses over by
    /// `deadline`.
    pub(super) async fn vouched_by<P: ProofKind + Copy>(
        &self,
        stored: Head,
        asked: P,
        deadline: Deadline,
    ) -> Result<P::Proof, LogError> {
        let signer = self.signer()?;
        let verifier = signer.verifier();
        for _ in 0..custody::MAX_ATTEMPTS {
            if let Some(reason) = self.custody.halted() {
                return Err(self
                    .refuse(Refusal {
                        head: stored,
                        remembered: None,
                        reason,
                    })
                    .await);
            }
            if self.custody.vouched(stored) {
                return Ok(self.prove(&stored, asked, None).await?.0);
            }
            let recollection = match self.custody.recollect(&verifier, stored).await? {
                Ok(recollection) => recollection,
                Err(refusal) => return Err(self.refuse(refusal).await),
            };
            let to_extend = recollection.distinct();
            let remembered = recollection.largest().map(|r| r.head);
            // With witnesses, the first memory holding this very head needs
            // no word (unless a witness just contradicted it); one that
            // holds nothing, or less (appends since it
            // signed, or a memory restored from a backup: nothing tells
            // them apart), needs the witnesses' (or the operator's,
            // `--new-log`).
            // Without witnesses, the first memory holding anything vouches
            // for the ledger's extending it (a restored backup of the key's
            // folder is the documented limit: only witnesses can tell).
            let new_head = recollection.primary().map(|r| r.head) != Some(stored);
            let remembers = if self.witnessing.is_some() {
                !new_head && !self.custody.contradicted()
            } else {
                recollection.primary().is_some()
            };
            let mut confirmed = remembers || self.custody.new_log() || stored.size == 0;
            // Once in each process before its first signature of a
            // non-empty head (even one its memory holds: a store restored
            // with its memory looks whole, and only the witnesses can show
            // the tree signed since), and again while unsettled.
            if stored.size > 0
                && self.witnessing.is_some()
                && self
                    .custody
                    .consultation_due(confirmed, deadline.round, self.tick_millis())
            {
                match self.ask_witnesses(stored, confirmed, deadline).await? {
                    // A witness that names a tree larger than the memories
                    // hold withdraws their word for the head they hold too
                    // (they may be a restored backup's): only the answered
                    // set settles it then.
                    Ok(_) if self.custody.contradicted() && !self.custody.new_log() => {
                        confirmed = self.custody.settled();
                    }
                    Ok(word) => confirmed |= word.settled,
                    Err(refusal) => return Err(self.halt(refusal).await),
                }
            } else if self.custody.settled() {
                confirmed = true;
            }
            if !confirmed {
                let reason = if self.witnessing.is_some() {
                    let waiting = self.custody.waiting();
                    format!(
                        "the log's memory does not hold this head ({}), and the witnesses that have not answered ({}) could on their own hold a larger or other tree of it: it signs once enough of them answer that none can hide one (asked again every round), or start with --new-log if this key signed nothing this ledger does not extend",
                        match recollection.primary() {
                            Some(kept) => format!("it remembers {} records", kept.head.size),
                            None => "it remembers nothing".to_owned(),
                        },
                        if waiting.is_empty() {
                            "none asked yet".to_owned()
                        } else {
                            waiting.join(", ")
                        }
                    )
                } else {
                    "nothing remembers what this log's key signed: it signs this ledger only once started with --new-log (FF_LOG_NEW_LOG=true under Lambda), which says this key signed nothing the ledger does not extend".to_owned()
                };
                return Err(self
                    .refuse(Refusal {
                        head: stored,
                        remembered,
                        reason,
                    })
                    .await);
            }
            let mut to_prove: Vec<Remembered> = Vec::new();
            for kept in to_extend {
                match custody::compare(stored, &kept) {
                    Err(reason) => {
                        return Err(self
                            .refuse(Refusal {
                                head: stored,
                                remembered: Some(kept.head),
                                reason,
                            })
                            .await);
                    }
                    Ok(Relation::Larger { prove: true }) => {
                        if !to_prove.iter().any(|k| k.head == kept.head) {
                            to_prove.push(kept);
                        }
                    }
                    Ok(_) => {}
                }
            }
            to_prove.sort_by_key(|kept| std::cmp::Reverse(kept.head.size));
            let proof = self.proved(stored, asked, to_prove.first()).await?;
            for kept in to_prove.iter().skip(1) {
                self.proved(stored, Nothing { head: stored }, Some(kept))
                    .await?;
            }
            if stored.size == 0 || self.custody.vouch(&recollection, stored) {
                return Ok(proof);
            }
            let note = signer.sign(stored);
            if self.custody.remember(&recollection, stored, &note).await? {
                return Ok(proof);
            }
        }
        Err(
            StoreError::unavailable_now("other signers kept moving the signer's memory; try again")
                .into(),
        )
    }

    /// `asked` at `stored`, with the consistency proof from `kept` (when
    /// given) computed from the same tile read and checked to start at
    /// its root; a refusal when it does not.
    async fn proved<P: ProofKind>(
        &self,
        stored: Head,
        asked: P,
        kept: Option<&Remembered>,
    ) -> Result<P::Proof, LogError> {
        let refused = |reason| Refusal {
            head: stored,
            remembered: kept.map(|kept| kept.head),
            reason,
        };
        let (proof, tie) = match self
            .prove(&stored, asked, kept.map(|kept| kept.head.size))
            .await
        {
            Ok(answer) => answer,
            Err(LogError::Store(error)) if error.is_transient() => return Err(error.into()),
            Err(error) if kept.is_some() => {
                let reason = format!(
                    "the ledger cannot prove it extends the checkpoint the log signed ({error})"
                );
                return Err(self.refuse(refused(reason)).await);
            }
            Err(error) => return Err(error),
        };
        if let (Some(kept), Some(from_root)) = (kept, tie)
            && let Err(reason) = custody::proves(&from_root, kept)
        {
            return Err(self.refuse(refused(reason)).await);
        }
        Ok(proof)
    }

    /// Reports `refusal` (once) and gives the error every signing view answers.
    pub(super) async fn refuse(&self, refusal: Refusal) -> LogError {
        self.custody.report(&self.origin, &refusal).await;
        LogError::RefusedToSign(refusal.reason)
    }
}
