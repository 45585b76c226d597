//! The ledger's rules, checked on each new record as the monitor reads it
//! (the rules the service enforces when it appends, docs/api.md): the entry
//! is the record's canonical JSON (RFC 8785) and a record (an object with a
//! string `id`, `type` snapshot or decision, `strategyId`, `mode` live or
//! paper and an RFC 3339 `asOf`); no two records share an id; a strategy's
//! snapshots in one mode come in strictly increasing `asOf` (so never two
//! for one instant); an experiment is registered (a paper `research`
//! decision whose thesis ends `ruleHash: sha256:<hex>`) before its first
//! paper snapshot, and never registered again under another rule.
//!
//! The full record schema (numbers, sources, positions) is the service's:
//! this crate depends on the log's specifications alone, so the monitor
//! checks the rules the history's integrity rests on.

use chrono::{DateTime, FixedOffset};
use freedom_tlog::canonical::canonical_json;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;

/// A broken rule: which, and the earlier entry it conflicts with (its
/// index, when there is one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The rule, in a sentence.
    pub rule: String,
    /// The earlier entry the new one conflicts with (0-based index).
    pub earlier: Option<u64>,
}

/// What the rules need to remember of the records seen so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rules {
    /// Each id's first 8 bytes of SHA-256 and the entry index it was seen
    /// at (a collision among a million ids has odds below 10^-7,
    /// and is reported, never hidden: the evidence holds both records).
    #[serde(with = "id_table")]
    ids: BTreeMap<u64, u64>,
    /// Each series (`"<strategyId> <mode>"`) and its latest snapshot: the
    /// `asOf` as written and the entry index.
    series: BTreeMap<String, (String, u64)>,
    /// Each registered experiment's rule hash and the registration's index.
    registrations: BTreeMap<String, (String, u64)>,
    /// Each strategy with a paper snapshot, and its first one's index.
    paper: BTreeMap<String, u64>,
}

fn id_key(id: &str) -> u64 {
    let digest = Sha256::digest(id.as_bytes());
    u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"))
}

fn instant(text: &str) -> Option<DateTime<FixedOffset>> {
    DateTime::parse_from_rfc3339(text).ok()
}

