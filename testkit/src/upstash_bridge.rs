//! The Upstash Redis REST protocol in front of a real `redis-server`.
//!
//! `POST /` runs one command (`["SET","k","v"]` → `{"result":"OK"}`);
//! `POST /pipeline` runs several in order; `POST /multi-exec` runs them in
//! one `MULTI`/`EXEC`. A failed command answers `400 {"error": "..."}` (inside
//! a batch: that item is `{"error"}`); a wrong or missing Bearer token answers
//! 401; a `Content-Type` other than exactly `application/json` answers 400.
//!
//! Tests queue [`Fault`]s for the next requests and read how many requests
//! (round trips) arrived.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use redis::aio::MultiplexedConnection;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What the bridge does to one request instead of answering normally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answer 500 without executing anything.
    FailBefore,
    /// Execute the commands, then answer 500 (the write took effect).
    FailAfter,
    /// Never answer (the client's timeout must fire).
    Hang,
}

struct Shared {
    connection: MultiplexedConnection,
    authorization: String,
    faults: Mutex<VecDeque<Fault>>,
    requests: AtomicU64,
}

/// A running bridge; it stops with the test's runtime.
#[derive(Clone)]
pub struct UpstashBridge {
    url: String,
    token: String,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for UpstashBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstashBridge")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl UpstashBridge {
    /// Serves the protocol on a free loopback port, in front of the Redis at
    /// `redis_url`, accepting `token`.
    pub async fn start(
        redis_url: &str,
        token: &str,
    ) -> Result<UpstashBridge, Box<dyn std::error::Error>> {
        let client = redis::Client::open(redis_url)?;
        let connection = client.get_multiplexed_async_connection().await?;
        let shared = Arc::new(Shared {
            connection,
            authorization: format!("Bearer {token}"),
            faults: Mutex::new(VecDeque::new()),
            requests: AtomicU64::new(0),
        });
        let app = Router::new()
            .route("/", post(single))
            .route("/pipeline", post(pipeline))
            .route("/multi-exec", post(multi_exec))
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(UpstashBridge {
            url,
            token: token.to_owned(),
            shared,
        })
    }

    /// The REST base URL (`http://127.0.0.1:{port}`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The token the bridge accepts.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// A KV configuration pointing at this bridge, under `prefix`.
    pub fn kv_config(&self, prefix: &str) -> freedom_shared::config::KvConfig {
        let (url, token, prefix) = (self.url.clone(), self.token.clone(), prefix.to_owned());
        freedom_shared::config::kv_config(move |name| match name {
            "FF_KV_REST_API_URL" => Some(url.clone()),
            "FF_KV_REST_API_TOKEN" => Some(token.clone()),
            "FF_KV_PREFIX" => Some(prefix.clone()),
            _ => None,
        })
        .expect("a complete pair")
        .expect("configured")
    }

    /// Queues `fault` for the next request that has no fault queued before it.
    pub fn inject(&self, fault: Fault) {
        self.shared
            .faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push_back(fault);
    }

    /// How many requests arrived (each is one round trip).
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// A plain Redis connection to the same server, for assertions.
    pub fn redis(&self) -> MultiplexedConnection {
        self.shared.connection.clone()
    }
}

/// A snapshot of a Redis database: every key with its `DUMP`.
pub type Snapshot = Vec<(String, Vec<u8>)>;

/// Every key of the database `redis` talks to, with its `DUMP` (what a
/// backup of the database holds).
pub async fn dump_all(redis: &mut MultiplexedConnection) -> Snapshot {
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(redis)
        .await
        .expect("KEYS");
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let bytes: Vec<u8> = redis::cmd("DUMP")
            .arg(&key)
            .query_async(redis)
            .await
            .expect("DUMP");
        out.push((key, bytes));
    }
    out
}

/// The database as `snapshot` had it, everything else gone (a database
/// restored from a backup).
pub async fn restore_all(redis: &mut MultiplexedConnection, snapshot: &Snapshot) {
    let _: () = redis::cmd("FLUSHALL")
        .query_async(redis)
        .await
        .expect("FLUSHALL");
    for (key, bytes) in snapshot {
        let _: () = redis::cmd("RESTORE")
            .arg(key)
            .arg(0)
            .arg(bytes)
            .query_async(redis)
            .await
            .expect("RESTORE");
    }
}

enum Mode {
    Single,
    Pipeline,
    MultiExec,
}

async fn single(State(s): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    handle(s, headers, body, Mode::Single).await
}

async fn pipeline(State(s): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    handle(s, headers, body, Mode::Pipeline).await
}

