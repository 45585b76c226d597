//! `freedom-verify monitor`: anyone can watch the log (docs/log.md,
//! "Monitoring the log"). A pass fetches the signed checkpoint, checks its
//! signature and (with a policy) its quorum, proves it consistent with the
//! checkpoint kept, fetches only the new entries and re-derives the root
//! from their bytes, and checks the ledger's rules on each new record
//! ([`rules`]). What it finds wrong is an [`Alarm`]: a JSON evidence file
//! in `<state>/alarms/` that stands alone (the signed notes, the proofs,
//! the offending bytes) and an entry of the Atom feed.
//!
//! The state (`<state>/state.json`: the checkpoint kept, the tree's right
//! edge, when the log last answered, and the name of the file holding what
//! the rules remember, read only by a pass with new entries) is written
//! whole, atomically (a temporary file, fsync, rename, fsync of the
//! folder), and only after the alarms of the pass are written, so a crash
//! at any point leaves either the old state (the next pass finds the same
//! fault again) or the new one with its alarms already on disk: never a
//! state that hides an alarm. A checkpoint that raises a log alarm (a
//! fork, a rollback, a bad signature, entries that do not hash to it, a
//! lost quorum) is never kept.
//!
//! Cost: a pass fetches the checkpoint, one consistency proof (O(log n)
//! hashes) and the entry bundles holding the new entries (O(new / 256 + 1)
//! requests), hashes the new entries, and writes a state of a few hundred
//! bytes; a pass with new entries also reads and rewrites the rules' file
//! (16 bytes of id table a record).

mod alarm;
pub mod rules;
mod state;

use alarm::write_alarms;
pub use alarm::{Alarm, AlarmKind};
use state::MonitorState;

use crate::{
    Failure, Fetched, Service, WitnessFault, check_policy_trusts, fetch_entries, now,
    witness_verdict,
};
use freedom_tlog::checkpoint::Checkpoint;
use freedom_tlog::merkle::{Digest, leaf_hash};
use freedom_tlog::note::VerifierKey;
use freedom_tlog::policy::Policy;
use freedom_tlog::proof::verify_consistency;
use serde::Deserialize;
use serde_json::json;
use std::path::PathBuf;

/// How long the log may go unanswered, or its served checkpoint stay
/// behind its head, before the monitor says so.
pub const PATIENCE_SECONDS: u64 = 3600;

/// What one monitor watches, and where it keeps its state.
#[derive(Debug, Clone)]
pub struct Monitor {
    /// The service.
    pub service: Service,
    /// The log's verifier key.
    pub key: VerifierKey,
    /// The witness policy and its text, when one is given.
    pub policy: Option<(Policy, String)>,
    /// The state folder.
    pub state: PathBuf,
    /// The Atom feed to write, when asked for.
    pub feed: Option<PathBuf>,
}

/// What a pass found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    /// The size of the checkpoint kept after the pass.
    pub size: u64,
    /// How many entries this pass verified (the new ones).
    pub verified: u64,
    /// The alarms it raised, each with its evidence file.
    pub alarms: Vec<(AlarmKind, PathBuf)>,
    /// The log could not be reached this pass (and has not been for less
    /// than [`PATIENCE_SECONDS`]): nothing is known either way.
    pub unreachable: Option<String>,
}

impl Monitor {
    /// One pass (see the module's documentation). `Err` only when the
    /// pass cannot run at all (its state unreadable or unwritable); the
    /// log's faults are alarms.
    pub async fn pass(&self) -> Result<Pass, Failure> {
        self.pass_at(now()).await
    }

    /// One pass with the clock at `now` (seconds since the epoch).
    pub async fn pass_at(&self, now: u64) -> Result<Pass, Failure> {
        check_policy_trusts(self.policy.as_ref().map(|(p, _)| p), &self.key)?;
        let mut state = MonitorState::load(&self.state, &self.key)?;
        let mut alarms = Vec::new();
        let outcome = self.look(&mut state, now, &mut alarms).await;
        let written = write_alarms(&self.state, self.feed.as_deref(), &self.key, now, &alarms)?;
        state.store(&self.state)?;
        Ok(Pass {
            size: state.size,
            verified: outcome.as_ref().map_or(0, |verified| *verified),
            alarms: written,
            unreachable: outcome.err(),
        })
    }

