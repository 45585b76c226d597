//! Provenance: every provider answer a run used, named by the SHA-256 of
//! the exact bytes received, so each verdict and each paper fill can be
//! checked against what the provider said. The bytes themselves are kept as
//! evidence for [`EVIDENCE_TTL`] under that hash.
//!
//! A request is shown without secrets: an HTTP request as its method, the
//! provider's origin and the path the scanner built (the configured URL's
//! credentials, path and query are never shown: an RPC URL often carries
//! an API key there); an RPC call as its method and parameters only.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::time::Duration;

/// How long provider bodies and reports are kept as evidence.
pub const EVIDENCE_TTL: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// Most bytes of evidence one run keeps: its report first (always), then
/// the provider bodies it used, in the order received, each that still
/// fits. A body past the budget is kept as its hash only: its provenance
/// entry says `"kept": false`. At the 15-minute schedule (672 runs in the
/// seven days evidence lasts), 180 KiB a run is at most 118 MiB.
pub const EVIDENCE_BYTES_PER_RUN: u64 = 180 * 1024;

/// Most bytes of evidence kept at once: a run keeps at most what is left
/// of it (runs beyond the schedule, `POST` runs, included). The KV store
/// holds evidence in base64, a third more: 160 MiB of Redis at most, inside
/// a 256 MB database with room for the ledger.
pub const EVIDENCE_BYTES_TOTAL: u64 = 120 * 1024 * 1024;

/// `body` as evidence is stored: gzip-compressed (JSON shrinks to a tenth
/// or less), named by the SHA-256 of `body` itself. The budgets count these
/// stored bytes.
pub fn pack_evidence(body: &[u8]) -> (String, bytes::Bytes) {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let packed = encoder
        .write_all(body)
        .and_then(|()| encoder.finish())
        .expect("writing to memory cannot fail");
    (sha256_hex(body), bytes::Bytes::from(packed))
}

/// The bytes evidence `stored` under `sha256` names: `stored` itself when
/// it hashes to `sha256` (kept uncompressed), else its gzip decompression
/// when that does (at most [`MAX_EVIDENCE_BYTES`]); `None` when neither
/// does (the store's copy is not what the name says).
pub(crate) fn unpack_evidence(sha256: &str, stored: Vec<u8>) -> Option<Vec<u8>> {
    use std::io::Read as _;
    if sha256_hex(&stored) == sha256 {
        return Some(stored);
    }
    let mut body = Vec::new();
    flate2::read::GzDecoder::new(stored.as_slice())
        .take(MAX_EVIDENCE_BYTES + 1)
        .read_to_end(&mut body)
        .ok()?;
    (body.len() as u64 <= MAX_EVIDENCE_BYTES && sha256_hex(&body) == sha256).then_some(body)
}

/// The largest evidence served, decompressed: larger than any provider body
/// read (each is capped when received) or report.
pub(crate) const MAX_EVIDENCE_BYTES: u64 = 64 * 1024 * 1024;

/// What a run may keep when `kept_now` bytes of evidence are kept already:
/// the smaller of [`EVIDENCE_BYTES_PER_RUN`] and what
/// [`EVIDENCE_BYTES_TOTAL`] leaves.
pub fn evidence_room(kept_now: u64) -> u64 {
    EVIDENCE_BYTES_TOTAL
        .saturating_sub(kept_now)
        .min(EVIDENCE_BYTES_PER_RUN)
}

/// Which of `bodies` (each a hash and a length, in the order received)
/// a run keeps in `room` bytes once its report (`report` bytes, kept
/// whatever its size) is counted: each body that still fits, in order.
pub fn bodies_to_keep<'a>(
    room: u64,
    report: u64,
    bodies: impl IntoIterator<Item = (&'a str, u64)>,
) -> BTreeSet<&'a str> {
    let mut left = room.saturating_sub(report);
    let mut kept = BTreeSet::new();
    for (hash, length) in bodies {
        if length <= left {
            left -= length;
            kept.insert(hash);
        }
    }
    kept
}

