//! Witnessed time, checked from the cosignatures alone: a checkpoint's
//! quorum time (the earliest instant its cosignatures dated up to then meet
//! the policy's quorum), a record's witnessed time (the quorum time of the
//! earliest witnessed checkpoint that holds it), and `--timeline`: every
//! series' `recording` block recomputed from the log's records and its
//! witnessed checkpoints (`GET /log/witnessed/<n>`), compared with what the
//! dashboard serves. Written from docs/log.md ("When each record was
//! written"), not from the service's code.

use crate::{Failure, Service, Verified, discrepancy, fetch_leaves};
use freedom_tlog::checkpoint::Checkpoint;
use freedom_tlog::merkle::{Digest, Frontier, leaf_hash};
use freedom_tlog::note::{VerifierKey, split_note};
use freedom_tlog::policy::Policy;
use serde_json::Value;
use std::collections::BTreeMap;

/// How long after its valuation a snapshot may enter the witnessed log and
/// still be on time (the contract's `log.recordingWindowSeconds`).
pub const RECORDING_WINDOW_SECONDS: i64 = 3_600;

/// A checkpoint's quorum time under `policy`, and the witnesses whose
/// cosignatures, dated up to it, met the quorum (in the policy's order).
/// `None` when the cosignatures never meet it. Lines of a listed key that
/// do not verify are a discrepancy.
pub fn quorum_time(note: &str, policy: &Policy) -> Result<Option<(u64, Vec<String>)>, Failure> {
    let (text, lines) =
        split_note(note).map_err(|e| discrepancy(format!("the checkpoint: {e}")))?;
    let mut times = Vec::new();
    for (index, witness) in policy.witnesses().iter().enumerate() {
        for (name, encoded) in &lines {
            match witness.key.verify_line(text, name, encoded) {
                Ok(None) => {}
                Ok(Some(cosignature)) => times.push((index, cosignature.time)),
                Err(_) => {
                    return Err(discrepancy(format!(
                        "witness {}'s cosignature does not verify (a forged or altered line)",
                        witness.name
                    )));
                }
            }
        }
    }
    let Some(time) = policy.quorum_time(&times) else {
        return Ok(None);
    };
    let mut names: Vec<(usize, String)> = times
        .iter()
        .filter(|(_, t)| *t <= time)
        .map(|(i, _)| (*i, policy.witnesses()[*i].name.clone()))
        .collect();
    names.sort();
    names.dedup();
    Ok(Some((time, names.into_iter().map(|(_, n)| n).collect())))
}

/// Seconds since the epoch as RFC 3339 (UTC, whole seconds).
pub(crate) fn rfc3339(seconds: i64) -> String {
    chrono::DateTime::from_timestamp(seconds, 0).map_or_else(
        || format!("{seconds} s after the epoch"),
        |t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    )
}

/// An RFC 3339 instant (as records write `asOf`) in whole seconds since
/// the epoch.
pub(crate) fn epoch_seconds(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp())
}

/// A lag in words.
pub(crate) fn lag_words(seconds: i64) -> String {
    let magnitude = seconds.unsigned_abs();
    let words = if magnitude < 90 {
        format!("{magnitude} s")
    } else if magnitude < 5_400 {
        format!("{} min", (magnitude + 30) / 60)
    } else if magnitude < 172_800 {
        format!("{} h", (magnitude + 1_800) / 3_600)
    } else {
        format!("{} days", (magnitude + 43_200) / 86_400)
    };
    if seconds < 0 {
        format!("{words} before")
    } else {
        format!("{words} after")
    }
}

/// The words a proof's line adds about when the record was in the log:
/// the quorum time of its checkpoint (an upper bound; the proof `at=witnessed`
/// gives the earliest) and, for a snapshot, its lag.
pub(crate) fn proof_time_words(
    checkpoint_note: &str,
    policy: &Policy,
    record: &Value,
) -> Result<String, Failure> {
    let Some((time, names)) = quorum_time(checkpoint_note, policy)? else {
        return Ok(String::new());
    };
    let time = i64::try_from(time).map_err(|_| discrepancy("a cosignature time beyond i64"))?;
    let lag = match (record["type"].as_str(), record["asOf"].as_str()) {
        (Some("snapshot"), Some(as_of)) => epoch_seconds(as_of)
            .map(|at| format!(", {} its valuation", lag_words(time.saturating_sub(at)))),
        _ => None,
    };
    let names = match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    Ok(format!(
        "; in the log by {}{}, on the word of {names}",
        rfc3339(time),
        lag.unwrap_or_default(),
    ))
}