    /// The pass's checks, updating `state` and adding to `alarms`; the
    /// entries verified, or why the log could not be reached.
    async fn look(
        &self,
        state: &mut MonitorState,
        now: u64,
        alarms: &mut Vec<Alarm>,
    ) -> Result<u64, String> {
        // An answer without a checkpoint (a 503 while no checkpoint meets
        // the log's quorum, a 500) is no answer to a reader either.
        let answer = match self.service.fetch("log/checkpoint").await {
            Fetched::Answer(200, body) => Ok(String::from_utf8_lossy(&body).into_owned()),
            Fetched::Answer(status, body) => Err(format!(
                "the log answered {status} for its checkpoint: {}",
                String::from_utf8_lossy(&body).trim()
            )),
            Fetched::Silent(why) => Err(why),
        };
        let note = match answer {
            Ok(note) => note,
            Err(why) => {
                if let Some(since) = state.unanswered(now) {
                    alarms.push(Alarm::new(
                        AlarmKind::Unavailable,
                        format!("the log has not answered since {since} (seconds since the epoch): {why}"),
                        json!({"unansweredSince": since, "lastError": why}),
                    ));
                }
                return Err(why);
            }
        };
        state.answered(now);
        let Ok(checkpoint) = Checkpoint::open(&note, &self.key) else {
            alarms.push(Alarm::new(
                AlarmKind::BadSignature,
                "the served checkpoint is not signed by the log's key".into(),
                json!({"served": note}),
            ));
            return Ok(0);
        };
        if let Some((policy, text)) = &self.policy
            && let Err(fault) = witness_verdict(&note, policy, now)
        {
            let (kind, why) = match fault {
                WitnessFault::Short(why) => (AlarmKind::LostQuorum, why),
                WitnessFault::Bad(why) => (AlarmKind::BadSignature, why),
            };
            alarms.push(Alarm::new(
                kind,
                why,
                json!({"served": note, "policy": text}),
            ));
            return Ok(0);
        }
        self.watch_head(state, (&note, &checkpoint), now, alarms)
            .await;
        let kept = state.kept();
        if let Some((kept_note, kept)) = &kept {
            if checkpoint.size < kept.size {
                alarms.push(Alarm::new(
                    AlarmKind::Rollback,
                    format!(
                        "the log signs size {} after signing size {}",
                        checkpoint.size, kept.size
                    ),
                    json!({"kept": kept_note, "served": note}),
                ));
                return Ok(0);
            }
            if checkpoint.size == kept.size {
                if checkpoint.root != kept.root {
                    alarms.push(Alarm::new(
                        AlarmKind::Fork,
                        format!(
                            "two signed checkpoints of size {} with different roots",
                            kept.size
                        ),
                        json!({"kept": kept_note, "served": note}),
                    ));
                } else {
                    self.gossip(state, alarms).await;
                }
                return Ok(0);
            }
            match self.consistency(kept.size, checkpoint.size).await {
                Ok(proof)
                    if verify_consistency(
                        kept.size,
                        checkpoint.size,
                        &kept.root,
                        &checkpoint.root,
                        &proof,
                    ) => {}
                Ok(proof) => {
                    alarms.push(Alarm::new(
                        AlarmKind::Fork,
                        format!(
                            "the log's proof that size {} extends size {} does not verify",
                            checkpoint.size, kept.size
                        ),
                        json!({"kept": kept_note, "served": note,
                               "consistency": proof.iter().map(Digest::to_hex).collect::<Vec<_>>()}),
                    ));
                    return Ok(0);
                }
                Err(why) => return Err(why),
            }
        }
        let verified = self
            .read_new_entries(state, &note, &checkpoint, alarms)
            .await?;
        self.gossip(state, alarms).await;
        Ok(verified)
    }

