//! Witnessed time, checked against the cosignatures: a checkpoint's
//! quorum time (the earliest instant its cosignatures dated up to then meet
//! the policy's quorum), a record's witnessed time (the time kept for the
//! earliest witnessed checkpoint that holds it), and `--timeline`: every
//! series' `recording` block recomputed from the log's records and its
//! witnessed checkpoints (`GET /log/witnessed/<n>`), compared with what the
//! dashboard serves. The time kept for each checkpoint is the service's
//! word (the ledger view's `witnessed.at`): it may be later than the
//! quorum time of all its cosignatures (only those dated near the round
//! count, and a time never decreases with size), never earlier, and never
//! earlier than a smaller checkpoint's. Written from docs/log.md ("When
//! each record was written"), not from the service's code.

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

/// How far a snapshot's witnessed time may precede its `asOf` (two honest
/// clocks may disagree by this much); further, it is a clock conflict,
/// never on time (the contract's `log.clockToleranceSeconds`).
pub const CLOCK_TOLERANCE_SECONDS: i64 = 60;

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
    clock_conflict: u64,
    /// The lags of the snapshots on time or late (clock conflicts are left
    /// out of the median and the largest).
    lags: Vec<i64>,
    on_time_since: Option<String>,
}

impl Recording {
    /// Takes the series' next snapshot, valued at `as_of`, in the witnessed
    /// log by `witnessed` (seconds since the epoch; `None` while pending).
    fn take(&mut self, as_of: &str, witnessed: Option<i64>) -> Result<(), Failure> {
        let Some(time) = witnessed else {
            self.pending = self.pending.saturating_add(1);
            return Ok(());
        };
        let at = epoch_seconds(as_of)
            .ok_or_else(|| discrepancy(format!("a snapshot's asOf {as_of:?} is not RFC 3339")))?;
        let lag = time.saturating_sub(at);
        if lag < CLOCK_TOLERANCE_SECONDS.saturating_neg() {
            // Dated after the witnesses saw it: a clock is wrong.
            self.clock_conflict = self.clock_conflict.saturating_add(1);
            self.on_time_since = None;
            return Ok(());
        }
        self.lags.push(lag);
        if lag <= RECORDING_WINDOW_SECONDS {
            self.on_time = self.on_time.saturating_add(1);
            if self.on_time_since.is_none() {
                self.on_time_since = Some(as_of.to_owned());
            }
        } else {
            self.late = self.late.saturating_add(1);
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
            "clockConflict": self.clock_conflict,
            "medianLagSeconds": median,
            "maxLagSeconds": lags.last(),
        })
    }
}

/// The witnessed checkpoints from size 1 on, through `served` (the
/// checkpoint verified): each signed by `key`, its root the one the first
/// leaves make, its quorum time from its cosignatures alone; as (size,
/// quorum time).
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
    let quorum = witnessed_checkpoints(service, key, policy, &hashes).await?;
    // Read after the checkpoints, so every one of them is in it.
    let claimed = claimed_times(service, &quorum).await?;
    let kept = check_kept_times(&quorum, &claimed)?;
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
            "clockConflict",
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

/// A ledger page as `--timeline` reads it: each entry's kept time.
#[derive(serde::Deserialize)]
struct TimedPage {
    entries: Vec<TimedEntry>,
    next: Option<u64>,
}

/// One ledger entry's `witnessed`.
#[derive(serde::Deserialize)]
struct TimedEntry {
    seq: u64,
    #[serde(default)]
    witnessed: Value,
}

/// The time the service keeps for each witnessed checkpoint in `quorum`
/// (sizes from the walk of `GET /log/witnessed/<n>`), read from the ledger
/// view's entries: every entry a checkpoint holds beyond the one before
/// must say `{"at", "size"}` with that size and one time. Entries after the
/// largest are not read (a checkpoint may have been kept since the walk).
/// As (size, time), in the order of `quorum`.
async fn claimed_times(
    service: &Service,
    quorum: &[(u64, i64)],
) -> Result<Vec<(u64, i64)>, Failure> {
    let through = quorum.last().map_or(0, |(size, _)| *size);
    let mut claimed: Vec<Option<i64>> = vec![None; quorum.len()];
    let mut before = (through > 0).then(|| through.saturating_add(1));
    while let Some(cursor) = before {
        let page = service
            .get(&format!(
                "api/freedom-fund?view=ledger&limit=1000&before={cursor}"
            ))
            .await?;
        let page: TimedPage = serde_json::from_slice(&page)
            .map_err(|e| discrepancy(format!("a ledger page is not the documented shape: {e}")))?;
        for entry in &page.entries {
            if entry.seq == 0 || entry.seq > through {
                continue;
            }
            let index = quorum.partition_point(|(size, _)| *size < entry.seq);
            let Some(&(holder, _)) = quorum.get(index) else {
                continue;
            };
            let said_size = entry.witnessed["size"].as_u64();
            let at = entry.witnessed["at"].as_str().and_then(epoch_seconds);
            let (Some(said_size), Some(at)) = (said_size, at) else {
                return Err(discrepancy(format!(
                    "the ledger view gives record {} no witnessed time ({}), yet the witnessed checkpoint of size {holder} holds it",
                    entry.seq, entry.witnessed
                )));
            };
            if said_size != holder {
                return Err(discrepancy(format!(
                    "the ledger view dates record {} from the checkpoint of size {said_size}, but the earliest witnessed checkpoint that holds it is of size {holder}",
                    entry.seq
                )));
            }
            match claimed[index] {
                Some(time) if time != at => {
                    return Err(discrepancy(format!(
                        "the ledger view gives the records of the witnessed checkpoint of size {holder} two times: {} and {}",
                        rfc3339(time),
                        rfc3339(at)
                    )));
                }
                _ => claimed[index] = Some(at),
            }
        }
        before = page.next.filter(|next| *next < cursor);
    }
    quorum
        .iter()
        .zip(claimed)
        .map(|(&(size, _), at)| {
            at.map(|at| (size, at)).ok_or_else(|| {
                discrepancy(format!(
                    "the ledger view shows no record of the witnessed checkpoint of size {size}"
                ))
            })
        })
        .collect()
}

