//! A request's query parameters, read strictly: each view names the
//! parameters it accepts, and an unknown or repeated one is
//! `400 invalid_query` (naming only parameters the endpoint knows).

use super::error::ApiError;
use serde_json::json;

/// A request's query parameters, each at most once, each one the endpoint knows.
#[derive(Debug, Default)]
pub struct QueryParams(Vec<(String, String)>);

impl QueryParams {
    /// Parses `raw` (the URL's query) and checks every name is in `allowed`
    /// and appears once. Names are echoed in errors only when they are known.
    pub fn parse(raw: Option<&str>, allowed: &[&str]) -> Result<QueryParams, ApiError> {
        QueryParams::parse_repeating(raw, allowed, &[])
    }

    /// As [`QueryParams::parse`], but the names in `repeatable` may be
    /// given more than once (read them with [`QueryParams::get_all`]).
    pub fn parse_repeating(
        raw: Option<&str>,
        allowed: &[&str],
        repeatable: &[&str],
    ) -> Result<QueryParams, ApiError> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (name, value) in url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
            if !allowed.contains(&name.as_ref()) {
                let listed = if allowed.is_empty() {
                    "none".to_owned()
                } else {
                    allowed.join(", ")
                };
                return Err(ApiError::InvalidQuery {
                    message: format!("unknown query parameter; this endpoint accepts: {listed}"),
                    details: vec![json!({"allowed": allowed})],
                });
            }
            if !repeatable.contains(&name.as_ref()) && pairs.iter().any(|(n, _)| n == &name) {
                return Err(ApiError::invalid_query(
                    &name,
                    format!("{name} is given more than once"),
                ));
            }
            pairs.push((name.into_owned(), value.into_owned()));
        }
        Ok(QueryParams(pairs))
    }

    /// The value of `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, in order.
    pub fn get_all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Whether no parameter was given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