    /// Compares the checkpoint kept with each policy witness's latest
    /// cosigned one (`GET <url>/<hex SHA-256(origin)>/checkpoint`, where the
    /// witness serves it): both signed by the log, so one size with two
    /// roots, or two sizes the log cannot prove consistent, is a fork
    /// shown to others (gossip through the witnesses). A witness that does
    /// not answer, or answers something the log did not sign, is skipped.
    async fn gossip(&self, state: &MonitorState, alarms: &mut Vec<Alarm>) {
        let (Some((policy, _)), Some((kept_note, kept))) = (&self.policy, state.kept()) else {
            return;
        };
        let hash = freedom_tlog::witness::origin_hash(&kept.origin);
        for witness in policy.witnesses() {
            let Some(url) = &witness.url else { continue };
            let Ok(service) = Service::new(url) else {
                continue;
            };
            let Fetched::Answer(200, body) = service.fetch(&format!("{hash}/checkpoint")).await
            else {
                continue;
            };
            let theirs_note = String::from_utf8_lossy(&body).into_owned();
            let Ok(theirs) = Checkpoint::open(&theirs_note, &self.key) else {
                continue;
            };
            let ((small_note, small), (large_note, large)) = if theirs.size <= kept.size {
                ((&theirs_note, &theirs), (&kept_note, &kept))
            } else {
                ((&kept_note, &kept), (&theirs_note, &theirs))
            };
            let proof = if small.size == large.size {
                Ok(Vec::new())
            } else {
                self.consistency(small.size, large.size).await
            };
            let Ok(proof) = proof else { continue };
            let consistent = if small.size == large.size {
                small.root == large.root
            } else {
                verify_consistency(small.size, large.size, &small.root, &large.root, &proof)
            };
            if !consistent {
                alarms.push(Alarm::new(
                    AlarmKind::Fork,
                    format!(
                        "witness {} holds a checkpoint of size {} the log cannot prove consistent with the one kept (size {})",
                        witness.name, theirs.size, kept.size
                    ),
                    json!({"kept": small_note, "served": large_note, "witness": witness.name,
                           "consistency": proof.iter().map(Digest::to_hex).collect::<Vec<_>>()}),
                ));
            }
        }
    }

    /// The consistency proof between two sizes, from the log.
    async fn consistency(&self, from: u64, to: u64) -> Result<Vec<Digest>, String> {
        #[derive(Deserialize)]
        struct View {
            consistency: Vec<Digest>,
        }
        let path = format!("api/freedom-fund?view=consistency&from={from}&to={to}");
        match self.service.fetch(&path).await {
            Fetched::Answer(200, body) => serde_json::from_slice::<View>(&body)
                .map(|view| view.consistency)
                .map_err(|e| format!("the consistency view is not the documented shape: {e}")),
            Fetched::Answer(status, _) => Err(format!("the consistency view answered {status}")),
            Fetched::Silent(why) => Err(why),
        }
    }

    /// The entries from `start` to `end` (0-based, exclusive), or why they
    /// could not be read.
    async fn entries(&self, start: u64, end: u64) -> Result<Vec<Vec<u8>>, String> {
        fetch_entries(&self.service, start, end)
            .await
            .map_err(|failure| failure.to_string())
    }