/// One series' recording, recomputed.
#[derive(Debug, Default, Clone, PartialEq)]
struct Recording {
    on_time: u64,
    late: u64,
    pending: u64,
    lags: Vec<i64>,
    on_time_since: Option<String>,
}

impl Recording {
    fn take(&mut self, as_of: &str, witnessed: Option<i64>) -> Result<(), Failure> {
        let Some(time) = witnessed else {
            self.pending += 1;
            return Ok(());
        };
        let at = epoch_seconds(as_of)
            .ok_or_else(|| discrepancy(format!("a snapshot's asOf {as_of:?} is not RFC 3339")))?;
        let lag = time.saturating_sub(at);
        self.lags.push(lag);
        if lag <= RECORDING_WINDOW_SECONDS {
            self.on_time += 1;
            if self.on_time_since.is_none() {
                self.on_time_since = Some(as_of.to_owned());
            }
        } else {
            self.late += 1;
            self.on_time_since = None;
        }
        Ok(())
    }

    /// The block as the dashboard writes it.
    fn to_json(&self) -> Value {
        let mut lags = self.lags.clone();
        lags.sort_unstable();
        let median = match lags.len() {
            0 => None,
            n if n % 2 == 1 => Some(lags[n / 2] as f64),
            n => Some((lags[n / 2 - 1] as f64 + lags[n / 2] as f64) / 2.0),
        };
        serde_json::json!({
            "onTimeSince": self.on_time_since,
            "onTime": self.on_time,
            "late": self.late,
            "pending": self.pending,
            "medianLagSeconds": median,
            "maxLagSeconds": lags.last(),
        })
    }
}

/// The witnessed checkpoints from size 1 on, through `served` (the
/// checkpoint verified): each signed by `key`, its root the one the first
/// leaves make, its quorum time from its cosignatures; as (size, time).
async fn witnessed_checkpoints(
    service: &Service,
    key: &VerifierKey,
    policy: &Policy,
    hashes: &[Digest],
) -> Result<Vec<(u64, i64)>, Failure> {
    let mut kept = Vec::new();
    let mut next = 1u64;
    let mut frontier = Frontier::empty();
    let mut pushed = 0u64;
    while next <= hashes.len() as u64 {
        let note = match service.get(&format!("log/witnessed/{next}")).await {
            Ok(body) => String::from_utf8(body)
                .map_err(|_| discrepancy("a witnessed checkpoint is not UTF-8"))?,
            Err(Failure::CannotCheck(message)) if message.contains("404") => break,
            Err(failure) => return Err(failure),
        };
        let checkpoint = Checkpoint::open(&note, key).map_err(|e| {
            discrepancy(format!(
                "the witnessed checkpoint for {next} does not verify: {e}"
            ))
        })?;
        if checkpoint.size < next || checkpoint.size > hashes.len() as u64 {
            return Err(discrepancy(format!(
                "log/witnessed/{next} answered a checkpoint of size {}",
                checkpoint.size
            )));
        }
        while pushed < checkpoint.size {
            frontier.push(hashes[pushed as usize]);
            pushed += 1;
        }
        if frontier.root() != checkpoint.root {
            return Err(discrepancy(format!(
                "the witnessed checkpoint of size {} names another root than the log's first {} records",
                checkpoint.size, checkpoint.size
            )));
        }
        let (time, _) = quorum_time(&note, policy)?.ok_or_else(|| {
            discrepancy(format!(
                "the witnessed checkpoint of size {} does not meet the policy's quorum",
                checkpoint.size
            ))
        })?;
        let time = i64::try_from(time).map_err(|_| discrepancy("a cosignature time beyond i64"))?;
        kept.push((checkpoint.size, time));
        next = checkpoint.size + 1;
    }
    Ok(kept)
}

