//! What each witness's answer means in a round, and the alarms.
//!
//! Per witness: `200` gives cosignature lines, only those that verify
//! under the witness's key (and are not dated more than ten minutes ahead)
//! are kept; a `409` with `text/x.tlog.size` names the size it last
//! cosigned, kept, and the request is made once more from it (a size below
//! the one kept: the witness lost its state, a warning). Anything else
//! (403, 404, 429, 5xx, no answer in the time left) skips that witness
//! this round.
//!
//! One witness cannot stop the log: a policy of k of n promises to
//! tolerate n − k bad witnesses. So a `422`, a `409` without a size, a
//! size above the log's head, or a refusal at the size it holds, from one
//! witness, is an alarm against *that witness* (an error line and a
//! `log.witness_alarm` event; it is skipped for the round). Signing stops
//! only on evidence: a checkpoint signed by this log's key, read from the
//! witness's monitoring endpoint, that the ledger does not extend; that
//! checkpoint is then written into the log's memories, so the refusal
//! outlives the process.

use super::custody::Refusal;
use super::witnessing::{Answer, Deadline, MAX_FUTURE_SECONDS, dated_in_time};
use super::{Log, WITNESS_ALARM};
use crate::merkle::Head;
use crate::ports::event_sink::OutsideEvent;
use crate::ports::witness_client::WitnessReply;
use crate::tlog::cosignature::Cosignature;
use crate::tlog::policy::Witness;
use crate::tlog::witness::{AddCheckpoint, SIZE_HINT_TYPE, parse_size_hint};