    /// Fetches the entries past the kept size, re-derives the root from
    /// them and checks the rules on each; keeps the checkpoint when they
    /// hash to it.
    async fn read_new_entries(
        &self,
        state: &mut MonitorState,
        note: &str,
        checkpoint: &Checkpoint,
        alarms: &mut Vec<Alarm>,
    ) -> Result<u64, String> {
        let start = state.size;
        let entries = self.entries(start, checkpoint.size).await?;
        let mut frontier = state.frontier();
        let edge = frontier.to_bytes();
        for entry in &entries {
            frontier.push(leaf_hash(entry));
        }
        if frontier.root() != checkpoint.root {
            alarms.push(Alarm::new(
                AlarmKind::DataMismatch,
                format!(
                    "entries {start} to {} do not hash to the signed root",
                    checkpoint.size
                ),
                json!({
                    "kept": state.kept().map(|(note, _)| note),
                    "served": note,
                    "keptSize": start,
                    "keptEdge": edge.chunks(32).map(hex::encode).collect::<Vec<_>>(),
                    "entries": entries.iter().map(|e| base64(e)).collect::<Vec<_>>(),
                }),
            ));
            return Ok(0);
        }
        let mut broken_rules = Vec::new();
        if !entries.is_empty() {
            let rules = state
                .rules(&self.state)
                .map_err(|e| format!("the monitor's state: {e}"))?;
            for (offset, entry) in entries.iter().enumerate() {
                let index = start + offset as u64;
                if let Some(broken) = rules.check(index, entry) {
                    broken_rules.push((index, broken));
                }
            }
        }
        for (index, broken) in broken_rules {
            let entry = &entries[(index - start) as usize];
            alarms.push(self.rule_alarm(note, index, entry, &broken).await);
        }
        state.keep(note, checkpoint, &frontier);
        Ok(entries.len() as u64)
    }

    /// A broken rule's alarm: the record's entry and its inclusion proof
    /// (a c2sp.org/tlog-proof from the log), and the earlier entry it
    /// conflicts with, likewise.
    async fn rule_alarm(
        &self,
        note: &str,
        index: u64,
        entry: &[u8],
        broken: &rules::Broken,
    ) -> Alarm {
        let earlier = match broken.earlier {
            Some(earlier) => {
                let bytes = self
                    .entries(earlier, earlier + 1)
                    .await
                    .ok()
                    .and_then(|mut e| e.pop());
                json!({"index": earlier, "entry": bytes.as_deref().map(base64),
                       "proof": self.tlog_proof(earlier).await})
            }
            None => serde_json::Value::Null,
        };
        Alarm::new(
            AlarmKind::RuleBroken,
            format!("entry {index} (seq {}): {}", index + 1, broken.rule),
            json!({"served": note, "rule": broken.rule, "index": index,
                   "entry": base64(entry), "proof": self.tlog_proof(index).await,
                   "earlier": earlier}),
        )
    }

    /// The log's `.tlog-proof` of the entry at `index`, when it gives one.
    async fn tlog_proof(&self, index: u64) -> Option<String> {
        let path = format!(
            "api/freedom-fund?view=proof&seq={}&format=tlog-proof",
            index + 1
        );
        match self.service.fetch(&path).await {
            Fetched::Answer(200, body) => String::from_utf8(body).ok(),
            _ => None,
        }
    }

    /// The head (`?head=1`): when it stays ahead of the served checkpoint
    /// for [`PATIENCE_SECONDS`], the served checkpoint is stale.
    async fn watch_head(
        &self,
        state: &mut MonitorState,
        (served_note, served): (&str, &Checkpoint),
        now: u64,
        alarms: &mut Vec<Alarm>,
    ) {
        let Fetched::Answer(200, body) = self.service.fetch("log/checkpoint?head=1").await else {
            return;
        };
        let head_note = String::from_utf8_lossy(&body).into_owned();
        let Ok(head) = Checkpoint::open(&head_note, &self.key) else {
            alarms.push(Alarm::new(
                AlarmKind::BadSignature,
                "the head checkpoint (?head=1) is not signed by the log's key".into(),
                json!({"served": head_note}),
            ));
            return;
        };
        if let Some(since) = state.behind(served.size, head.size, now) {
            alarms.push(Alarm::new(
                AlarmKind::Stale,
                format!(
                    "the served checkpoint (size {}) has not followed the head (size {}) since {since} (seconds since the epoch)",
                    served.size, head.size
                ),
                json!({"served": served_note, "head": head_note, "behindSince": since}),
            ));
        }
    }
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
