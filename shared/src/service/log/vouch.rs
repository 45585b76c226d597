//! The signing guard: a head is signed only once it is vouched for, that
//! is checked to extend the largest checkpoint the log has signed (the
//! consistency proof from it computed from the same tile read as what was
//! asked for) and remembered before anything signed of it is served.

use super::custody::{self, Refusal, Relation, Vouch};
use super::prove::ProofKind;
use super::{Log, LogError};
use crate::merkle::Head;
use crate::ports::ledger_store::StoreError;
use crate::tlog::note::VerifierKey;

impl Log {
    /// Whether `head` (the store's current head) can be signed, before any
    /// tile is read: already vouched for, or to be remembered (after a
    /// consistency proof from the remembered checkpoint, when one is
    /// needed); a refusal when it cannot extend what the log signed.
    pub(super) async fn precheck(
        &self,
        verifier: &VerifierKey,
        head: Head,
    ) -> Result<Vouch, LogError> {
        if self.custody.vouched(head) {
            return Ok(Vouch::Done);
        }
        let remembered = match self.custody.remembered(verifier, head).await? {
            Ok(remembered) => remembered,
            Err(refusal) => return Err(self.refuse(refusal).await),
        };
        let Some(kept) = remembered else {
            return Ok(Vouch::Remember {
                previous: None,
                prove: false,
            });
        };
        match custody::compare(head, &kept) {
            Err(reason) => Err(self
                .refuse(Refusal {
                    head,
                    remembered: Some(kept.head),
                    reason,
                })
                .await),
            Ok(Relation::Same) => {
                self.custody.vouch(head);
                Ok(Vouch::Done)
            }
            Ok(Relation::Larger { prove }) => Ok(Vouch::Remember {
                previous: Some(kept),
                prove,
            }),
        }
    }

    /// `asked`, computed at `stored` (the store's current head) once that
    /// head is vouched for: checked to extend the largest checkpoint the
    /// log has signed, with the consistency proof from it computed from the
    /// same tile read as `asked`, and remembered before anything signed of
    /// it is served. Once per head; a refusal is reported and answered.
    pub(super) async fn vouched<P: ProofKind + Copy>(
        &self,
        stored: Head,
        asked: P,
    ) -> Result<P::Proof, LogError> {
        let signer = self.signer()?;
        for _ in 0..custody::MAX_ATTEMPTS {
            let vouch = self.precheck(&signer.verifier(), stored).await?;
            let to_prove = match &vouch {
                Vouch::Remember {
                    previous: Some(kept),
                    prove: true,
                } => Some(kept),
                _ => None,
            };
            let refused = |reason| Refusal {
                head: stored,
                remembered: to_prove.map(|kept| kept.head),
                reason,
            };
            let (proof, tie) = match self
                .prove(&stored, asked, to_prove.map(|kept| kept.head.size))
                .await
            {
                Ok(answer) => answer,
                Err(LogError::Store(error)) if error.is_transient() => return Err(error.into()),
                Err(error) if to_prove.is_some() => {
                    let reason = format!(
                        "the ledger cannot prove it extends the checkpoint the log signed ({error})"
                    );
                    return Err(self.refuse(refused(reason)).await);
                }
                Err(error) => return Err(error),
            };
            if let (Some(kept), Some(from_root)) = (to_prove, tie)
                && let Err(reason) = custody::proves(&from_root, kept)
            {
                return Err(self.refuse(refused(reason)).await);
            }
            let Vouch::Remember { previous, .. } = vouch else {
                return Ok(proof);
            };
            let note = signer.sign(stored);
            if self
                .custody
                .remember(previous.as_ref(), stored, &note)
                .await?
            {
                return Ok(proof);
            }
        }
        Err(
            StoreError::unavailable_now("other signers kept moving the signer's memory; try again")
                .into(),
        )
    }

    /// Reports `refusal` (once) and gives the error every signing view answers.
    pub(super) async fn refuse(&self, refusal: Refusal) -> LogError {
        self.custody.report(&self.origin, &refusal).await;
        LogError::RefusedToSign(refusal.reason)
    }
}
