//! Credentials: AWS keys, JWTs, bearer tokens and Authorization headers,
//! API keys by their formats and labels, and secrets in URLs.

use super::regex;
use regex::Regex;
use std::sync::LazyLock;

static AWS_ACCESS_KEY_ID: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}\b")
});
static AWS_SECRET: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)aws.{0,20}secret.{0,20}[:=]\s*['\x22]?[A-Za-z0-9/+=]{40}\b"));

pub(super) fn has_aws_key(text: &str) -> bool {
    AWS_ACCESS_KEY_ID.is_match(text) || AWS_SECRET.is_match(text)
}

static JWT: LazyLock<Regex> =
    LazyLock::new(|| regex(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"));

pub(super) fn has_jwt(text: &str) -> bool {
    JWT.is_match(text)
}

static BEARER: LazyLock<Regex> = LazyLock::new(|| regex(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]+=*)"));
static AUTHORIZATION_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(?:proxy-)?authorization\s*:\s*(?:basic|bearer|token|digest)?\s*\S{8,}")
});

/// `Bearer <credential>`; "bearer bonds" and the like pass: a credential is at
/// least 16 characters, or at least 8 with a digit or symbol in it.
pub(super) fn has_bearer_token(text: &str) -> bool {
    let looks_like_credential = |token: &str| {
        token.len() >= 16 || (token.len() >= 8 && token.chars().any(|c| !c.is_ascii_alphabetic()))
    };
    BEARER
        .captures_iter(text)
        .any(|c| looks_like_credential(&c[1]))
        || AUTHORIZATION_HEADER.is_match(text)
}

static API_KEY_FORMATS: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}",
        r"|github_pat_[A-Za-z0-9_]{22,}",
        r"|xox[abposr]-[A-Za-z0-9-]{10,}",
        r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
        r"|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}",
        r"|AIza[0-9A-Za-z_-]{35}",
        r"|glpat-[A-Za-z0-9_-]{20,}",
        r"|npm_[A-Za-z0-9]{36}",
        r"|SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})"
    ))
});
static LABELLED_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:api[_-]?key|api[_-]?secret|client[_-]?secret|secret[_-]?key|password|passwd|passphrase)\s*[:=]\s*\S{6,}",
    )
});

pub(super) fn has_api_key(text: &str) -> bool {
    API_KEY_FORMATS.is_match(text) || LABELLED_SECRET.is_match(text)
}

static URL: LazyLock<Regex> = LazyLock::new(|| regex(r#"(?i)\b[a-z][a-z0-9+.-]*://[^\s<>"'`]+"#));

fn urls(text: &str) -> impl Iterator<Item = url::Url> + '_ {
    URL.find_iter(text)
        .filter_map(|m| url::Url::parse(m.as_str()).ok())
}

pub(super) fn has_url_credentials(text: &str) -> bool {
    urls(text).any(|u| u.password().is_some_and(|p| !p.is_empty()))
}

/// Query or fragment parameter names that carry credentials.
const SECRET_PARAMETERS: &[&str] = &[
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "auth_token",
    "api_key",
    "apikey",
    "api-key",
    "key",
    "secret",
    "client_secret",
    "password",
    "passwd",
    "pwd",
    "pass",
    "auth",
    "authorization",
    "sig",
    "signature",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
    "session",
    "sessionid",
    "session_id",
    "private_key",
    "privatekey",
    "code",
];

pub(super) fn has_url_secret_parameter(text: &str) -> bool {
    urls(text).any(|u| {
        let fragment_pairs = u
            .fragment()
            .map(|f| url::form_urlencoded::parse(f.as_bytes()).collect::<Vec<_>>());
        u.query_pairs()
            .chain(fragment_pairs.into_iter().flatten())
            .any(|(name, value)| {
                !value.is_empty() && SECRET_PARAMETERS.contains(&name.to_ascii_lowercase().as_str())
            })
    })
}