/// The rule hash a registration's thesis names on its last line.
fn registered_hash(thesis: &str) -> Option<&str> {
    let hash = thesis.lines().last()?.strip_prefix("ruleHash: sha256:")?;
    (hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(hash)
}

impl Rules {
    /// Checks the entry at `index` (its exact bytes) and remembers it; the
    /// first rule it breaks, if any (a broken record is still remembered,
    /// so one bad record raises one alarm).
    pub fn check(&mut self, index: u64, entry: &[u8]) -> Option<Broken> {
        let broken = |rule: &str, earlier: Option<u64>| {
            Some(Broken {
                rule: rule.to_owned(),
                earlier,
            })
        };
        let Ok(record) = serde_json::from_slice::<serde_json::Value>(entry) else {
            return broken("the entry is not JSON", None);
        };
        if canonical_json(&record).as_bytes() != entry {
            return broken(
                "the entry is not its record's canonical JSON (RFC 8785): a member twice, another order or another number form",
                None,
            );
        }
        let text = |name: &str| record.get(name).and_then(serde_json::Value::as_str);
        let (Some(id), Some(kind), Some(strategy), Some(mode), Some(as_of)) = (
            text("id"),
            text("type"),
            text("strategyId"),
            text("mode"),
            text("asOf"),
        ) else {
            return broken(
                "the record lacks a string id, type, strategyId, mode or asOf",
                None,
            );
        };
        if !matches!(kind, "snapshot" | "decision") || !matches!(mode, "live" | "paper") {
            return broken(
                "the record's type or mode is not one the ledger knows",
                None,
            );
        }
        let Some(when) = instant(as_of) else {
            return broken("the record's asOf is not an RFC 3339 instant", None);
        };
        let key = id_key(id);
        if let Some(&earlier) = self.ids.get(&key) {
            return broken(&format!("the id {id:?} was used before"), Some(earlier));
        }
        self.ids.insert(key, index);
        if kind == "snapshot" {
            let series = format!("{strategy} {mode}");
            if let Some((latest, earlier)) = self.series.get(&series)
                && instant(latest).is_some_and(|latest| when <= latest)
            {
                let earlier = *earlier;
                let rule = if instant(latest) == Some(when) {
                    format!("a second snapshot of {strategy} ({mode}) at {as_of}")
                } else {
                    format!(
                        "a snapshot of {strategy} ({mode}) at {as_of}, older than its latest ({latest})"
                    )
                };
                return broken(&rule, Some(earlier));
            }
            self.series.insert(series, (as_of.to_owned(), index));
            if mode == "paper" {
                self.paper.entry(strategy.to_owned()).or_insert(index);
            }
            return None;
        }
        let registration = (mode == "paper" && text("action") == Some("research"))
            .then(|| text("thesis").and_then(registered_hash))
            .flatten();
        if let Some(hash) = registration {
            if let Some(first) = self.paper.get(strategy) {
                return broken(
                    &format!("{strategy} was registered after its first paper snapshot"),
                    Some(*first),
                );
            }
            if let Some((registered, earlier)) = self.registrations.get(strategy) {
                if registered != hash {
                    return broken(
                        &format!("{strategy}'s registered rule was changed"),
                        Some(*earlier),
                    );
                }
            } else {
                self.registrations
                    .insert(strategy.to_owned(), (hash.to_owned(), index));
            }
        }
        None
    }

    /// How many records the rules remember.
    pub fn records(&self) -> usize {
        self.ids.len()
    }
}

/// The id table as base64 of 16-byte big-endian pairs (a million ids in
/// 21 MB of JSON, not 50).
mod id_table {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::collections::BTreeMap;

    pub(super) fn serialize<S: Serializer>(
        ids: &BTreeMap<u64, u64>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = ids
            .iter()
            .flat_map(|(k, i)| k.to_be_bytes().into_iter().chain(i.to_be_bytes()))
            .collect();
        s.serialize_str(&BASE64.encode(bytes))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<u64, u64>, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = BASE64.decode(text).map_err(serde::de::Error::custom)?;
        if !bytes.len().is_multiple_of(16) {
            return Err(serde::de::Error::custom(
                "the id table is not 16-byte pairs",
            ));
        }
        let ids: Vec<(u64, u64)> = bytes
            .chunks_exact(16)
            .map(|c| {
                (
                    u64::from_be_bytes(c[..8].try_into().expect("8 bytes")),
                    u64::from_be_bytes(c[8..].try_into().expect("8 bytes")),
                )
            })
            .collect();
        if !ids.windows(2).all(|w| w[0].0 < w[1].0) {
            return Err(serde::de::Error::custom("the id table is not sorted"));
        }
        Ok(ids.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(record: serde_json::Value) -> Vec<u8> {
        canonical_json(&record).into_bytes()
    }

    fn snapshot(id: &str, strategy: &str, mode: &str, as_of: &str) -> Vec<u8> {
        entry(
            json!({"id": id, "type": "snapshot", "strategyId": strategy, "mode": mode, "asOf": as_of, "equity": 1}),
        )
    }

    fn registration(id: &str, strategy: &str, hash: char) -> Vec<u8> {
        entry(
            json!({"id": id, "type": "decision", "strategyId": strategy, "mode": "paper",
            "asOf": "2026-05-04T12:00:00Z", "action": "research",
            "thesis": format!("The rule.\nruleHash: sha256:{}", hash.to_string().repeat(64))}),
        )
    }

    #[test]
    fn each_rule_is_broken_once_and_names_the_earlier_entry() {
        let mut rules = Rules::default();
        assert_eq!(rules.check(0, &registration("r", "x", 'a')), None);
        assert_eq!(
            rules.check(1, &snapshot("s1", "x", "paper", "2026-05-04T12:00:00Z")),
            None
        );
        assert_eq!(
            rules.check(2, &snapshot("s2", "x", "paper", "2026-05-04T12:15:00Z")),
            None
        );
        assert_eq!(
            rules.check(3, &snapshot("s3", "x", "live", "2026-05-04T12:00:00Z")),
            None
        );
        let same_id = rules.check(4, &snapshot("s1", "y", "live", "2026-05-04T12:00:00Z"));
        assert_eq!(same_id.unwrap().earlier, Some(1));
        let second = rules.check(
            5,
            &snapshot("s5", "x", "paper", "2026-05-04T14:15:00+02:00"),
        );
        assert!(
            second.clone().unwrap().rule.contains("a second snapshot"),
            "{second:?}"
        );
        assert_eq!(second.unwrap().earlier, Some(2));
        let older = rules.check(6, &snapshot("s6", "x", "paper", "2026-05-04T12:05:00Z"));
        assert!(older.unwrap().rule.contains("older than its latest"));
        let changed = rules.check(7, &registration("r2", "x", 'b'));
        assert_eq!(changed.unwrap().earlier, Some(1), "x has a paper snapshot");
        assert_eq!(
            rules.check(8, &snapshot("z1", "z", "paper", "2026-05-04T12:00:00Z")),
            None
        );
        let late = rules.check(9, &registration("r3", "z", 'a'));
        assert!(
            late.unwrap()
                .rule
                .contains("after its first paper snapshot")
        );
        assert_eq!(rules.check(10, &registration("r4", "w", 'a')), None);
        let again = rules.check(11, &registration("r5", "w", 'c'));
        assert!(again.unwrap().rule.contains("was changed"));
        assert_eq!(
            rules.check(12, &registration("r6", "w", 'a')),
            None,
            "the same rule again"
        );
    }

    #[test]
    fn an_entry_that_is_not_a_canonical_record_breaks_a_rule() {
        let mut rules = Rules::default();
        for bad in [
            &b"not json"[..],
            br#"{"b":1,"a":2}"#,
            br#"{"a":1,"a":2}"#,
            br#"{"id":"x"}"#,
            br#"{"asOf":"yesterday","id":"x","mode":"live","strategyId":"s","type":"snapshot"}"#,
            br#"{"asOf":"2026-05-04T12:00:00Z","id":"x","mode":"demo","strategyId":"s","type":"snapshot"}"#,
        ] {
            assert!(rules.check(0, bad).is_some(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn the_rules_survive_their_storage_form() {
        let mut rules = Rules::default();
        for i in 0..50u64 {
            rules.check(
                i,
                &snapshot(
                    &format!("id{i}"),
                    "x",
                    "live",
                    &format!("2026-05-04T12:{i:02}:00Z"),
                ),
            );
        }
        let text = serde_json::to_string(&rules).unwrap();
        let back: Rules = serde_json::from_str(&text).unwrap();
        assert_eq!(back, rules);
        assert_eq!(back.records(), 50);
    }
}