/// The kept times (`claimed`, as (size, time)) checked against the
/// checkpoints' own cosignatures (`quorum`, as (size, quorum time), the
/// same sizes in the same order): none earlier than its checkpoint's
/// quorum time (a later one is allowed: cosignatures dated far from the
/// round do not count, and a time is raised to a smaller checkpoint's),
/// and none earlier than a smaller checkpoint's. A discrepancy names the
/// checkpoints' sizes. The times to date the records from, as (size,
/// time).
pub(crate) fn check_kept_times(
    quorum: &[(u64, i64)],
    claimed: &[(u64, i64)],
) -> Result<Vec<(u64, i64)>, Failure> {
    let mut previous: Option<(u64, i64)> = None;
    for (&(size, allowed), &(claimed_size, at)) in quorum.iter().zip(claimed) {
        if size != claimed_size {
            return Err(discrepancy(format!(
                "the kept times name the checkpoint of size {claimed_size} where the witnessed history has size {size}"
            )));
        }
        if at < allowed {
            return Err(discrepancy(format!(
                "the witnessed checkpoint of size {size} is kept at {}, earlier than its cosignatures allow (their quorum time is {})",
                rfc3339(at),
                rfc3339(allowed)
            )));
        }
        if let Some((smaller, earlier)) = previous.filter(|(_, time)| at < *time) {
            return Err(discrepancy(format!(
                "the kept times decrease with size: the witnessed checkpoint of size {smaller} is kept at {}, the one of size {size} at {}",
                rfc3339(earlier),
                rfc3339(at)
            )));
        }
        previous = Some((size, at));
    }
    if quorum.len() != claimed.len() {
        return Err(discrepancy(format!(
            "{} witnessed checkpoints, {} kept times",
            quorum.len(),
            claimed.len()
        )));
    }
    Ok(claimed.to_vec())
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

    fn refused(result: Result<Vec<(u64, i64)>, Failure>) -> String {
        match result {
            Err(Failure::Discrepancy(line)) => line,
            other => panic!("expected a discrepancy, got {other:?}"),
        }
    }

    #[test]
    fn a_kept_time_may_be_later_than_its_cosignatures_never_earlier_nor_decreasing() {
        let quorum = [(3, 1_000), (7, 900), (9, 2_000)];
        // Equal, raised to the smaller checkpoint's, later: all kept.
        let claimed = [(3, 1_000), (7, 1_000), (9, 2_500)];
        assert_eq!(check_kept_times(&quorum, &claimed).unwrap(), claimed);
        let line = refused(check_kept_times(
            &quorum,
            &[(3, 999), (7, 1_000), (9, 2_000)],
        ));
        assert!(
            line.contains("size 3 is kept at 1970-01-01T00:16:39Z, earlier than its cosignatures allow (their quorum time is 1970-01-01T00:16:40Z)"),
            "{line}"
        );
        let line = refused(check_kept_times(
            &quorum,
            &[(3, 1_000), (7, 950), (9, 2_000)],
        ));
        assert!(
            line.contains("decrease with size: the witnessed checkpoint of size 3 is kept at 1970-01-01T00:16:40Z, the one of size 7 at 1970-01-01T00:15:50Z"),
            "{line}"
        );
        refused(check_kept_times(&quorum, &[(3, 1_000), (8, 1_000)]));
        refused(check_kept_times(&quorum, &[(3, 1_000)]));
    }

    #[test]
    fn a_snapshot_dated_after_its_witnessed_time_is_a_clock_conflict() {
        let mut recording = Recording::default();
        for (as_of, witnessed) in [
            ("1970-01-01T00:00:00Z", Some(100)),
            // Witnessed 4,800 s before its valuation.
            ("1970-01-01T02:46:40Z", Some(5_200)),
            ("1970-01-01T01:28:20Z", Some(5_400)),
            // At the tolerance's edge: 60 s before is on time.
            ("1970-01-01T01:31:00Z", Some(5_400)),
            ("1970-01-01T01:40:00Z", None),
        ] {
            recording.take(as_of, witnessed).unwrap();
        }
        assert_eq!(
            recording.to_json(),
            serde_json::json!({
                "onTimeSince": "1970-01-01T01:28:20Z",
                "onTime": 3,
                "late": 0,
                "pending": 1,
                "clockConflict": 1,
                "medianLagSeconds": 100.0,
                "maxLagSeconds": 100,
            })
        );
        recording.take("1970-01-01T01:32:01Z", Some(5_400)).unwrap();
        assert_eq!(recording.clock_conflict, 2, "61 s before is a conflict");
        assert_eq!(recording.on_time_since, None, "and ends the stretch");
    }
}
