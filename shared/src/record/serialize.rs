//! A record written back as JSON with the contract's field names, and its
//! RFC 8785 canonical text: the ledger's leaf bytes.

use super::Record;
use super::number::decimal_json;
use crate::canonical::canonical_json;
use serde_json::{Map, Value, json};

impl Record {
    /// The record as a JSON value with the contract's field names. Numbers
    /// are the doubles RFC 8785 prints; [`Record::parse`] has checked that
    /// each keeps its exact decimal value.
    pub(crate) fn to_json(&self) -> Value {
        let h = self.header();
        let mut out = Map::new();
        out.insert("id".into(), json!(h.id));
        out.insert("type".into(), json!(self.kind().as_str()));
        out.insert("visibility".into(), json!("public"));
        out.insert("mode".into(), json!(h.mode.as_str()));
        out.insert("strategyId".into(), json!(h.strategy_id));
        out.insert("strategyName".into(), json!(h.strategy_name));
        out.insert("asOf".into(), json!(h.as_of.as_str()));
        out.insert(
            "source".into(),
            json!({"name": h.source.name, "url": h.source.url}),
        );
        match self {
            Record::Snapshot(s) => {
                out.insert("currency".into(), json!("USD"));
                out.insert("equity".into(), decimal_json(s.equity));
                out.insert(
                    "flowSincePrevious".into(),
                    decimal_json(s.flow_since_previous),
                );
                if let Some(cash) = s.cash {
                    out.insert("cash".into(), decimal_json(cash));
                }
                if let Some(positions) = &s.positions {
                    let list: Vec<Value> = positions
                        .iter()
                        .map(|p| {
                            json!({
                                "symbol": p.symbol,
                                "quantity": decimal_json(p.quantity),
                                "cost": decimal_json(p.cost),
                                "mark": decimal_json(p.mark),
                            })
                        })
                        .collect();
                    out.insert("positions".into(), Value::Array(list));
                }
            }
            Record::Decision(d) => {
                out.insert("action".into(), json!(d.action.as_str()));
                out.insert("summary".into(), json!(d.summary));
                for (name, value) in [
                    ("thesis", &d.thesis),
                    ("counterEvidence", &d.counter_evidence),
                    ("nextCheck", &d.next_check),
                ] {
                    if let Some(text) = value {
                        out.insert(name.into(), json!(text));
                    }
                }
            }
        }
        Value::Object(out)
    }

    /// The record's RFC 8785 canonical text: the ledger's leaf bytes.
    pub(crate) fn canonical_json(&self) -> String {
        canonical_json(&self.to_json())
    }
}
