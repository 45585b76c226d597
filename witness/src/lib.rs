//! `freedom-witness`: a minimal witness to c2sp.org/tlog-witness.
//!
//! It trusts the logs its configuration lists (`log <vkey> [<url>]` lines,
//! the tlog-policy syntax; the key's name is the log's origin), and cosigns
//! a checkpoint of one of them only once it is proved consistent with the
//! last checkpoint it cosigned for that origin. Its state is one SQLite
//! table; the check and the update are one `BEGIN IMMEDIATE` transaction,
//! so two requests can never roll a log back.
//!
//! - `POST /add-checkpoint`: the body (at most 16 KiB, else 413) is
//!   `old <size>`, the consistency proof, an empty line and the signed
//!   checkpoint. Answers, as the specification orders them: 400 malformed
//!   or `old` above the checkpoint's size; 404 an origin it does not trust;
//!   403 no signature by a trusted key, or one that fails; 409 with
//!   `text/x.tlog.size` and the size it last cosigned when `old` is not
//!   that size; 422 a size-0 checkpoint whose root is not the empty tree's,
//!   a proof where none is due, a proof that does not verify, or the same
//!   size with another root; 200 with its `cosignature/v1` line.
//! - `GET /<hex SHA-256 of the origin>/checkpoint`: the monitoring read,
//!   the latest checkpoint it cosigned with its cosignature (404 before
//!   any).

mod state;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use freedom_tlog::checkpoint::Checkpoint;
use freedom_tlog::cosignature::CosignerKey;
use freedom_tlog::merkle::Head;
use freedom_tlog::note::{NoteError, VerifierKey};
use freedom_tlog::witness::{AddCheckpoint, MAX_BODY_BYTES, SIZE_HINT_TYPE, judge, origin_hash};
pub use state::{Cosigned, StateError, WitnessState};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Why a configuration cannot be read: the line and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct ConfigError {
    /// The line at fault, counted from 1.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// The logs a witness trusts, by origin.
#[derive(Debug, Clone, Default)]
pub struct TrustedLogs {
    by_origin: BTreeMap<String, Vec<VerifierKey>>,
}

impl TrustedLogs {
    /// Reads `log <vkey> [<url>]` lines (`#` comments and blank lines
    /// allowed); the origin is the key's name.
    pub fn parse(text: &str) -> Result<TrustedLogs, ConfigError> {
        let mut logs = TrustedLogs::default();
        for (index, line) in text.lines().enumerate() {
            let fail = |reason: String| ConfigError {
                line: index + 1,
                reason,
            };
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [] => {}
                [first, ..] if first.starts_with('#') => {}
                ["log", vkey] | ["log", vkey, _] => {
                    let key = VerifierKey::parse(vkey)
                        .map_err(|e| fail(format!("the log's key: {e}")))?;
                    logs.by_origin
                        .entry(key.name().to_owned())
                        .or_default()
                        .push(key);
                }
                _ => return Err(fail("expected: log <vkey> [<url>]".into())),
            }
        }
        if logs.by_origin.is_empty() {
            return Err(ConfigError {
                line: 0,
                reason: "no log line: the witness would trust no log".into(),
            });
        }
        Ok(logs)
    }

    /// The origins trusted.
    pub fn origins(&self) -> impl Iterator<Item = &str> {
        self.by_origin.keys().map(String::as_str)
    }
}

/// A witness: its key, the logs it trusts, its state.
pub struct Witness {
    key: CosignerKey,
    logs: TrustedLogs,
    state: WitnessState,
    clock: Box<dyn Fn() -> u64 + Send + Sync>,
}

impl Witness {
    /// A witness signing with `key`, trusting `logs`, keeping `state`.
    pub fn new(key: CosignerKey, logs: TrustedLogs, state: WitnessState) -> Witness {
        Witness {
            key,
            logs,
            state,
            clock: Box::new(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_secs().max(1))
            }),
        }
    }

    /// The witness's verifier key, for a policy's `witness` line.
    pub fn verifier_key(&self) -> String {
        self.key.witness_key().to_text()
    }
}

/// The witness's routes.
pub fn app(witness: Witness) -> Router {
    Router::new()
        .route("/add-checkpoint", post(add_checkpoint))
        .route("/{origin_hash}/checkpoint", get(monitoring))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(Arc::new(witness))
}

fn plain(status: StatusCode, text: impl Into<String>) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text.into(),
    )
        .into_response()
}

