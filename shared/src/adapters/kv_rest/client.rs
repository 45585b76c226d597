//! A client of the Upstash Redis REST protocol (docs/providers.md, "Upstash Redis
//! REST"): the production KV store's only way in.
//!
//! - one command: `POST {url}` with a JSON array, answered `{"result": …}`;
//! - [`KvClient::pipeline`]: `POST {url}/pipeline`, several commands in one
//!   round trip, in order, not atomic;
//! - `KvClient::multi_exec`: `POST {url}/multi-exec`, the same but atomic
//!   (used for reads that must see one state);
//! - `Script`: a Lua script run with `EVALSHA`, falling back to `EVAL` when
//!   the server answers `NOSCRIPT` (a fresh or flushed server). The first run
//!   in a process sends `EVAL`, which also loads the script, so no run ever
//!   costs an extra round trip for loading.
//!
//! Every request goes through `crate::adapters::outbound` with a timeout
//! and a size cap. A transport failure, a timeout or an unreadable answer is
//! [`KvError::Unavailable`] (its cause kept as the error's source); a 5xx is
//! [`KvError::Status`]; a 401 is [`KvError::Unauthorized`]; a command the
//! server refused (400 `{"error"}`) is [`KvError::Command`]. Errors never
//! carry the token. No `Upstash-Encoding` header is sent, so strings come
//! back as plain JSON strings.

use crate::adapters::outbound::{self, Class, OutboundError};
use crate::config::KvConfig;
use serde_json::Value;
use sha1::{Digest as _, Sha1};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long one request may take, connection included, unless configured.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(4);

/// The largest response body the client reads (Upstash caps requests at 10 MB).
pub(crate) const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// Why a KV request failed.
#[derive(Debug, thiserror::Error)]
pub enum KvError {
    /// No whole answer in time, a broken connection, or an answer too large
    /// or not JSON.
    #[error("the KV store did not answer usably")]
    Unavailable(#[source] OutboundError),
    /// The store answered a status that is neither success nor a command's
    /// refusal (5xx, or another status without an `error`).
    #[error("the KV store answered HTTP {0}")]
    Status(u16),
    /// The answer is JSON but not of the protocol's shape.
    #[error("the KV store's answer is malformed: {0}")]
    Malformed(&'static str),
    /// The server refused the token (401).
    #[error("the KV store refused the token (401)")]
    Unauthorized,
    /// The server refused or failed the command (400 `{"error": …}`).
    #[error("KV command failed: {0}")]
    Command(String),
}

/// One command's own result inside a pipeline: its value or its error text.
pub(crate) type CommandResult = Result<Value, String>;

/// A Redis command as the REST protocol sends it: a JSON array of strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Command(Vec<String>);

impl Command {
    /// Starts a command named `name` (e.g. `"GET"`).
    pub fn new(name: &str) -> Command {
        Command(vec![name.to_owned()])
    }

    /// Adds one argument.
    pub fn arg(mut self, argument: impl ToString) -> Command {
        self.0.push(argument.to_string());
        self
    }

    /// Adds several arguments.
    pub(crate) fn args<T: ToString>(mut self, arguments: impl IntoIterator<Item = T>) -> Command {
        self.0.extend(arguments.into_iter().map(|a| a.to_string()));
        self
    }
}

/// The REST client; cheap to clone. It uses the process's one outbound HTTP
/// client, which is built on the first request (building it loads the
/// system's root certificates, which a function's start need not wait for).
#[derive(Clone)]
pub struct KvClient {
    timeout: Duration,
    base: String,
    authorization: String,
    loaded_scripts: Arc<Mutex<HashSet<String>>>,
}

impl std::fmt::Debug for KvClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KvClient")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl KvClient {
    /// A client of the configured store with `DEFAULT_TIMEOUT`.
    pub fn new(config: &KvConfig) -> KvClient {
        KvClient::with_timeout(config, DEFAULT_TIMEOUT)
    }

    /// A client whose every request gives up after `timeout`.
    pub fn with_timeout(config: &KvConfig, timeout: Duration) -> KvClient {
        KvClient {
            timeout,
            base: config.url.trim_end_matches('/').to_owned(),
            authorization: format!("Bearer {}", config.token()),
            loaded_scripts: Arc::default(),
        }
    }

    /// Runs one command.
    pub async fn command(&self, command: &Command) -> Result<Value, KvError> {
        let body = self.post("", &command.0).await?;
        one_result(body)
    }

    /// Runs commands in one round trip, in order, not atomically; each has its
    /// own result.
    pub async fn pipeline(&self, commands: &[Command]) -> Result<Vec<CommandResult>, KvError> {
        self.batch("/pipeline", commands).await
    }

    /// Runs commands in one round trip as one transaction (`MULTI`/`EXEC`).
    pub(crate) async fn multi_exec(
        &self,
        commands: &[Command],
    ) -> Result<Vec<CommandResult>, KvError> {
        self.batch("/multi-exec", commands).await
    }

    async fn batch(&self, path: &str, commands: &[Command]) -> Result<Vec<CommandResult>, KvError> {
        let parts: Vec<&Vec<String>> = commands.iter().map(|c| &c.0).collect();
        let body = self.post(path, &parts).await?;
        let Value::Array(items) = body else {
            return Err(KvError::Malformed("a batch answer is not an array"));
        };
        if items.len() != commands.len() {
            return Err(KvError::Malformed(
                "a batch answer does not have one result per command",
            ));
        }
        items.into_iter().map(item_result).collect()
    }

    async fn post(&self, path: &str, body: &impl serde::Serialize) -> Result<Value, KvError> {
        let payload = serde_json::to_vec(body)
            .map_err(|e| KvError::Unavailable(OutboundError::Malformed(e)))?;
        let request = outbound::client()
            .map_err(KvError::Unavailable)?
            .post(format!("{}{}", self.base, path))
            .header(reqwest::header::AUTHORIZATION, &self.authorization)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(payload);
        let answer = outbound::send(request, self.timeout, MAX_RESPONSE_BYTES)
            .await
            .map_err(KvError::Unavailable)?;
        if answer.status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(KvError::Unauthorized);
        }
        let status = answer.status.as_u16();
        match answer.class() {
            Class::Success => answer.json().map_err(KvError::Unavailable),
            Class::Transient => Err(KvError::Status(status)),
            Class::Refused => match answer.json::<Value>() {
                Ok(value) => match value.get("error").and_then(Value::as_str) {
                    Some(message) => Err(KvError::Command(message.to_owned())),
                    None => Err(KvError::Status(status)),
                },
                Err(_) => Err(KvError::Status(status)),
            },
        }
    }
}