async fn multi_exec(State(s): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    handle(s, headers, body, Mode::MultiExec).await
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

/// Answers one REST request as Upstash does. (Long: the protocol's four
/// shapes, single, pipeline, transaction and faults, in one dispatch.)
async fn handle(shared: Arc<Shared>, headers: HeaderMap, body: Bytes, mode: Mode) -> Response {
    shared.requests.fetch_add(1, Ordering::SeqCst);
    let fault = shared
        .faults
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .pop_front();
    match fault {
        Some(Fault::FailBefore) => {
            return error(StatusCode::INTERNAL_SERVER_ERROR, "injected failure");
        }
        Some(Fault::Hang) => std::future::pending::<()>().await,
        _ => {}
    }
    let authorized = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == shared.authorization);
    if !authorized {
        return error(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    if headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        != Some("application/json")
    {
        return error(
            StatusCode::BAD_REQUEST,
            "Content-Type must be application/json",
        );
    }
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "the body is not JSON");
    };
    let mut connection = shared.connection.clone();
    let answer = match mode {
        Mode::Single => match command(&body) {
            Ok(cmd) => match cmd.query_async::<redis::Value>(&mut connection).await {
                Ok(value) => (StatusCode::OK, json!({ "result": to_json(value) })),
                Err(e) => (StatusCode::BAD_REQUEST, json!({ "error": message(&e) })),
            },
            Err(m) => (StatusCode::BAD_REQUEST, json!({ "error": m })),
        },
        Mode::Pipeline => match commands(&body) {
            Ok(cmds) => {
                let mut items = Vec::with_capacity(cmds.len());
                for cmd in cmds {
                    items.push(
                        match cmd.query_async::<redis::Value>(&mut connection).await {
                            Ok(value) => json!({ "result": to_json(value) }),
                            Err(e) => json!({ "error": message(&e) }),
                        },
                    );
                }
                (StatusCode::OK, Value::Array(items))
            }
            Err(m) => (StatusCode::BAD_REQUEST, json!({ "error": m })),
        },
        Mode::MultiExec => match commands(&body) {
            Ok(cmds) => {
                let mut pipe = redis::pipe();
                pipe.atomic();
                for cmd in &cmds {
                    pipe.add_command(cmd.clone());
                }
                match pipe.query_async::<Vec<redis::Value>>(&mut connection).await {
                    Ok(values) => (
                        StatusCode::OK,
                        Value::Array(
                            values
                                .into_iter()
                                .map(|v| match v {
                                    redis::Value::ServerError(e) => {
                                        json!({ "error": format!("{} {}", e.code(), e.details().unwrap_or_default()) })
                                    }
                                    other => json!({ "result": to_json(other) }),
                                })
                                .collect(),
                        ),
                    ),
                    Err(e) => (StatusCode::BAD_REQUEST, json!({ "error": message(&e) })),
                }
            }
            Err(m) => (StatusCode::BAD_REQUEST, json!({ "error": m })),
        },
    };
    if fault == Some(Fault::FailAfter) {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "injected failure after executing",
        );
    }
    (answer.0, axum::Json(answer.1)).into_response()
}

fn command(value: &Value) -> Result<redis::Cmd, String> {
    let parts = value
        .as_array()
        .filter(|p| !p.is_empty())
        .ok_or("a command is a non-empty array")?;
    let mut cmd = redis::cmd(&argument(&parts[0])?);
    for part in &parts[1..] {
        cmd.arg(argument(part)?);
    }
    Ok(cmd)
}

fn commands(value: &Value) -> Result<Vec<redis::Cmd>, String> {
    value
        .as_array()
        .ok_or("a batch is an array of commands")?
        .iter()
        .map(command)
        .collect()
}

fn argument(value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err("command arguments are strings or numbers".into()),
    }
}

fn message(error: &redis::RedisError) -> String {
    match (error.code(), error.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_owned(),
        _ => error.to_string(),
    }
}

fn to_json(value: redis::Value) -> Value {
    match value {
        redis::Value::Nil => Value::Null,
        redis::Value::Int(i) => json!(i),
        redis::Value::BulkString(bytes) => {
            Value::String(String::from_utf8_lossy(&bytes).into_owned())
        }
        redis::Value::Array(items) | redis::Value::Set(items) => {
            Value::Array(items.into_iter().map(to_json).collect())
        }
        redis::Value::SimpleString(s) => Value::String(s),
        redis::Value::Okay => Value::String("OK".into()),
        redis::Value::Double(d) => json!(d),
        redis::Value::Boolean(b) => json!(b),
        redis::Value::VerbatimString { text, .. } => Value::String(text),
        redis::Value::BigNumber(n) => Value::String(n.to_string()),
        redis::Value::Map(pairs) => Value::Array(
            pairs
                .into_iter()
                .flat_map(|(k, v)| [to_json(k), to_json(v)])
                .collect(),
        ),
        redis::Value::ServerError(e) => Value::String(format!("{e:?}")),
        other => Value::String(format!("{other:?}")),
    }
}