/// `--timeline`: every series' `recording` block on the since-inception
/// dashboard recomputed from the log's records and its witnessed
/// checkpoints alone; a discrepancy names the first series that differs.
pub async fn verify_timeline(
    service: &Service,
    key: &VerifierKey,
    policy: &Policy,
) -> Result<Verified, Failure> {
    let note = String::from_utf8(service.get("log/checkpoint").await?)
        .map_err(|_| discrepancy("the checkpoint is not UTF-8"))?;
    let checkpoint = Checkpoint::open(&note, key)
        .map_err(|e| discrepancy(format!("the checkpoint does not verify: {e}")))?;
    let leaves = fetch_leaves(service, &checkpoint).await?;
    let hashes: Vec<Digest> = leaves.iter().map(|leaf| leaf_hash(leaf)).collect();
    let kept = witnessed_checkpoints(service, key, policy, &hashes).await?;
    let strategies = dashboard_strategies(service).await?;
    let witnessed_of = |seq: u64| -> Option<i64> {
        let at = kept.partition_point(|(size, _)| *size < seq);
        kept.get(at).map(|(_, time)| *time)
    };
    let mut series: BTreeMap<(String, String), Recording> = BTreeMap::new();
    for (index, leaf) in leaves.iter().enumerate() {
        let record: Value = serde_json::from_slice(leaf)
            .map_err(|e| discrepancy(format!("record {} is not JSON: {e}", index + 1)))?;
        if record["type"] != "snapshot" {
            continue;
        }
        let key = (
            record["strategyId"].as_str().unwrap_or_default().to_owned(),
            record["mode"].as_str().unwrap_or_default().to_owned(),
        );
        let as_of = record["asOf"].as_str().unwrap_or_default();
        series
            .entry(key)
            .or_default()
            .take(as_of, witnessed_of(index as u64 + 1))?;
    }
    let mut compared = 0;
    for strategy in &strategies {
        let key = (
            strategy["strategyId"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            strategy["mode"].as_str().unwrap_or_default().to_owned(),
        );
        let Some(recomputed) = series.get(&key) else {
            // A series entirely after the checkpoint verified: nothing to
            // recompute it from.
            continue;
        };
        let served = &strategy["recording"];
        let expected = recomputed.to_json();
        // Records after the checkpoint verified are pending on both sides
        // or not yet in the log checked: compare what the log proves.
        let same = [
            "onTimeSince",
            "onTime",
            "late",
            "medianLagSeconds",
            "maxLagSeconds",
        ]
        .iter()
        .all(|field| served[field] == expected[field]);
        if !same {
            return Err(discrepancy(format!(
                "the dashboard's recording of {} ({}) is {served}, the log and its witnessed checkpoints give {expected}",
                key.0, key.1
            )));
        }
        compared += 1;
    }
    Ok(Verified(format!(
        "OK timeline: {compared} series' recording recomputed from {} records and {} witnessed checkpoints",
        leaves.len(),
        kept.len()
    )))
}

/// The since-inception dashboard's strategies, every page.
async fn dashboard_strategies(service: &Service) -> Result<Vec<Value>, Failure> {
    let mut strategies = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let query = match &after {
            Some(after) => format!("api/freedom-fund?period=all&after={after}"),
            None => "api/freedom-fund?period=all".to_owned(),
        };
        let page: Value = serde_json::from_slice(&service.get(&query).await?)
            .map_err(|e| discrepancy(format!("the dashboard is not JSON: {e}")))?;
        if page["witnessing"]["state"] != "witnessed" {
            return Err(discrepancy(
                "the dashboard says the log is unwitnessed, yet a policy was given",
            ));
        }
        strategies.extend(page["strategies"].as_array().cloned().unwrap_or_default());
        match page["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => return Ok(strategies),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_read_and_write_as_rfc3339() {
        for (text, seconds) in [
            ("1970-01-01T00:00:00Z", 0),
            ("2026-05-04T16:00:00Z", 1_777_910_400),
            ("2026-05-04T18:00:00+02:00", 1_777_910_400),
            ("2024-02-29T23:59:59.5Z", 1_709_251_199),
        ] {
            assert_eq!(epoch_seconds(text), Some(seconds), "{text}");
        }
        assert_eq!(rfc3339(1_777_910_400), "2026-05-04T16:00:00Z");
        assert_eq!(rfc3339(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(epoch_seconds("yesterday"), None);
        assert_eq!(lag_words(240), "4 min after");
        assert_eq!(lag_words(3 * 86_400 + 30), "3 days after");
        assert_eq!(lag_words(-5), "5 s before");
    }
}