fn one_result(body: Value) -> Result<Value, KvError> {
    match item_result(body)? {
        Ok(value) => Ok(value),
        Err(message) => Err(KvError::Command(message)),
    }
}

fn item_result(item: Value) -> Result<CommandResult, KvError> {
    let Value::Object(mut fields) = item else {
        return Err(KvError::Malformed("an answer is not an object"));
    };
    if let Some(error) = fields.remove("error") {
        return Ok(Err(error.as_str().unwrap_or("unknown error").to_owned()));
    }
    match fields.remove("result") {
        Some(value) => Ok(Ok(value)),
        None => Err(KvError::Malformed("an answer has neither result nor error")),
    }
}

/// A Lua script, identified by its SHA-1 as `EVALSHA` expects.
#[derive(Debug)]
pub(crate) struct Script {
    source: &'static str,
    sha1: String,
}

impl Script {
    /// Wraps the script's source.
    pub(crate) fn new(source: &'static str) -> Script {
        Script {
            source,
            sha1: hex::encode(Sha1::digest(source.as_bytes())),
        }
    }

    /// Runs the script with `keys` and `args`: `EVALSHA` once this client has
    /// loaded it, else `EVAL` (which loads it); `NOSCRIPT` falls back to `EVAL`.
    pub(crate) async fn run(
        &self,
        client: &KvClient,
        keys: &[String],
        args: &[String],
    ) -> Result<Value, KvError> {
        let loaded = client
            .loaded_scripts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&self.sha1);
        if loaded {
            match client
                .command(&self.call("EVALSHA", &self.sha1, keys, args))
                .await
            {
                Err(KvError::Command(message)) if message.contains("NOSCRIPT") => {}
                other => return other,
            }
        }
        let result = client
            .command(&self.call("EVAL", self.source, keys, args))
            .await;
        if result.is_ok() {
            client
                .loaded_scripts
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(self.sha1.clone());
        }
        result
    }

    fn call(&self, verb: &str, script: &str, keys: &[String], args: &[String]) -> Command {
        Command::new(verb)
            .arg(script)
            .arg(keys.len())
            .args(keys)
            .args(args)
    }
}

/// Reads a result as a string (`null` is `None`).
pub(crate) fn as_string(value: &Value) -> Result<Option<&str>, KvError> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        _ => Err(KvError::Malformed("a result is not a string")),
    }
}

/// Reads a result as an array.
pub(crate) fn as_array(value: &Value) -> Result<&[Value], KvError> {
    match value {
        Value::Array(items) => Ok(items),
        Value::Null => Ok(&[]),
        _ => Err(KvError::Malformed("a result is not an array")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_is_named_by_the_sha1_of_its_source() {
        // `redis-cli SCRIPT LOAD "return 1"` answers this digest.
        assert_eq!(
            Script::new("return 1").sha1,
            "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        );
    }

    #[test]
    fn pipeline_items_keep_their_own_errors() {
        let ok = item_result(serde_json::json!({"result": "OK"})).unwrap();
        assert_eq!(ok, Ok(Value::from("OK")));
        let failed = item_result(serde_json::json!({"error": "WRONGTYPE"})).unwrap();
        assert_eq!(failed, Err("WRONGTYPE".to_owned()));
        assert!(item_result(serde_json::json!({"other": 1})).is_err());
        assert!(item_result(serde_json::json!([1])).is_err());
    }

    #[test]
    fn the_client_never_shows_its_token() {
        let config = crate::config::kv_config(|name| match name {
            "FF_KV_REST_API_URL" => Some("https://kv.example.com".into()),
            "FF_KV_REST_API_TOKEN" => Some("very-secret-token".into()),
            _ => None,
        })
        .unwrap()
        .unwrap();
        let client = KvClient::new(&config);
        assert!(!format!("{client:?}").contains("very-secret-token"));
    }
}
