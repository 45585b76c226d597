//! Alarms: each an evidence file that stands alone, and an Atom entry.
//!
//! An evidence file is one JSON document: `alarm` (the kind), `raisedAt`
//! (RFC 3339), `summary` (a sentence), `verifierKey` (the log's key, so the
//! signed notes can be checked with nothing else), and the kind's evidence
//! (docs/log.md lists each kind's members). Its name is the kind and the
//! first 16 hex digits of the SHA-256 of its evidence, so the same fault
//! found twice (a pass repeated after a crash) is one file.

use super::state::write_atomically;
use crate::Failure;
use chrono::{DateTime, SecondsFormat, Utc};
use freedom_tlog::canonical::canonical_json;
use freedom_tlog::note::VerifierKey;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use std::path::{Path, PathBuf};

/// The alarms a monitor raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlarmKind {
    /// Two signed checkpoints of one size with different roots, or a larger
    /// one the log cannot prove extends the kept one.
    Fork,
    /// A signed checkpoint smaller than the kept one.
    Rollback,
    /// A checkpoint (or a listed witness's cosignature) that does not verify.
    BadSignature,
    /// Entries that do not hash to the signed root.
    DataMismatch,
    /// A record that breaks the ledger's rules.
    RuleBroken,
    /// A checkpoint short of the policy's quorum.
    LostQuorum,
    /// The served checkpoint has not followed the head for an hour.
    Stale,
    /// The log has not answered for an hour.
    Unavailable,
}

impl AlarmKind {
    /// Its name in evidence files, the feed and the output.
    pub fn as_str(self) -> &'static str {
        match self {
            AlarmKind::Fork => "fork",
            AlarmKind::Rollback => "rollback",
            AlarmKind::BadSignature => "bad_signature",
            AlarmKind::DataMismatch => "data_mismatch",
            AlarmKind::RuleBroken => "rule_broken",
            AlarmKind::LostQuorum => "lost_quorum",
            AlarmKind::Stale => "stale",
            AlarmKind::Unavailable => "unavailable",
        }
    }
}

/// One alarm: its kind, a sentence, and the evidence members.
#[derive(Debug, Clone, PartialEq)]
pub struct Alarm {
    /// What kind.
    pub kind: AlarmKind,
    /// What was found, in a sentence.
    pub summary: String,
    /// The evidence (an object).
    pub evidence: Value,
}

impl Alarm {
    /// An alarm of `kind`.
    pub fn new(kind: AlarmKind, summary: String, evidence: Value) -> Alarm {
        Alarm {
            kind,
            summary,
            evidence,
        }
    }
}

/// The alarms folder in the state folder.
const ALARMS: &str = "alarms";
/// Entries the feed keeps (the newest).
const FEED_ENTRIES: usize = 100;

fn rfc3339(seconds: u64) -> String {
    DateTime::<Utc>::from_timestamp(i64::try_from(seconds).unwrap_or(i64::MAX), 0)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Writes each alarm's evidence file (before the state: a crash in
/// between finds the fault again), then the feed when it changed or is
/// missing; the files written.
pub(super) fn write_alarms(
    state: &Path,
    feed: Option<&Path>,
    key: &VerifierKey,
    now: u64,
    alarms: &[Alarm],
) -> Result<Vec<(super::AlarmKind, PathBuf)>, Failure> {
    let folder = state.join(ALARMS);
    let mut written = Vec::with_capacity(alarms.len());
    for alarm in alarms {
        let fingerprint = hex::encode(Sha256::digest(canonical_json(&alarm.evidence)));
        let name = format!("{}-{}.json", alarm.kind.as_str(), &fingerprint[..16]);
        let mut document = json!({
            "alarm": alarm.kind.as_str(),
            "raisedAt": rfc3339(now),
            "summary": alarm.summary,
            "verifierKey": key.to_text(),
        });
        if let (Some(document), Some(evidence)) =
            (document.as_object_mut(), alarm.evidence.as_object())
        {
            document.extend(evidence.clone());
        }
        let text = serde_json::to_vec_pretty(&document).expect("evidence serialises");
        write_atomically(&folder, &name, &text)?;
        written.push((alarm.kind, folder.join(name)));
    }
    // The feed changes only with the alarms (each pass would otherwise
    // read every evidence file again).
    if let Some(feed) = feed
        && (!alarms.is_empty() || !feed.exists())
    {
        write_feed(&folder, feed, key, now)?;
    }
    Ok(written)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The Atom feed of the newest alarms in `folder`, written whole.
fn write_feed(folder: &Path, feed: &Path, key: &VerifierKey, now: u64) -> Result<(), Failure> {
    let mut entries: Vec<(String, String, String, String)> = Vec::new();
    for file in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let name = file.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") {
            continue;
        }
        let Ok(document) = std::fs::read(file.path())
            .map_err(|_| ())
            .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|_| ()))
        else {
            continue;
        };
        let text = |member: &str| document[member].as_str().unwrap_or_default().to_owned();
        entries.push((text("raisedAt"), text("alarm"), text("summary"), name));
    }
    entries.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.3.cmp(&b.3)));
    entries.truncate(FEED_ENTRIES);
    let log = escape(&key.to_text());
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n  <title>freedom-verify monitor: {}</title>\n  <id>urn:freedom-verify:monitor:{}</id>\n  <updated>{}</updated>\n  <author><name>freedom-verify monitor</name></author>\n",
        escape(key.name()),
        hex::encode(Sha256::digest(key.to_text())),
        entries
            .first()
            .map_or_else(|| rfc3339(now), |e| e.0.clone()),
    );
    for (at, kind, summary, name) in &entries {
        xml.push_str(&format!(
            "  <entry>\n    <title>{}: {}</title>\n    <id>urn:freedom-verify:alarm:{}</id>\n    <updated>{}</updated>\n    <summary>{} (log {log}; evidence file alarms/{})</summary>\n  </entry>\n",
            escape(kind),
            escape(summary),
            escape(name.trim_end_matches(".json")),
            escape(at),
            escape(summary),
            escape(name),
        ));
    }
    xml.push_str("</feed>\n");
    let (dir, file) = (
        feed.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
        feed.file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .ok_or_else(|| {
                Failure::CannotCheck(format!("--feed {} is not a file", feed.display()))
            })?,
    );
    write_atomically(dir, &file, xml.as_bytes())
}
