//! Configuration from the environment (docs/operating.md, "Configuration").
//!
//! Secrets are wrapped so they never print: [`WriteToken`] and the KV token
//! show as `[redacted]` in `Debug`, and errors name variables, never values.
//! Every reader takes a lookup function so tests do not touch the process
//! environment. `scanner`: the scanner's universe, wallets, providers
//! and time budget.

pub(crate) mod scanner;
pub use scanner::{ProviderConfig, ScannerConfig};

use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq;

use crate::record::{Mode, StrategyId};
use crate::tlog::DEFAULT_ORIGIN;
use crate::tlog::note::{NoteError, SigningKey};

/// The bearer token that authorises writes (`FF_AGENT_WRITE_TOKEN`).
#[derive(Clone)]
pub struct WriteToken(String);

impl std::fmt::Debug for WriteToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WriteToken([redacted])")
    }
}

impl WriteToken {
    /// Wraps a configured token; an empty one counts as not configured.
    pub fn new(token: impl Into<String>) -> Option<WriteToken> {
        let token = token.into();
        (!token.trim().is_empty()).then_some(WriteToken(token))
    }

    /// Whether `presented` is the token, compared in constant time (over
    /// SHA-256 digests, so not even the length leaks).
    pub(crate) fn verify(&self, presented: &str) -> bool {
        let expected = Sha256::digest(self.0.as_bytes());
        let given = Sha256::digest(presented.as_bytes());
        expected.ct_eq(&given).into()
    }

    /// The token's text, for the sensitive-content guard only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Where the KV REST store is, when configured.
#[derive(Clone)]
pub struct KvConfig {
    /// The REST base URL.
    pub url: String,
    /// The bearer token (never printed).
    token: String,
    /// Which variable pair it came from, for the start-up log.
    pub source: &'static str,
    /// Prefix of every key (`FF_KV_PREFIX`, default `ff:`).
    pub prefix: String,
}

impl std::fmt::Debug for KvConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KvConfig")
            .field("url", &self.url)
            .field("token", &"[redacted]")
            .field("source", &self.source)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl KvConfig {
    /// The bearer token, for the KV client's Authorization header only.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }
}

/// A configuration mistake that must stop start-up.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// One half of a KV variable pair is set without the other.
    #[error("{present} is set but {missing} is not: set both, or neither")]
    IncompletePair {
        /// The variable that is set.
        present: &'static str,
        /// The variable that is missing.
        missing: &'static str,
    },
    /// The KV URL is not an http(s) REST URL (e.g. a `redis://` URL).
    #[error("{variable} must be the REST API's https URL, not a redis:// connection string")]
    NotRestUrl {
        /// The offending variable.
        variable: &'static str,
    },
    /// The write token is too short to be a secret (and records containing
    /// it are refused, so a short one would refuse ordinary words).
    #[error(
        "FF_AGENT_WRITE_TOKEN must be at least {MIN_WRITE_TOKEN_CHARS} characters: use a long random token (or leave it empty to disable writes)"
    )]
    WriteTokenTooShort,
    /// The write token has white space or control characters in or around
    /// it (usually a stray newline or quote from a file).
    #[error(
        "FF_AGENT_WRITE_TOKEN must be visible ASCII, with no white space or control characters (a stray newline or space around it?): set the token alone"
    )]
    WriteTokenNotPrintable,
    /// An event bus is named but this binary cannot publish to one.
    #[error(
        "FF_EVENT_BUS_NAME is set but this build has no EventBridge adapter: build it with --features eventbridge, or unset the variable"
    )]
    NoEventBridge,
    /// The log's origin cannot be a key name.
    #[error(
        "FF_LOG_ORIGIN must be a schema-less URL such as fund.example.com/log: printable ASCII, no scheme, no spaces and no '+'"
    )]
    BadLogOrigin,
    /// The signing key is not a signed-note Ed25519 signer key (its text is
    /// a secret: never repeated).
    #[error(
        "FF_LOG_SIGNING_KEY is not a signed-note Ed25519 signer key (PRIVATE+KEY+<name>+<id>+<base64>): {0}"
    )]
    BadLogKey(&'static str),
    /// The witness policy cannot be read (the sentence names the line).
    #[error("FF_LOG_POLICY {0}; the policy is in the c2sp.org/tlog-policy text form")]
    BadLogPolicy(crate::tlog::policy::PolicyError),
    /// The witness policy file cannot be read (the sentence names the line).
    #[error(
        "FF_LOG_POLICY_FILE {path}: {error}; the policy is in the c2sp.org/tlog-policy text form"
    )]
    BadLogPolicyFile {
        /// The file.
        path: String,
        /// What is wrong, and on which line.
        error: crate::tlog::policy::PolicyError,
    },
    /// The witness policy file cannot be opened or read.
    #[error("FF_LOG_POLICY_FILE {path} cannot be read: {reason}")]
    PolicyFileUnreadable {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The witness policy is given twice.
    #[error("FF_LOG_POLICY and FF_LOG_POLICY_FILE are both set: keep one of them")]
    PolicyTwice,
    /// The witness policy lists logs, and this log's key is not one of them.
    #[error(
        "FF_LOG_POLICY lists logs but not this log's verifier key {0}: add a line log {0}, or list no log"
    )]
    PolicyForAnotherLog(String),
    /// The signing key names another log.
    #[error(
        "FF_LOG_SIGNING_KEY is the key of the log {key_name}, but FF_LOG_ORIGIN is {origin}: the key's name must be the origin"
    )]
    LogKeyForAnotherOrigin {
        /// The configured origin.
        origin: String,
        /// The key's name.
        key_name: String,
    },
    /// `FF_LOG_NEW_LOG` is neither true nor false.
    #[error("FF_LOG_NEW_LOG must be true or false (or unset)")]
    BadNewLog,
    /// A benchmark variable is not a strategy id.
    #[error(
        "{variable} must be a strategy id of the ledger (1 to 128 of A-Z a-z 0-9 . _ : -), or unset"
    )]
    BadBenchmark {
        /// The variable.
        variable: &'static str,
    },
    /// A benchmark variable names a strategy the ledger has no series of.
    #[error("{variable} names {strategy}, which has no {mode} series in the ledger")]
    UnknownBenchmark {
        /// The variable that names it.
        variable: &'static str,
        /// The strategy it names.
        strategy: String,
        /// The mode it is the benchmark of.
        mode: &'static str,
    },
}