/// One provider answer a run used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProvenanceEntry {
    /// `dexscreener`, `rugcheck` or `solana-rpc`.
    pub provider: String,
    /// What was asked, without secrets: `GET <origin><path>`, or an RPC
    /// method and its parameters.
    pub request: String,
    /// The HTTP status of the answer.
    pub status: u16,
    /// When the answer was received.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub received_at: DateTime<Utc>,
    /// SHA-256 of the exact bytes received, lowercase hex; the bytes are
    /// served as evidence under it for seven days.
    pub body_sha256: String,
    /// How many bytes were received.
    pub bytes: u64,
    /// The RPC's `context.slot`, when the answer gives one.
    pub slot: Option<u64>,
    /// Whether the body is kept as evidence: `false` when it was past its
    /// run's evidence budget ([`EVIDENCE_BYTES_PER_RUN`]), so only its hash
    /// is known (the evidence view answers 404 for it).
    #[serde(default = "kept_by_default")]
    pub kept: bool,
}

fn kept_by_default() -> bool {
    true
}

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Whether `text` is a SHA-256 as evidence is named: 64 lowercase hex digits.
pub fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `GET <origin><path>` for a request to `base` (a configured URL) at
/// `path` (built by the scanner): the base's credentials, path, query and
/// fragment are left out. An unreadable base shows as `<provider>`.
pub(crate) fn http_request(method: &str, base: &str, path: &str) -> String {
    let origin = url::Url::parse(base)
        .ok()
        .filter(|url| url.has_host())
        .map(|url| url.origin().ascii_serialization())
        .unwrap_or_else(|| "<provider>".to_owned());
    format!("{method} {origin}{path}")
}

/// An RPC call as provenance shows it: its method and parameters.
pub(crate) fn rpc_request(method: &str, params: &serde_json::Value) -> String {
    format!("{method} {params}")
}

/// The provenance a run builds: each answer once, named by its index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Provenance {
    entries: Vec<ProvenanceEntry>,
}

impl Provenance {
    /// The index of `entry`, added when the same answer (request and
    /// body) is not there yet.
    pub(crate) fn add(&mut self, entry: &ProvenanceEntry) -> usize {
        if let Some(index) = self
            .entries
            .iter()
            .position(|e| e.body_sha256 == entry.body_sha256 && e.request == entry.request)
        {
            return index;
        }
        self.entries.push(entry.clone());
        self.entries.len() - 1
    }

    /// The indices of `entries`, each added when new.
    pub(crate) fn add_all(&mut self, entries: &[ProvenanceEntry]) -> Vec<usize> {
        let mut indices: Vec<usize> = entries.iter().map(|e| self.add(e)).collect();
        indices.sort_unstable();
        indices.dedup();
        indices
    }

    /// Every entry, in the order first used.
    pub(crate) fn entries(&self) -> &[ProvenanceEntry] {
        &self.entries
    }

    /// Marks the entries whose body is among `dropped` as not kept.
    pub(crate) fn mark_not_kept(&mut self, dropped: &BTreeSet<String>) {
        mark_not_kept(&mut self.entries, dropped);
    }
}

/// Marks each of `entries` whose body is among `dropped` as not kept.
pub(crate) fn mark_not_kept(entries: &mut [ProvenanceEntry], dropped: &BTreeSet<String>) {
    for entry in entries {
        if dropped.contains(&entry.body_sha256) {
            entry.kept = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_never_show_the_configured_urls_secrets() {
        assert_eq!(
            http_request(
                "GET",
                "https://user:pass@api.example.com/v2/SECRETKEY?api-key=SECRET#x",
                "/tokens/v1/solana/A,B"
            ),
            "GET https://api.example.com/tokens/v1/solana/A,B"
        );
        assert_eq!(http_request("GET", "not a url", "/x"), "GET <provider>/x");
        assert!(is_sha256_hex(&sha256_hex(b"")));
        assert!(!is_sha256_hex(&sha256_hex(b"").to_uppercase()));
        assert!(!is_sha256_hex("abc"));
    }

    #[test]
    fn the_same_answer_is_one_entry() {
        let entry = ProvenanceEntry {
            provider: "dexscreener".into(),
            request: "GET https://x/a".into(),
            status: 200,
            received_at: DateTime::from_timestamp(0, 0).unwrap(),
            body_sha256: sha256_hex(b"[]"),
            bytes: 2,
            slot: None,
            kept: true,
        };
        let mut provenance = Provenance::default();
        assert_eq!(provenance.add(&entry), 0);
        assert_eq!(provenance.add_all(&[entry.clone(), entry.clone()]), vec![0]);
        let other = ProvenanceEntry {
            request: "GET https://x/b".into(),
            ..entry
        };
        assert_eq!(provenance.add(&other), 1);
        assert_eq!(provenance.entries().len(), 2);
    }
}
