//! A stand-in for the AWS Lambda Runtime API (the HTTP interface a custom
//! runtime polls), so the real `fund` and `scanner` binaries can be driven
//! as Lambda drives them:
//!
//! - `GET /2018-06-01/runtime/invocation/next` waits for a queued event and
//!   answers it with the `Lambda-Runtime-*` headers;
//! - `POST /2018-06-01/runtime/invocation/{id}/response` and `…/{id}/error`
//!   hand the function's answer back to the test;
//! - `POST /2018-06-01/runtime/init/error` reports a failed start.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::{Mutex, mpsc};
use tokio::time::Instant;

/// What the function answered to one invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The invocation's request id.
    pub request_id: String,
    /// `response` or `error` (or `init-error`).
    pub kind: &'static str,
    /// The body, as JSON.
    pub body: Value,
}

struct Shared {
    events: Mutex<mpsc::UnboundedReceiver<(String, Value)>>,
    answers: mpsc::UnboundedSender<Answer>,
    polls: mpsc::UnboundedSender<Instant>,
}

/// A running fake Runtime API.
pub struct FakeRuntimeApi {
    address: String,
    queue: mpsc::UnboundedSender<(String, Value)>,
    answers: mpsc::UnboundedReceiver<Answer>,
    polls: mpsc::UnboundedReceiver<Instant>,
    next_id: AtomicU64,
}

impl FakeRuntimeApi {
    /// Serves on a free loopback port.
    pub async fn start() -> std::io::Result<FakeRuntimeApi> {
        let (queue, events) = mpsc::unbounded_channel();
        let (answers_tx, answers) = mpsc::unbounded_channel();
        let (polls_tx, polls) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            events: Mutex::new(events),
            answers: answers_tx,
            polls: polls_tx,
        });
        let app = Router::new()
            .route("/2018-06-01/runtime/invocation/next", get(next))
            .route("/2018-06-01/runtime/invocation/{id}/{kind}", post(answer))
            .route("/2018-06-01/runtime/init/error", post(init_error))
            .with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?.to_string();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeRuntimeApi {
            address,
            queue,
            answers,
            polls,
            next_id: AtomicU64::new(1),
        })
    }

    /// `host:port`, the value of `AWS_LAMBDA_RUNTIME_API`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The environment a Lambda function starts with, pointing here.
    pub fn env(&self, function_name: &str) -> Vec<(String, String)> {
        vec![
            ("AWS_LAMBDA_RUNTIME_API".into(), self.address.clone()),
            ("AWS_LAMBDA_FUNCTION_NAME".into(), function_name.into()),
            ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE".into(), "256".into()),
            ("AWS_LAMBDA_FUNCTION_VERSION".into(), "$LATEST".into()),
            (
                "AWS_LAMBDA_LOG_GROUP_NAME".into(),
                format!("/aws/lambda/{function_name}"),
            ),
            ("AWS_LAMBDA_LOG_STREAM_NAME".into(), "test".into()),
            ("AWS_REGION".into(), "us-east-1".into()),
        ]
    }

    /// Queues an invocation; returns its request id.
    pub fn invoke(&self, event: Value) -> String {
        let id = format!("req-{}", self.next_id.fetch_add(1, Ordering::SeqCst));
        self.queue
            .send((id.clone(), event))
            .expect("the server is running");
        id
    }

    /// The next answer the function posted.
    pub async fn answer(&mut self) -> Answer {
        self.answers.recv().await.expect("the server is running")
    }

    /// When the function next polled for an invocation.
    pub async fn poll(&mut self) -> Instant {
        self.polls.recv().await.expect("the server is running")
    }
}

async fn next(State(shared): State<Arc<Shared>>) -> Response {
    let _ = shared.polls.send(Instant::now());
    let Some((id, event)) = shared.events.lock().await.recv().await else {
        return StatusCode::GONE.into_response();
    };
    let deadline = chrono::Utc::now().timestamp_millis() + 60_000;
    let mut headers = HeaderMap::new();
    let mut set = |name: &'static str, value: String| {
        headers.insert(name, HeaderValue::from_str(&value).expect("ASCII"));
    };
    set("lambda-runtime-aws-request-id", id);
    set("lambda-runtime-deadline-ms", deadline.to_string());
    set(
        "lambda-runtime-invoked-function-arn",
        "arn:aws:lambda:us-east-1:123456789012:function:test".into(),
    );
    set(
        "lambda-runtime-trace-id",
        "Root=1-00000000-000000000000000000000000".into(),
    );
    (headers, axum::Json(event)).into_response()
}

fn parse(body: &Bytes) -> Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    Path((id, kind)): Path<(String, String)>,
    body: Bytes,
) -> StatusCode {
    let kind = match kind.as_str() {
        "response" => "response",
        "error" => "error",
        _ => return StatusCode::NOT_FOUND,
    };
    let _ = shared.answers.send(Answer {
        request_id: id,
        kind,
        body: parse(&body),
    });
    StatusCode::ACCEPTED
}

async fn init_error(State(shared): State<Arc<Shared>>, body: Bytes) -> StatusCode {
    let _ = shared.answers.send(Answer {
        request_id: String::new(),
        kind: "init-error",
        body: parse(&body),
    });
    StatusCode::ACCEPTED
}

/// Starts a Lambda package's binary outside Lambda (no
/// `AWS_LAMBDA_RUNTIME_API`) and returns whether it succeeded and what it
/// said on standard error.
pub fn start_outside_lambda(binary: &str) -> (bool, String) {
    let output = std::process::Command::new(binary)
        .env_remove("AWS_LAMBDA_RUNTIME_API")
        .output()
        .expect("the binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