impl Log {
    /// Brings `head`'s checkpoint to `witness`, from the size it is known
    /// to have cosigned (`kept`); once more from the size a `409` names;
    /// every request within `deadline`. Answers what it did and the
    /// witness's size afterwards, if known.
    pub(super) async fn bring(
        &self,
        witness: &Witness,
        head: Head,
        kept: Option<u64>,
        deadline: Deadline,
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
            if self.time_left(deadline).is_none() {
                return (Answer::Skipped("no time left in the round".into()), kept);
            }
            let (proof, note) = match self
                .consistency_signed_by(from, Some(head.size), deadline)
                .await
            {
                Ok(answer) => answer,
                Err(error) => return (Answer::Skipped(error.to_string()), kept),
            };
            let Some(timeout) = self.time_left(deadline) else {
                return (Answer::Skipped("no time left in the round".into()), kept);
            };
            let body = AddCheckpoint {
                old: from,
                proof: proof.path,
                checkpoint: note.to_string(),
            }
            .to_body();
            let reply = match witnessing.client.add_checkpoint(url, &body, timeout).await {
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
                    let answer = self.cosigned(witness, head, text, &reply.body).await;
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
                        let claim = format!(
                            "the witness says it cosigned a tree of {size} leaves, larger than the log's head of {}",
                            head.size
                        );
                        return (
                            self.claim(witness, head, 409, claim, deadline).await,
                            Some(size),
                        );
                    }
                    if size == from {
                        let claim = format!(
                            "the witness holds a tree of {size} leaves yet refused the checkpoint of size {} from it: at the same size, another root (a fork, in the specification's wording before 2026-07)",
                            head.size
                        );
                        return (
                            self.claim(witness, head, 409, claim, deadline).await,
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
                    let claim = format!(
                        "the witness refused the checkpoint of size {} from size {from} ({}): it reports a fork or a bad proof",
                        head.size, reply.status
                    );
                    return (
                        self.claim(witness, head, reply.status, claim, deadline)
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

    /// What a `200`'s `body` gives: the witness's first cosignature of
    /// `text` that verifies and is not dated too far ahead; an alarm when
    /// the only ones are dated too far ahead.
    async fn cosigned(&self, witness: &Witness, head: Head, text: &str, body: &str) -> Answer {
        let now = self.now().timestamp();
        let found = match witness.key.cosignatures_in(text, body) {
            Ok(found) => found,
            Err(error) => return Answer::Skipped(format!("answered 200 with {error}")),
        };
        if let Some(cosignature) = found.iter().find(|c| dated_in_time(c, now)) {
            return Answer::Cosigned(cosignature.clone());
        }
        match found.iter().filter_map(|c| seconds_ahead(c, now)).min() {
            Some(ahead) => {
                let detail = format!(
                    "the witness's cosignature is dated {ahead} s ahead of this clock, more than the {MAX_FUTURE_SECONDS} s allowed, so it is not kept: this clock is slow or the witness's is fast"
                );
                self.witness_alarm(witness, head, 200, detail.clone()).await;
                Answer::Alarm(detail)
            }
            None => Answer::Skipped("answered 200 without a usable cosignature by its key".into()),
        }
    }

    /// A witness's claim of a fork, a larger tree or a bad proof: signing
    /// stops only when the witness backs it with evidence (its monitoring
    /// read serves a checkpoint of this log's key that the ledger does not
    /// extend); otherwise it is an alarm against the witness, skipped for
    /// the round.
    async fn claim(
        &self,
        witness: &Witness,
        head: Head,
        status: u16,
        claim: String,
        deadline: Deadline,
    ) -> Answer {
        if let Some(refusal) = self.evidence_from(witness, deadline).await {
            let detail = format!("{claim}; {}; the log signs nothing more", refusal.reason);
            self.custody.halt(&detail);
            self.witness_alarm(witness, head, status, detail.clone())
                .await;
            return Answer::Alarm(detail);
        }
        let detail = format!(
            "{claim}, and serves no checkpoint of this log that the ledger does not extend: an alarm against this witness, skipped this round (the log goes on signing)"
        );
        self.witness_alarm(witness, head, status, detail.clone())
            .await;
        Answer::Alarm(detail)
    }

    /// The checkpoint `witness` serves at its monitoring read, when it is
    /// one of this log's key that the ledger does not extend: the refusal
    /// it is evidence for (the checkpoint is written into the log's
    /// memories first). A larger checkpoint the ledger does extend is
    /// learned too.
    async fn evidence_from(&self, witness: &Witness, deadline: Deadline) -> Option<Refusal> {
        let verifier = self.verifier_key()?;
        let kept = self.monitoring_read(witness, &verifier, deadline).await?;
        let head = self.store.head().await.ok()?;
        let extends = self.store_extends(&kept).await.ok()?;
        self.custody.learn(&verifier, &kept).await;
        (!extends).then(|| Refusal {
            head,
            remembered: Some(kept.head),
            reason: format!(
                "the witness {} serves a checkpoint of {} records signed by this log's key that the ledger ({} records) does not extend",
                witness.name, kept.head.size, head.size
            ),
        })
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

    /// Raises an alarm about `witness`: an error-level log line and a
    /// `log.witness_alarm` event, once while the witness keeps answering
    /// the same way round after round (then at debug level), again once it
    /// has cosigned. Reads, appends and signing go on.
    pub(super) async fn witness_alarm(
        &self,
        witness: &Witness,
        head: Head,
        status: u16,
        detail: String,
    ) {
        let repeated = self.witnessing.as_ref().is_some_and(|witnessing| {
            witnessing
                .alarms
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(witness.name.clone(), status)
                == Some(status)
        });
        if repeated {
            tracing::debug!(witness = %witness.name, status, detail = %detail, "witness alarm, as in the last round");
            return;
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
    }
}

/// How many seconds ahead of `now` `cosignature` is dated, when more than
/// allowed.
fn seconds_ahead(cosignature: &Cosignature, now: i64) -> Option<i64> {
    i64::try_from(cosignature.time)
        .ok()
        .map(|t| t.saturating_sub(now))
        .filter(|ahead| *ahead > MAX_FUTURE_SECONDS)
}

fn is_size_hint(reply: &WitnessReply) -> bool {
    reply.content_type.as_deref() == Some(SIZE_HINT_TYPE)
}
