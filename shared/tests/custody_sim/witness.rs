//! The simulated witnesses: each decides a request with the
//! specification's own checks (`freedom_tlog::witness::judge`, which
//! `freedom-witness` runs too), dates its cosignatures by its own (skewed)
//! clock, and may be down, slow, or lie within the policy's tolerance.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use freedom_shared::merkle::Head;
use freedom_shared::ports::WitnessReply;
use freedom_shared::tlog::checkpoint::Checkpoint;
use freedom_shared::tlog::cosignature::CosignerKey;
use freedom_shared::tlog::note::VerifierKey;
use freedom_shared::tlog::witness::{AddCheckpoint, Cosigned, SIZE_HINT_TYPE, judge, origin_hash};

/// How a lying witness lies (a witness that breaks the protocol, within
/// the policy's tolerance).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Lie {
    /// It does not.
    #[default]
    Honest,
    /// It refuses every checkpoint `422` (a fork claim it does not back).
    Refuses,
    /// It answers `409` without a size.
    Unhinted,
    /// It claims (a `409` size hint) a tree larger than any it saw.
    ClaimsLarger,
    /// Its cosignatures do not verify.
    BadCosignature,
    /// It answers every request `404` (its operator dropped the log from
    /// its configuration, its state kept).
    Unknown,
    /// Its monitoring read serves the first checkpoint it cosigned, not
    /// its latest (a stale cache in front of it).
    Stale,
}

/// How a witness behaves now.
#[derive(Debug, Clone, Copy)]
pub struct Behaviour {
    /// Connections refused.
    pub down: bool,
    /// How long it takes to answer.
    pub latency_ms: i64,
    /// Its clock minus the true time, in seconds.
    pub skew_s: i64,
    /// Whether and how it lies.
    pub lie: Lie,
    /// Whether it serves the monitoring read.
    pub monitoring: bool,
}

impl Default for Behaviour {
    fn default() -> Behaviour {
        Behaviour {
            down: false,
            latency_ms: 40,
            skew_s: 0,
            lie: Lie::Honest,
            monitoring: true,
        }
    }
}

/// A witness: its key, what it last cosigned, how it behaves.
pub struct SimWitness {
    /// Its name (the policy's too).
    pub name: String,
    /// Its cosigning key.
    pub key: CosignerKey,
    /// The head it last cosigned and the note it serves (the checkpoint
    /// with its own cosignature line).
    pub latest: Option<(Head, String)>,
    /// The first note it cosigned (what a stale cache serves).
    pub first: Option<String>,
    /// How it behaves.
    pub behaviour: Behaviour,
}

/// A request on the wire.
#[derive(Debug, Clone)]
pub enum Request {
    /// `POST <url>/add-checkpoint` with this body.
    Add(String),
    /// `GET <url>/<origin hash>/checkpoint`.
    Monitor(String),
}

fn reply(status: u16, content_type: Option<&str>, body: impl Into<String>) -> WitnessReply {
    WitnessReply {
        status,
        content_type: content_type.map(str::to_owned),
        body: body.into(),
    }
}

impl SimWitness {
    /// A witness named `name` with the key of `seed`.
    pub fn new(name: &str, seed: u8) -> SimWitness {
        SimWitness {
            name: name.to_owned(),
            key: CosignerKey::from_seed(name, [seed; 32]).expect("a witness key"),
            latest: None,
            first: None,
            behaviour: Behaviour::default(),
        }
    }

    /// Its answer to `request` at `now_ms` for the log of `log_key`.
    pub fn answer(
        &mut self,
        request: &Request,
        now_ms: i64,
        log_key: &VerifierKey,
    ) -> WitnessReply {
        if self.behaviour.lie == Lie::Unknown {
            return reply(404, Some("text/plain"), "unknown log origin\n");
        }
        match request {
            Request::Monitor(hash) => {
                if !self.behaviour.monitoring || *hash != origin_hash(log_key.name()) {
                    return reply(404, Some("text/plain"), "not found\n");
                }
                if self.behaviour.lie == Lie::Stale
                    && let Some(first) = &self.first
                {
                    return reply(200, Some("text/plain"), first.clone());
                }
                match &self.latest {
                    Some((_, note)) => reply(200, Some("text/plain"), note.clone()),
                    None => reply(404, Some("text/plain"), "nothing cosigned\n"),
                }
            }
            Request::Add(body) => self.add(body, now_ms, log_key),
        }
    }

    fn add(&mut self, body: &str, now_ms: i64, log_key: &VerifierKey) -> WitnessReply {
        let Ok(request) = AddCheckpoint::parse(body) else {
            return reply(400, Some("text/plain"), "malformed\n");
        };
        let Ok(checkpoint) = Checkpoint::open(&request.checkpoint, log_key) else {
            return reply(403, Some("text/plain"), "not signed by the log\n");
        };
        if request.old > checkpoint.size {
            return reply(400, Some("text/plain"), "old > size\n");
        }
        let latest = self.latest.as_ref().map(|(head, _)| *head);
        match self.behaviour.lie {
            Lie::Refuses => return reply(422, Some("text/plain"), "inconsistent\n"),
            Lie::Unhinted => return reply(409, Some("text/plain"), "conflict\n"),
            Lie::ClaimsLarger => {
                let claimed = latest.map_or(0, |h| h.size).max(checkpoint.size) + 1_000;
                return reply(409, Some(SIZE_HINT_TYPE), format!("{claimed}\n"));
            }
            Lie::Honest | Lie::BadCosignature | Lie::Stale | Lie::Unknown => {}
        }
        let new = Head {
            size: checkpoint.size,
            root_hash: checkpoint.root,
        };
        match judge(&request, latest, new) {
            Cosigned::Conflict(size) => reply(409, Some(SIZE_HINT_TYPE), format!("{size}\n")),
            Cosigned::Refused(reason) => reply(422, Some("text/plain"), format!("{reason}\n")),
            Cosigned::Yes => {
                let text_end = request.checkpoint.find("\n\n").map_or(0, |i| i + 1);
                let time = (now_ms / 1000).saturating_add(self.behaviour.skew_s).max(0) as u64;
                let mut line = self
                    .key
                    .cosign(&request.checkpoint[..text_end], time)
                    .expect("an Ed25519 cosignature");
                self.latest = Some((new, format!("{}{line}", request.checkpoint)));
                if self.first.is_none() {
                    self.first = self.latest.as_ref().map(|(_, note)| note.clone());
                }
                if self.behaviour.lie == Lie::BadCosignature {
                    line = spoil(&line);
                }
                reply(200, Some("text/plain"), line)
            }
        }
    }
}

/// The same signature line with its last signature byte flipped.
fn spoil(line: &str) -> String {
    let (front, encoded) = line.trim_end().rsplit_once(' ').expect("a signature line");
    let mut bytes = BASE64.decode(encoded).expect("base64");
    if let Some(last) = bytes.last_mut() {
        *last ^= 1;
    }
    format!("{front} {}\n", BASE64.encode(bytes))
}
