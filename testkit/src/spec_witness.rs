//! A witness written from c2sp.org/tlog-witness, tlog-checkpoint,
//! signed-note, tlog-cosignature and RFC 6962 alone, for tests: it shares
//! no code with `freedom-witness` or with the service's `tlog` module (its
//! own note parsing, key IDs, Ed25519 checks, consistency verification and
//! cosignatures, on `sha2`, `ed25519-dalek` and `base64`). The log's
//! cosigning client is tested against it, so a misreading of the
//! specification shared by the service and `freedom-witness` shows.
//!
//! It trusts one log key, keeps its state in memory, serves the monitoring
//! read (`GET /<hex SHA-256 of the origin>/checkpoint`) unless told not to,
//! and can be stopped and restarted (with its state, or empty) on the same
//! port. Tests can set its clock ahead or behind, and make it answer a
//! same-size fork with a `409` (the specification's wording before
//! 2026-07) instead of a `422`.

use crate::stoppable::Stoppable;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signer as _, Verifier as _};
use sha2::{Digest as _, Sha256};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

type Hash = [u8; 32];

/// What the witness remembers: the size and root it last cosigned.
#[derive(Debug, Clone, Copy, Default)]
pub struct Latest {
    /// Tree size.
    pub size: u64,
    /// Root hash (the empty tree's when size is 0).
    pub root: Hash,
}

struct Inner {
    name: String,
    key: ed25519_dalek::SigningKey,
    log_name: String,
    log_key: ed25519_dalek::VerifyingKey,
    log_id: [u8; 4],
    latest: Mutex<Option<Latest>>,
    /// The note last cosigned (the checkpoint and this witness's line).
    note: Mutex<Option<String>>,
    /// Whether `GET /<origin hash>/checkpoint` is served.
    monitoring: AtomicBool,
    /// Seconds added to the system clock in cosignatures.
    clock_offset: AtomicI64,
    /// Whether a same-size checkpoint with another root is answered `409`.
    same_size_conflict: AtomicBool,
}

/// A running spec-only witness.
pub struct SpecWitness {
    inner: Arc<Inner>,
    server: Stoppable,
}

fn key_id(name: &str, typed_key: &[u8]) -> [u8; 4] {
    let digest = Sha256::new()
        .chain_update(name.as_bytes())
        .chain_update(b"\n")
        .chain_update(typed_key)
        .finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}

fn typed(kind: u8, key: &[u8; 32]) -> Vec<u8> {
    let mut out = vec![kind];
    out.extend_from_slice(key);
    out
}

impl SpecWitness {
    /// Starts a witness named `name` (key from `seed`) trusting the log
    /// whose verifier key is `log_vkey` (`<name>+<id>+<base64(0x01||pk)>`).
    pub async fn start(name: &str, seed: [u8; 32], log_vkey: &str) -> SpecWitness {
        let mut parts = log_vkey.splitn(3, '+');
        let log_name = parts.next().expect("a name").to_owned();
        let _id = parts.next().expect("an id");
        let data = B64.decode(parts.next().expect("key data")).expect("base64");
        assert_eq!(data[0], 0x01, "an Ed25519 log key");
        let raw: [u8; 32] = data[1..].try_into().expect("32 bytes");
        let inner = Arc::new(Inner {
            name: name.to_owned(),
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
            log_id: key_id(&log_name, &typed(0x01, &raw)),
            log_name,
            log_key: ed25519_dalek::VerifyingKey::from_bytes(&raw).expect("a public key"),
            latest: Mutex::new(None),
            note: Mutex::new(None),
            monitoring: AtomicBool::new(true),
            clock_offset: AtomicI64::new(0),
            same_size_conflict: AtomicBool::new(false),
        });
        let server = Stoppable::start(routes(&inner));
        SpecWitness { inner, server }
    }

    /// Its submission prefix.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// Its verifier key for a policy (`<name>+<id>+<base64(0x04||pk)>`).
    pub fn vkey(&self) -> String {
        let public = typed(0x04, self.inner.key.verifying_key().as_bytes());
        format!(
            "{}+{}+{}",
            self.inner.name,
            key_id(&self.inner.name, &public)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>(),
            B64.encode(&public)
        )
    }

