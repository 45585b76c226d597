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
use std::time::Duration;

/// How long provider bodies and reports are kept as evidence.
pub const EVIDENCE_TTL: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// One provider answer a run used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProvenanceEntry {
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
pub fn http_request(method: &str, base: &str, path: &str) -> String {
    let origin = url::Url::parse(base)
        .ok()
        .filter(|url| url.has_host())
        .map(|url| url.origin().ascii_serialization())
        .unwrap_or_else(|| "<provider>".to_owned());
    format!("{method} {origin}{path}")
}

/// An RPC call as provenance shows it: its method and parameters.
pub fn rpc_request(method: &str, params: &serde_json::Value) -> String {
    format!("{method} {params}")
}

/// The provenance a run builds: each answer once, named by its index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    entries: Vec<ProvenanceEntry>,
}

impl Provenance {
    /// The index of `entry`, added when the same answer (request and
    /// body) is not there yet.
    pub fn add(&mut self, entry: &ProvenanceEntry) -> usize {
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
    pub fn add_all(&mut self, entries: &[ProvenanceEntry]) -> Vec<usize> {
        let mut indices: Vec<usize> = entries.iter().map(|e| self.add(e)).collect();
        indices.sort_unstable();
        indices.dedup();
        indices
    }

    /// Every entry, in the order first used.
    pub fn entries(&self) -> &[ProvenanceEntry] {
        &self.entries
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