/// The paper benchmark when `FF_BENCHMARK_PAPER` is not set: the scanner's
/// experiment that holds SOL (`scanner-hold-sol-v3`), once the ledger has
/// its series.
pub const DEFAULT_PAPER_BENCHMARK: &str = crate::scan::experiments::HOLD_SOL.id;

/// The strategy each mode is compared with (`FF_BENCHMARK_LIVE`,
/// `FF_BENCHMARK_PAPER`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Benchmarks {
    /// The live benchmark, when configured.
    pub live: Option<StrategyId>,
    /// The paper benchmark, when configured (else
    /// [`DEFAULT_PAPER_BENCHMARK`] once the ledger holds it).
    pub paper: Option<StrategyId>,
}

impl Benchmarks {
    /// The variable that configures `mode`'s benchmark.
    pub fn variable(mode: Mode) -> &'static str {
        match mode {
            Mode::Live => "FF_BENCHMARK_LIVE",
            Mode::Paper => "FF_BENCHMARK_PAPER",
        }
    }

    /// The benchmark configured for `mode`.
    pub fn configured(&self, mode: Mode) -> Option<&StrategyId> {
        match mode {
            Mode::Live => self.live.as_ref(),
            Mode::Paper => self.paper.as_ref(),
        }
    }

    /// The id `mode`'s series are compared with: the configured one, else
    /// for paper [`DEFAULT_PAPER_BENCHMARK`] (used once the ledger holds
    /// it); none for live unless configured.
    pub fn wanted(&self, mode: Mode) -> Option<&str> {
        match self.configured(mode) {
            Some(id) => Some(id.as_str()),
            None if mode == Mode::Paper => Some(DEFAULT_PAPER_BENCHMARK),
            None => None,
        }
    }
}

/// The strategy each mode is compared with, from `FF_BENCHMARK_LIVE` and
/// `FF_BENCHMARK_PAPER` (each a strategy id, or unset; the paper default
/// is [`DEFAULT_PAPER_BENCHMARK`] once the ledger holds it). Whether the
/// ledger holds them is checked at start-up
/// ([`crate::service::check_benchmarks`]).
pub fn benchmarks(lookup: impl Fn(&str) -> Option<String>) -> Result<Benchmarks, ConfigError> {
    let read = |mode: Mode| {
        let variable = Benchmarks::variable(mode);
        match lookup(variable).filter(|value| !value.is_empty()) {
            None => Ok(None),
            Some(value) => StrategyId::parse(&value)
                .map(Some)
                .ok_or(ConfigError::BadBenchmark { variable }),
        }
    };
    Ok(Benchmarks {
        live: read(Mode::Live)?,
        paper: read(Mode::Paper)?,
    })
}