    /// What it last cosigned.
    pub fn latest(&self) -> Option<Latest> {
        *self.inner.latest.lock().unwrap()
    }

    /// Whether it serves the monitoring read (404 when not).
    pub fn serve_monitoring(&self, serve: bool) {
        self.inner.monitoring.store(serve, Ordering::SeqCst);
    }

    /// Dates its cosignatures `seconds` away from the system clock.
    pub fn set_clock_offset(&self, seconds: i64) {
        self.inner.clock_offset.store(seconds, Ordering::SeqCst);
    }

    /// Answers a checkpoint of the size it holds with another root `409`
    /// with its size (the specification's wording before 2026-07) rather
    /// than `422`.
    pub fn answer_same_size_fork_with_409(&self, conflict: bool) {
        self.inner
            .same_size_conflict
            .store(conflict, Ordering::SeqCst);
    }

    /// Stops answering (the port refuses connections).
    pub fn stop(&mut self) {
        self.server.stop();
    }

    /// Starts answering again on the same port; `forget` drops its state
    /// first (a witness restored from nothing).
    pub async fn restart(&mut self, forget: bool) {
        if forget {
            *self.inner.latest.lock().unwrap() = None;
            *self.inner.note.lock().unwrap() = None;
        }
        self.server.restart(routes(&self.inner)).await;
    }
}

fn routes(inner: &Arc<Inner>) -> Router {
    Router::new()
        .route("/add-checkpoint", post(add_checkpoint))
        .route("/{origin_hash}/checkpoint", get(monitoring))
        .with_state(Arc::clone(inner))
}

