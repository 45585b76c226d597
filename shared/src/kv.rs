//! A client of the Upstash Redis REST protocol (PROVIDERS.md "Upstash Redis
//! REST"): the production KV store's only way in.
//!
//! - one command: `POST {url}` with a JSON array, answered `{"result": …}`;
//! - [`KvClient::pipeline`]: `POST {url}/pipeline`, several commands in one
//!   round trip, in order, not atomic;
//! - [`KvClient::multi_exec`]: `POST {url}/multi-exec`, the same but atomic
//!   (used for reads that must see one state);
//! - [`Script`]: a Lua script run with `EVALSHA`, falling back to `EVAL` when
//!   the server answers `NOSCRIPT` (a fresh or flushed server). The first run
//!   in a process sends `EVAL`, which also loads the script, so no run ever
//!   costs an extra round trip for loading.
//!
//! Every request has a timeout. A transport failure, a timeout or a 5xx is
//! [`KvError::Unavailable`]; a 401 is [`KvError::Unauthorized`]; a command
//! the server refused (400 `{"error"}`) is [`KvError::Command`]. Errors never
//! carry the token. No `Upstash-Encoding` header is sent, so strings come back
//! as plain JSON strings.

use crate::config::KvConfig;
use serde_json::Value;
use sha1::{Digest as _, Sha1};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long one request may take, connection included, unless configured.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(4);

/// The largest response body the client reads (Upstash caps requests at 10 MB).
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// Why a KV request failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum KvError {
    /// No answer in time, a transport failure, a 5xx or an unreadable body.
    #[error("KV store unavailable: {0}")]
    Unavailable(String),
    /// The server refused the token (401).
    #[error("KV store refused the token (401)")]
    Unauthorized,
    /// The server refused or failed the command (400 `{"error": …}`).
    #[error("KV command failed: {0}")]
    Command(String),
}

/// One command's own result inside a pipeline: its value or its error text.
pub type CommandResult = Result<Value, String>;

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
    pub fn args<T: ToString>(mut self, arguments: impl IntoIterator<Item = T>) -> Command {
        self.0.extend(arguments.into_iter().map(|a| a.to_string()));
        self
    }

    /// The command and its arguments.
    pub fn parts(&self) -> &[String] {
        &self.0
    }
}

/// The REST client; cheap to clone (one connection pool).
#[derive(Clone)]
pub struct KvClient {
    http: reqwest::Client,
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
    /// A client of the configured store with [`DEFAULT_TIMEOUT`].
    pub fn new(config: &KvConfig) -> Result<KvClient, KvError> {
        KvClient::with_timeout(config, DEFAULT_TIMEOUT)
    }

    /// A client whose every request gives up after `timeout`.
    pub fn with_timeout(config: &KvConfig, timeout: Duration) -> Result<KvClient, KvError> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
            .map_err(|e| KvError::Unavailable(format!("cannot build the HTTP client: {e}")))?;
        Ok(KvClient {
            http,
            base: config.url.trim_end_matches('/').to_owned(),
            authorization: format!("Bearer {}", config.token()),
            loaded_scripts: Arc::default(),
        })
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
    pub async fn multi_exec(&self, commands: &[Command]) -> Result<Vec<CommandResult>, KvError> {
        self.batch("/multi-exec", commands).await
    }

    async fn batch(&self, path: &str, commands: &[Command]) -> Result<Vec<CommandResult>, KvError> {
        let parts: Vec<&Vec<String>> = commands.iter().map(|c| &c.0).collect();
        let body = self.post(path, &parts).await?;
        let Value::Array(items) = body else {
            return Err(KvError::Unavailable(
                "a batch answer is not an array".into(),
            ));
        };
        if items.len() != commands.len() {
            return Err(KvError::Unavailable(format!(
                "{} answers to {} commands",
                items.len(),
                commands.len()
            )));
        }
        items.into_iter().map(item_result).collect()
    }

    async fn post(&self, path: &str, body: &impl serde::Serialize) -> Result<Value, KvError> {
        let url = format!("{}{}", self.base, path);
        let payload = serde_json::to_vec(body)
            .map_err(|e| KvError::Command(format!("cannot encode the command: {e}")))?;
        let response = self
            .http
            .post(&url)
            .header(reqwest::header::AUTHORIZATION, &self.authorization)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(payload)
            .send()
            .await
            .map_err(transport)?;
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(KvError::Unauthorized);
        }
        if status.is_server_error() {
            return Err(KvError::Unavailable(format!("the store answered {status}")));
        }
        if let Some(length) = response.content_length()
            && length > MAX_RESPONSE_BYTES as u64
        {
            return Err(KvError::Unavailable("the answer is too large".into()));
        }
        let bytes = response.bytes().await.map_err(transport)?;
        if bytes.len() > MAX_RESPONSE_BYTES {
            return Err(KvError::Unavailable("the answer is too large".into()));
        }
        let value: Value = serde_json::from_slice(&bytes).map_err(|_| {
            KvError::Unavailable(format!(
                "the store answered {status} with a body that is not JSON"
            ))
        })?;
        if !status.is_success() {
            return match value.get("error").and_then(Value::as_str) {
                Some(message) => Err(KvError::Command(message.to_owned())),
                None => Err(KvError::Unavailable(format!("the store answered {status}"))),
            };
        }
        Ok(value)
    }
}

fn transport(error: reqwest::Error) -> KvError {
    let error = error.without_url();
    if error.is_timeout() {
        KvError::Unavailable("no answer within the timeout".into())
    } else {
        KvError::Unavailable(format!("transport failure: {error}"))
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
        return Err(KvError::Unavailable("an answer is not an object".into()));
    };
    if let Some(error) = fields.remove("error") {
        return Ok(Err(error.as_str().unwrap_or("unknown error").to_owned()));
    }
    match fields.remove("result") {
        Some(value) => Ok(Ok(value)),
        None => Err(KvError::Unavailable(
            "an answer has neither result nor error".into(),
        )),
    }
}

/// A Lua script, identified by its SHA-1 as `EVALSHA` expects.
#[derive(Debug)]
pub struct Script {
    source: &'static str,
    sha1: String,
}

impl Script {
    /// Wraps the script's source.
    pub fn new(source: &'static str) -> Script {
        Script {
            source,
            sha1: hex::encode(Sha1::digest(source.as_bytes())),
        }
    }

    /// Runs the script with `keys` and `args`: `EVALSHA` once this client has
    /// loaded it, else `EVAL` (which loads it); `NOSCRIPT` falls back to `EVAL`.
    pub async fn run(
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
pub fn as_string(value: &Value) -> Result<Option<&str>, KvError> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        other => Err(KvError::Unavailable(format!(
            "expected a string, got {}",
            kind_of(other)
        ))),
    }
}

/// Reads a result as an array.
pub fn as_array(value: &Value) -> Result<&[Value], KvError> {
    match value {
        Value::Array(items) => Ok(items),
        Value::Null => Ok(&[]),
        other => Err(KvError::Unavailable(format!(
            "expected an array, got {}",
            kind_of(other)
        ))),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
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
        let client = KvClient::new(&config).unwrap();
        assert!(!format!("{client:?}").contains("very-secret-token"));
    }
}