/// The log's identity from the environment: its origin and signing key.
#[derive(Debug)]
pub struct LogConfig {
    /// `FF_LOG_ORIGIN`; without it, the key's name, or
    /// [`crate::tlog::DEFAULT_ORIGIN`].
    pub origin: String,
    /// Whether `FF_LOG_ORIGIN` named the origin (rather than the key or
    /// the default).
    pub origin_configured: bool,
    /// `FF_LOG_SIGNING_KEY`, when set.
    pub signing_key: Option<SigningKey>,
    /// `FF_LOG_NEW_LOG=true`: the operator says the key has signed nothing
    /// the ledger does not extend, so with no memory of what it signed the
    /// log signs the ledger as it is (see `service::log::Log::with_new_log`).
    pub new_log: bool,
}

/// Reads `FF_LOG_ORIGIN`, `FF_LOG_SIGNING_KEY` and `FF_LOG_NEW_LOG`. With a
/// key and no origin, the origin is the key's name; with both, they must
/// agree.
pub fn log_config(lookup: impl Fn(&str) -> Option<String>) -> Result<LogConfig, ConfigError> {
    let origin = lookup("FF_LOG_ORIGIN").filter(|o| !o.trim().is_empty());
    if let Some(origin) = &origin
        && !is_log_origin(origin)
    {
        return Err(ConfigError::BadLogOrigin);
    }
    let signing_key = lookup("FF_LOG_SIGNING_KEY")
        .filter(|k| !k.trim().is_empty())
        .map(|text| {
            SigningKey::parse(&text).map_err(|error| match error {
                NoteError::BadKey(reason) => ConfigError::BadLogKey(reason),
                _ => ConfigError::BadLogKey("unreadable"),
            })
        })
        .transpose()?;
    let new_log = match lookup("FF_LOG_NEW_LOG")
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("" | "false" | "0") => false,
        Some("true" | "1") => true,
        Some(_) => return Err(ConfigError::BadNewLog),
    };
    let origin_configured = origin.is_some();
    let origin = match (origin, &signing_key) {
        (Some(origin), Some(key)) if key.name() != origin => {
            return Err(ConfigError::LogKeyForAnotherOrigin {
                origin,
                key_name: key.name().to_owned(),
            });
        }
        (Some(origin), _) => origin,
        (None, Some(key)) => key.name().to_owned(),
        (None, None) => DEFAULT_ORIGIN.to_owned(),
    };
    Ok(LogConfig {
        origin,
        origin_configured,
        signing_key,
        new_log,
    })
}

/// Largest witness policy file read.
const MAX_POLICY_FILE_BYTES: u64 = 64 * 1024;

/// Reads the witness policy (c2sp.org/tlog-policy), when set: its text in
/// `FF_LOG_POLICY`, or a file holding it named by `FF_LOG_POLICY_FILE`
/// (a regular file of at most 64 KiB), not both. A policy that lists logs
/// must list `verifier` (this log's key, when it signs).
pub fn log_policy(
    lookup: impl Fn(&str) -> Option<String>,
    verifier: Option<&crate::tlog::note::VerifierKey>,
) -> Result<Option<crate::tlog::policy::Policy>, ConfigError> {
    let text = lookup("FF_LOG_POLICY").filter(|p| !p.trim().is_empty());
    let file = lookup("FF_LOG_POLICY_FILE").filter(|p| !p.trim().is_empty());
    let policy = match (text, file) {
        (None, None) => return Ok(None),
        (Some(_), Some(_)) => return Err(ConfigError::PolicyTwice),
        (Some(text), None) => {
            crate::tlog::policy::Policy::parse(&text).map_err(ConfigError::BadLogPolicy)?
        }
        (None, Some(path)) => {
            let text = read_policy_file(&path)?;
            crate::tlog::policy::Policy::parse(&text)
                .map_err(|error| ConfigError::BadLogPolicyFile { path, error })?
        }
    };
    if let Some(verifier) = verifier
        && !policy.logs().is_empty()
        && !policy.logs().contains(verifier)
    {
        return Err(ConfigError::PolicyForAnotherLog(verifier.to_text()));
    }
    Ok(Some(policy))
}