/// The monitoring read: the latest checkpoint cosigned, with its line.
async fn monitoring(
    State(w): State<Arc<Inner>>,
    axum::extract::Path(hash): axum::extract::Path<String>,
) -> Response {
    let ours: String = Sha256::digest(w.log_name.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if !w.monitoring.load(Ordering::SeqCst) || hash != ours {
        return plain(StatusCode::NOT_FOUND, "not found\n");
    }
    match w.note.lock().unwrap().clone() {
        Some(note) => plain(StatusCode::OK, &note),
        None => plain(StatusCode::NOT_FOUND, "nothing cosigned\n"),
    }
}

fn answer(status: StatusCode, content_type: &'static str, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, content_type)], body).into_response()
}

fn plain(status: StatusCode, body: &str) -> Response {
    answer(status, "text/plain", body.to_owned())
}

/// RFC 6962 (RFC 9162 §2.1.4.2) consistency verification, from the RFC.
fn consistent(
    first: u64,
    second: u64,
    first_hash: &Hash,
    second_hash: &Hash,
    proof: &[Hash],
) -> bool {
    let node = |l: &Hash, r: &Hash| -> Hash {
        Sha256::new()
            .chain_update([1u8])
            .chain_update(l)
            .chain_update(r)
            .finalize()
            .into()
    };
    if first == second {
        return proof.is_empty() && first_hash == second_hash;
    }
    if first == 0 || first > second || proof.is_empty() {
        return false;
    }
    let mut path: Vec<Hash> = proof.to_vec();
    if first.is_power_of_two() {
        path.insert(0, *first_hash);
    }
    let Some((&start, rest)) = path.split_first() else {
        return false;
    };
    let (mut fn_, mut sn) = (first - 1, second - 1);
    while fn_ & 1 == 1 {
        fn_ >>= 1;
        sn >>= 1;
    }
    let (mut fr, mut sr) = (start, start);
    for c in rest {
        if sn == 0 {
            return false;
        }
        if fn_ & 1 == 1 || fn_ == sn {
            fr = node(c, &fr);
            sr = node(c, &sr);
            if fn_ & 1 == 0 {
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            sr = node(&sr, c);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    sn == 0 && &fr == first_hash && &sr == second_hash
}

async fn add_checkpoint(State(w): State<Arc<Inner>>, body: Bytes) -> Response {
    if body.len() > 16 * 1024 {
        return plain(StatusCode::PAYLOAD_TOO_LARGE, "too large\n");
    }
    let Ok(body) = std::str::from_utf8(&body) else {
        return plain(StatusCode::BAD_REQUEST, "not UTF-8\n");
    };
    let Some((head, note)) = body.split_once("\n\n") else {
        return plain(StatusCode::BAD_REQUEST, "no empty line\n");
    };
    let mut lines = head.split('\n');
    let Some(old) = lines
        .next()
        .and_then(|l| l.strip_prefix("old "))
        .and_then(|n| n.parse::<u64>().ok())
    else {
        return plain(StatusCode::BAD_REQUEST, "no old line\n");
    };
    let mut proof = Vec::new();
    for line in lines {
        match B64.decode(line).ok().and_then(|b| Hash::try_from(b).ok()) {
            Some(hash) => proof.push(hash),
            None => return plain(StatusCode::BAD_REQUEST, "bad proof line\n"),
        }
    }
    // The checkpoint note: text, blank line, signature lines.
    let Some(split) = note.find("\n\n") else {
        return plain(StatusCode::BAD_REQUEST, "no signatures\n");
    };
    let (text, signatures) = (&note[..split + 1], &note[split + 2..]);
    let fields: Vec<&str> = text.split('\n').collect();
    if fields.len() < 4 || fields[0] != w.log_name {
        return plain(StatusCode::NOT_FOUND, "unknown origin\n");
    }
    let (Ok(size), Some(root)) = (
        fields[1].parse::<u64>(),
        B64.decode(fields[2])
            .ok()
            .and_then(|b| Hash::try_from(b).ok()),
    ) else {
        return plain(StatusCode::BAD_REQUEST, "bad checkpoint\n");
    };
    let mut trusted = false;
    for line in signatures.lines() {
        let Some((name, sig)) = line
            .strip_prefix("\u{2014} ")
            .and_then(|l| l.split_once(' '))
        else {
            return plain(StatusCode::BAD_REQUEST, "bad signature line\n");
        };
        let Ok(sig) = B64.decode(sig) else { continue };
        if name != w.log_name || sig.len() != 68 || sig[..4] != w.log_id {
            continue;
        }
        let signature = ed25519_dalek::Signature::from_slice(&sig[4..]).expect("64 bytes");
        if w.log_key.verify(text.as_bytes(), &signature).is_err() {
            return plain(StatusCode::FORBIDDEN, "bad log signature\n");
        }
        trusted = true;
    }
    if !trusted {
        return plain(StatusCode::FORBIDDEN, "not signed by the log\n");
    }
    if old > size {
        return plain(StatusCode::BAD_REQUEST, "old > size\n");
    }
    let empty: Hash = Sha256::digest(b"").into();
    let mut latest = w.latest.lock().unwrap();
    let known = latest.unwrap_or(Latest {
        size: 0,
        root: empty,
    });
    if old != known.size {
        return answer(
            StatusCode::CONFLICT,
            "text/x.tlog.size",
            format!("{}\n", known.size),
        );
    }
    if old == size
        && size == known.size
        && root != known.root
        && w.same_size_conflict.load(Ordering::SeqCst)
    {
        return answer(
            StatusCode::CONFLICT,
            "text/x.tlog.size",
            format!("{}\n", known.size),
        );
    }
    let ok = if size == 0 {
        root == empty && proof.is_empty()
    } else if old == 0 {
        proof.is_empty()
    } else {
        consistent(old, size, &known.root, &root, &proof)
    };
    if !ok {
        return plain(StatusCode::UNPROCESSABLE_ENTITY, "inconsistent\n");
    }
    *latest = Some(Latest { size, root });
    drop(latest);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let time = now.saturating_add_signed(w.clock_offset.load(Ordering::SeqCst));
    let mut message = format!("cosignature/v1\ntime {time}\n").into_bytes();
    message.extend_from_slice(text.as_bytes());
    let public = typed(0x04, w.key.verifying_key().as_bytes());
    let mut sig = key_id(&w.name, &public).to_vec();
    sig.extend_from_slice(&time.to_be_bytes());
    sig.extend_from_slice(&w.key.sign(&message).to_bytes());
    let line = format!("\u{2014} {} {}\n", w.name, B64.encode(sig));
    *w.note.lock().unwrap() = Some(format!("{note}{line}"));
    plain(StatusCode::OK, &line)
}
