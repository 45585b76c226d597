//! RugCheck token risk: `GET {base}/v1/tokens/{mint}/report/summary`, sent
//! with no Authorization header. Its rate limit is not documented, so the
//! scanner budgets conservatively and caches reports for hours.

use super::{Http, ProviderError};
use freedom_shared::scanner::{Risk, RiskReport};
use serde_json::Value;

/// The RugCheck client.
#[derive(Debug, Clone)]
pub struct RugCheck {
    http: Http,
}

/// What asking for one report gave.
#[derive(Debug, Clone, PartialEq)]
pub enum RiskAnswer {
    /// A report.
    Report(RiskReport),
    /// RugCheck has no report for this token (a 4xx other than 429).
    NoReport,
}

impl RugCheck {
    /// A client on `http`.
    pub fn new(http: Http) -> RugCheck {
        RugCheck { http }
    }

    /// The report summary of `mint`.
    pub async fn report(&self, mint: &str) -> Result<RiskAnswer, ProviderError> {
        let url = format!("{}/v1/tokens/{mint}/report/summary", self.http.base_url());
        match self.http.get_json(&url).await {
            Ok(body) => parse_report(&body).map(RiskAnswer::Report),
            Err(ProviderError::Status(status)) if (400..500).contains(&status) && status != 429 => {
                Ok(RiskAnswer::NoReport)
            }
            Err(error) => Err(error),
        }
    }
}

/// Reads a report summary; a body with `error` is no report.
pub fn parse_report(body: &Value) -> Result<RiskReport, ProviderError> {
    if body.get("error").is_some() {
        return Err(ProviderError::Malformed(
            "an error body with a success status".into(),
        ));
    }
    let risks = match body.get("risks") {
        Some(Value::Array(risks)) => risks
            .iter()
            .filter_map(|r| {
                Some(Risk {
                    name: r.get("name")?.as_str()?.chars().take(200).collect(),
                    level: r.get("level")?.as_str()?.to_owned(),
                    score: r.get("score").and_then(Value::as_f64),
                })
            })
            .collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(_) => return Err(ProviderError::Malformed("risks is not an array".into())),
    };
    Ok(RiskReport {
        score: body.get("score").and_then(Value::as_f64),
        score_normalised: body.get("score_normalised").and_then(Value::as_f64),
        risks,
    })
}