/// The text of the policy file at `path`: a regular file (a FIFO would
/// hang start-up) of at most [`MAX_POLICY_FILE_BYTES`], in UTF-8.
fn read_policy_file(path: &str) -> Result<String, ConfigError> {
    use std::io::Read as _;
    let unreadable = |reason: String| ConfigError::PolicyFileUnreadable {
        path: path.to_owned(),
        reason,
    };
    let metadata = std::fs::metadata(path).map_err(|e| unreadable(e.to_string()))?;
    if !metadata.is_file() {
        return Err(unreadable("it is not a regular file".into()));
    }
    if metadata.len() > MAX_POLICY_FILE_BYTES {
        return Err(unreadable(format!(
            "it is larger than {MAX_POLICY_FILE_BYTES} bytes"
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_POLICY_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| unreadable(e.to_string()))?;
    String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))
}

/// Whether `origin` can name a log: printable ASCII without spaces or `+`
/// (a key name's rules), and no scheme (c2sp.org/tlog-checkpoint: a
/// schema-less URL).
fn is_log_origin(origin: &str) -> bool {
    origin.bytes().all(|b| b.is_ascii_graphic() && b != b'+') && !origin.contains("://")
}

/// Shortest write token accepted at start-up.
pub(crate) const MIN_WRITE_TOKEN_CHARS: usize = 16;

/// The KV variable pairs, in order of preference.
pub const KV_PAIRS: [(&str, &str); 3] = [
    ("FF_KV_REST_API_URL", "FF_KV_REST_API_TOKEN"),
    ("KV_REST_API_URL", "KV_REST_API_TOKEN"),
    ("UPSTASH_REDIS_REST_URL", "UPSTASH_REDIS_REST_TOKEN"),
];

/// Reads the KV REST configuration: the first complete pair wins; a half
/// pair is an error; none at all is `Ok(None)` (use the embedded store).
pub fn kv_config(lookup: impl Fn(&str) -> Option<String>) -> Result<Option<KvConfig>, ConfigError> {
    let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
    for (url_var, token_var) in KV_PAIRS {
        match (get(url_var), get(token_var)) {
            (Some(url), Some(token)) => {
                let lower = url.to_ascii_lowercase();
                if !(lower.starts_with("https://") || lower.starts_with("http://")) {
                    return Err(ConfigError::NotRestUrl { variable: url_var });
                }
                let prefix = lookup("FF_KV_PREFIX").unwrap_or_else(|| "ff:".to_owned());
                return Ok(Some(KvConfig {
                    url,
                    token,
                    source: url_var,
                    prefix,
                }));
            }
            (Some(_), None) => {
                return Err(ConfigError::IncompletePair {
                    present: url_var,
                    missing: token_var,
                });
            }
            (None, Some(_)) => {
                return Err(ConfigError::IncompletePair {
                    present: token_var,
                    missing: url_var,
                });
            }
            (None, None) => continue,
        }
    }
    Ok(None)
}

/// Whether this process runs under the AWS Lambda runtime
/// (`AWS_LAMBDA_RUNTIME_API` is set).
#[cfg(feature = "lambda")]
pub(crate) fn is_lambda(lookup: impl Fn(&str) -> Option<String>) -> bool {
    lookup("AWS_LAMBDA_RUNTIME_API").is_some_and(|v| !v.is_empty())
}

/// Reads `FF_AGENT_WRITE_TOKEN`: unset or empty means writes are disabled;
/// a token shorter than `MIN_WRITE_TOKEN_CHARS`, or with white space or
/// control characters in it, stops start-up.
pub fn write_token(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Option<WriteToken>, ConfigError> {
    let Some(token) = lookup("FF_AGENT_WRITE_TOKEN").filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    // Visible ASCII only: a header can carry nothing else, so a token with
    // other characters would refuse every POST.
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ConfigError::WriteTokenNotPrintable);
    }
    if token.chars().count() < MIN_WRITE_TOKEN_CHARS {
        return Err(ConfigError::WriteTokenTooShort);
    }
    Ok(WriteToken::new(token))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn the_log_key_names_its_origin_and_is_never_repeated_in_errors() {
        let key = SigningKey::from_seed("fund.example.com/log", [3; 32]).unwrap();
        let text = key.to_private_text();
        let config = log_config(env(&[("FF_LOG_SIGNING_KEY", &text)])).unwrap();
        assert_eq!(config.origin, "fund.example.com/log");
        assert!(!format!("{config:?}").contains(&text[20..]));
        let other = log_config(env(&[
            ("FF_LOG_SIGNING_KEY", &text),
            ("FF_LOG_ORIGIN", "other.example.com/log"),
        ]))
        .unwrap_err();
        assert!(matches!(other, ConfigError::LogKeyForAnotherOrigin { .. }));
        let broken = format!("{}x", &text[..text.len() - 4]);
        let error = log_config(env(&[("FF_LOG_SIGNING_KEY", &broken)])).unwrap_err();
        assert!(matches!(error, ConfigError::BadLogKey(_)));
        assert!(!error.to_string().contains(&broken[25..]), "{error}");
        assert_eq!(log_config(env(&[])).unwrap().origin, DEFAULT_ORIGIN);
        assert_eq!(
            log_config(env(&[("FF_LOG_ORIGIN", "a b")])).unwrap_err(),
            ConfigError::BadLogOrigin
        );
    }

    /// An origin every checkpoint names and every verifier must match: only
    /// printable ASCII, no spaces, no `+`, no scheme (with one,
    /// freedom-verify failed every checkpoint).
    #[test]
    fn the_log_origin_is_printable_ascii_without_a_scheme() {
        for bad in [
            "https://fund.example.com/log",
            "http://fund.example.com/log",
            "fund.example.com/log\u{7}",
            "fund.example.com/\u{202E}gol",
            "fund.example.com/log\u{200F}",
            "fünd.example.com/log",
            "fund.example.com/a+b",
            "fund\texample",
            "fund.example.com/log\n",
        ] {
            assert_eq!(
                log_config(env(&[("FF_LOG_ORIGIN", bad)])).unwrap_err(),
                ConfigError::BadLogOrigin,
                "{bad:?}"
            );
        }
        for good in [
            "fund.example.com/log",
            "example.org",
            "fund.example.com:8443/log-2",
        ] {
            assert_eq!(
                log_config(env(&[("FF_LOG_ORIGIN", good)])).unwrap().origin,
                good
            );
        }
    }

    /// A token only visible ASCII can carry: one with other characters
    /// would start, then refuse every POST (headers are ASCII).
    #[test]
    fn a_write_token_outside_visible_ascii_stops_start_up() {
        for bad in [
            "sixteen-chars-é-xx",
            "sixteen-chars-\u{200B}xx",
            "token\u{7f}-sixteen-chars",
        ] {
            assert_eq!(
                write_token(env(&[("FF_AGENT_WRITE_TOKEN", bad)])).unwrap_err(),
                ConfigError::WriteTokenNotPrintable,
                "{bad:?}"
            );
        }
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn witness_line() -> String {
        let key = crate::tlog::cosignature::CosignerKey::from_seed("w1.example", [1; 32])
            .unwrap()
            .witness_key()
            .to_text();
        format!("witness W1 {key} http://127.0.0.1:1\nquorum W1\n")
    }

    #[test]
    fn the_policy_comes_from_the_variable_or_a_file_never_both() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("policy.txt");
        std::fs::write(&file, witness_line()).unwrap();
        let path = file.to_str().unwrap();
        let from_file = log_policy(env(&[("FF_LOG_POLICY_FILE", path)]), None)
            .unwrap()
            .expect("a policy");
        let text = witness_line();
        let from_text = log_policy(env(&[("FF_LOG_POLICY", &text)]), None)
            .unwrap()
            .expect("a policy");
        assert_eq!(from_file.witnesses().len(), from_text.witnesses().len());

        let both = log_policy(
            env(&[("FF_LOG_POLICY", &text), ("FF_LOG_POLICY_FILE", path)]),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            both.contains("FF_LOG_POLICY") && both.contains("FF_LOG_POLICY_FILE"),
            "{both}"
        );

        let missing = dir.path().join("absent.txt");
        let missing = log_policy(
            env(&[("FF_LOG_POLICY_FILE", missing.to_str().unwrap())]),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(missing.contains("absent.txt"), "{missing}");

        std::fs::write(&file, "witness W1 notakey\nquorum W1\n").unwrap();
        let bad = log_policy(env(&[("FF_LOG_POLICY_FILE", path)]), None)
            .unwrap_err()
            .to_string();
        assert!(
            bad.contains("policy.txt") && bad.contains("line 1"),
            "{bad}"
        );
    }

    #[test]
    fn the_first_complete_pair_wins() {
        let lookup = env(&[
            ("KV_REST_API_URL", "https://b.example"),
            ("KV_REST_API_TOKEN", "b"),
            ("FF_KV_REST_API_URL", "https://a.example"),
            ("FF_KV_REST_API_TOKEN", "a"),
            ("UPSTASH_REDIS_REST_URL", "https://c.example"),
            ("UPSTASH_REDIS_REST_TOKEN", "c"),
        ]);
        let config = kv_config(lookup).unwrap().unwrap();
        assert_eq!(
            (config.url.as_str(), config.token(), config.prefix.as_str()),
            ("https://a.example", "a", "ff:")
        );
        let config = kv_config(env(&[
            ("UPSTASH_REDIS_REST_URL", "https://c.example"),
            ("UPSTASH_REDIS_REST_TOKEN", "c"),
            ("FF_KV_PREFIX", "x:"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            (config.source, config.prefix.as_str()),
            ("UPSTASH_REDIS_REST_URL", "x:")
        );
    }

    #[test]
    fn a_half_pair_names_the_missing_variable() {
        let err = kv_config(env(&[("FF_KV_REST_API_URL", "https://a.example")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "FF_KV_REST_API_URL is set but FF_KV_REST_API_TOKEN is not: set both, or neither"
        );
        let err = kv_config(env(&[("KV_REST_API_TOKEN", "secret-value")])).unwrap_err();
        assert!(
            err.to_string().contains("KV_REST_API_URL")
                && !err.to_string().contains("secret-value")
        );
    }

    #[test]
    fn read_only_tokens_and_redis_urls_are_never_used() {
        let none = kv_config(env(&[
            ("KV_REST_API_URL", "https://a.example"),
            ("KV_REST_API_READ_ONLY_TOKEN", "ro"),
        ]));
        assert!(matches!(
            none,
            Err(ConfigError::IncompletePair {
                missing: "KV_REST_API_TOKEN",
                ..
            })
        ));
        assert!(matches!(
            kv_config(env(&[("KV_URL", "redis://x"), ("REDIS_URL", "redis://y")])),
            Ok(None)
        ));
        let err = kv_config(env(&[
            ("FF_KV_REST_API_URL", "redis://x"),
            ("FF_KV_REST_API_TOKEN", "t"),
        ]))
        .unwrap_err();
        assert_eq!(
            err,
            ConfigError::NotRestUrl {
                variable: "FF_KV_REST_API_URL"
            }
        );
    }

    #[test]
    fn secrets_never_print() {
        let token = WriteToken::new("super-secret-token").unwrap();
        assert!(!format!("{token:?}").contains("super-secret"));
        let config = kv_config(env(&[
            ("FF_KV_REST_API_URL", "https://a.example"),
            ("FF_KV_REST_API_TOKEN", "kv-secret"),
        ]))
        .unwrap()
        .unwrap();
        assert!(!format!("{config:?}").contains("kv-secret"));
    }

    #[test]
    fn a_short_or_padded_write_token_stops_start_up_and_an_empty_one_disables_writes() {
        let token = |value: &'static str| write_token(env(&[("FF_AGENT_WRITE_TOKEN", value)]));
        assert_eq!(token("x").unwrap_err(), ConfigError::WriteTokenTooShort);
        assert_eq!(
            token("fifteen-chars-x").unwrap_err(),
            ConfigError::WriteTokenTooShort
        );
        for padded in [
            " a-long-random-token-0123",
            "a-long-random-token-0123\n",
            "a-long random-token-0123",
            "   ",
        ] {
            let error = write_token(env(&[("FF_AGENT_WRITE_TOKEN", padded)])).unwrap_err();
            assert_eq!(error, ConfigError::WriteTokenNotPrintable, "{padded:?}");
            assert!(error.to_string().starts_with("FF_AGENT_WRITE_TOKEN "));
            assert!(!error.to_string().contains("a-long"), "never the value");
        }
        assert!(token("").unwrap().is_none());
        assert!(write_token(env(&[])).unwrap().is_none());
        let ok = token("sixteen-chars-xx").unwrap().unwrap();
        assert!(ok.verify("sixteen-chars-xx"));
    }

    #[test]
    fn tokens_are_verified_exactly() {
        let token = WriteToken::new("abc").unwrap();
        assert!(token.verify("abc"));
        assert!(!token.verify("abcd") && !token.verify("ab") && !token.verify(""));
        assert!(WriteToken::new("  ").is_none());
    }
}
