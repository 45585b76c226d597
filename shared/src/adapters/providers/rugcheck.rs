//! RugCheck token risk: `GET {base}/v1/tokens/{mint}/report/summary`, sent
//! with no Authorization header. Its rate limit is not documented, so the
//! scanner budgets conservatively and caches reports for hours.

use super::wire::RiskSummary;
use super::{Http, received};
use crate::ports::providers::{ProviderError, RUGCHECK, Received, RiskAnswer, TokenRisk};
use crate::scan::provenance::http_request;
use crate::scan::{
    DANGER_LEVEL, MAX_RISK_NAME_CHARS, RISK_READING, Risk, RiskReport, SAFE_RISK_LEVELS,
};
use async_trait::async_trait;
use std::time::Instant;

/// The RugCheck client.
#[derive(Debug, Clone)]
pub(crate) struct RugCheck {
    http: Http,
}

impl RugCheck {
    /// A client on `http`.
    pub(crate) fn new(http: Http) -> RugCheck {
        RugCheck { http }
    }
}

#[async_trait]
impl TokenRisk for RugCheck {
    /// The report summary of `mint`, if it answers by `deadline`, with
    /// the answer it was read from (a refusal says there is no report).
    async fn report(
        &self,
        mint: &str,
        deadline: Instant,
    ) -> Result<(RiskAnswer, Received), ProviderError> {
        let path = format!("/v1/tokens/{mint}/report/summary");
        let url = format!("{}{path}", self.http.base_url());
        let answer = self.http.by(deadline, self.http.fetch(&url)).await?;
        let received = received(
            RUGCHECK,
            http_request("GET", self.http.base_url(), &path),
            &answer,
        );
        if answer.status.is_success() {
            Ok((RiskAnswer::Report(parse_report(&answer.body)?), received))
        } else if answer.status.is_client_error() {
            // A 4xx other than 429 (retried as transient before): RugCheck
            // has no report for this token.
            Ok((RiskAnswer::NoReport, received))
        } else {
            // A redirect (never followed) or another status: no answer.
            Err(ProviderError::Status(answer.status.as_u16()))
        }
    }
}

/// Reads a report summary's body; one with `error` is not a report. Only
/// what the checks use is kept ([`RiskReport::bounded`]). The risks are read
/// exactly: no `risks` list (absent or `null`), a risk without a readable
/// name and level, or a level other than `info`, `warn` and `danger` byte
/// for byte, makes the risks unreadable (the check is unknown), never
/// empty.
pub(crate) fn parse_report(body: &[u8]) -> Result<RiskReport, ProviderError> {
    let summary: RiskSummary = super::wire::read(body, "not a report summary")?;
    if summary.error.get().is_some() {
        return Err(ProviderError::Malformed(
            "an error body with a success status",
        ));
    }
    let mut unreadable = None;
    let mut risks = Vec::new();
    match &summary.risks {
        None => unreadable = Some("RugCheck's report has no risks list".to_owned()),
        Some(entries) => {
            for entry in entries {
                match entry.get() {
                    Some(risk) if !risk.name.trim().is_empty() => {
                        if risk.level == DANGER_LEVEL {
                            risks.push(Risk {
                                name: risk.name.chars().take(MAX_RISK_NAME_CHARS).collect(),
                                level: risk.level.clone(),
                                score: risk.score.get().copied(),
                            });
                        } else if !SAFE_RISK_LEVELS.contains(&risk.level.as_str()) {
                            unreadable = Some(format!(
                                "a risk's level is not one known ({}, {}, {DANGER_LEVEL})",
                                SAFE_RISK_LEVELS[0], SAFE_RISK_LEVELS[1]
                            ));
                        }
                    }
                    _ => {
                        unreadable = Some("a risk without a readable name and level".to_owned());
                    }
                }
            }
        }
    }
    Ok(RiskReport {
        score: summary.score.get().copied(),
        score_normalised: summary.score_normalised.get().copied(),
        risks,
        lp_locked_pct: summary.lp_locked_pct.get().copied(),
        unreadable,
        reading: RISK_READING,
    }
    .bounded())
}