/// The checkpoint `note` carries, signed by one of `keys`: 403 when none
/// signed it or a trusted key's signature fails, 400 when it is not a
/// checkpoint.
fn trusted_checkpoint(
    note: &str,
    keys: &[VerifierKey],
) -> Result<Checkpoint, (StatusCode, &'static str)> {
    let unsigned = note.find("\n\n").is_some_and(|i| note[i + 2..].is_empty());
    for key in keys.iter().filter(|_| !unsigned) {
        match Checkpoint::open(note, key) {
            Ok(checkpoint) => return Ok(checkpoint),
            Err(NoteError::NotSignedBy(_)) => continue,
            Err(NoteError::BadSignature(_)) => {
                return Err((
                    StatusCode::FORBIDDEN,
                    "a signature by a trusted key does not verify\n",
                ));
            }
            Err(_) => return Err((StatusCode::BAD_REQUEST, "the checkpoint is malformed\n")),
        }
    }
    Err((
        StatusCode::FORBIDDEN,
        "no signature by a key trusted for this origin\n",
    ))
}

async fn add_checkpoint(State(witness): State<Arc<Witness>>, body: Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return plain(StatusCode::BAD_REQUEST, "the body is not UTF-8\n");
    };
    let request = match AddCheckpoint::parse(text) {
        Ok(request) => request,
        Err(error) => return plain(StatusCode::BAD_REQUEST, format!("{error}\n")),
    };
    let origin = request.checkpoint.split('\n').next().unwrap_or_default();
    let Some(keys) = witness.logs.by_origin.get(origin) else {
        return plain(StatusCode::NOT_FOUND, "unknown log origin\n");
    };
    let checkpoint = match trusted_checkpoint(&request.checkpoint, keys) {
        Ok(checkpoint) => checkpoint,
        Err((status, reason)) => return plain(status, reason),
    };
    if request.old > checkpoint.size {
        return plain(
            StatusCode::BAD_REQUEST,
            "old is larger than the checkpoint's size\n",
        );
    }
    let new = Head {
        size: checkpoint.size,
        root_hash: checkpoint.root,
    };
    let text_end = request.checkpoint.find("\n\n").map_or(0, |i| i + 1);
    let checkpoint_text = request.checkpoint[..text_end].to_owned();
    let time = (witness.clock)();
    let cosignature = match witness.key.cosign(&checkpoint_text, time) {
        Ok(line) => line,
        // The checkpoint was read above: only an origin past 255 bytes (which
        // an ML-DSA-44 cosignature cannot name) gets here.
        Err(error) => {
            return plain(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("cannot cosign this checkpoint: {error}\n"),
            );
        }
    };
    let note = format!("{}{cosignature}", request.checkpoint);
    let origin = checkpoint.origin.clone();
    let outcome = witness
        .state
        .check_and_update(
            checkpoint.origin.clone(),
            new,
            note,
            move |latest: Option<Head>| judge(&request, latest, new),
        )
        .await;
    match outcome {
        Ok(Cosigned::Yes) => {
            tracing::info!(origin = %origin, size = new.size, "cosigned");
            plain(StatusCode::OK, cosignature)
        }
        Ok(Cosigned::Conflict(size)) => (
            StatusCode::CONFLICT,
            [(header::CONTENT_TYPE, SIZE_HINT_TYPE)],
            format!("{size}\n"),
        )
            .into_response(),
        Ok(Cosigned::Refused(reason)) => {
            tracing::warn!(origin = %origin, size = new.size, reason, "refused to cosign");
            plain(StatusCode::UNPROCESSABLE_ENTITY, format!("{reason}\n"))
        }
        Err(error) => {
            tracing::error!(%error, "the witness's state failed");
            plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "the witness's state is unavailable\n",
            )
        }
    }
}

async fn monitoring(State(witness): State<Arc<Witness>>, Path(hash): Path<String>) -> Response {
    let Some(origin) = witness
        .logs
        .origins()
        .find(|origin| origin_hash(origin) == hash)
        .map(str::to_owned)
    else {
        return plain(StatusCode::NOT_FOUND, "unknown log origin\n");
    };
    match witness.state.latest_note(origin).await {
        Ok(Some(note)) => plain(StatusCode::OK, note),
        Ok(None) => plain(StatusCode::NOT_FOUND, "no checkpoint cosigned yet\n"),
        Err(error) => {
            tracing::error!(%error, "the witness's state failed");
            plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "the witness's state is unavailable\n",
            )
        }
    }
}
