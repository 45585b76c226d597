//! The simulated world around the log: in-memory adapters of its ports
//! (the ledger store with the store's signer memory and witness memory in
//! it, the memory beside the key), the witnesses (deciding each request
//! with the specification's own checks, `freedom_tlog::witness::judge`),
//! the network between them (latency, timeouts, outages on the virtual
//! clock), and a tree of every history any store ever held, to tell
//! consistent checkpoints from forks.

use crate::exec::{VirtualClock, yield_now};
use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use freedom_shared::merkle::{Digest, Frontier, Head};
use freedom_shared::ports::{
    AppendOutcome, Candidate, Entry, EntryRun, HeadReads, InProcess, InProcessWitnesses,
    KeptCheckpoint, LedgerAppend, SignerMemory, StoreError, TileRead, TileReads, WitnessClient,
    WitnessMemory, WitnessReply, WitnessState,
};
use freedom_shared::tlog::checkpoint::Checkpoint;
use freedom_shared::tlog::cosignature::CosignerKey;
use freedom_shared::tlog::note::VerifierKey;
use freedom_shared::tlog::tiles::{TileId, tiles_of};
use freedom_shared::tlog::witness::{AddCheckpoint, Cosigned, SIZE_HINT_TYPE, judge, origin_hash};
use futures_util::FutureExt as _;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every history any store held: a tree of leaves whose nodes are heads.
#[derive(Debug)]
pub struct Histories {
    nodes: Vec<Node>,
    children: HashMap<(usize, Digest), usize>,
    by_head: HashMap<(u64, Digest), usize>,
}

#[derive(Debug)]
struct Node {
    parent: usize,
    frontier: Frontier,
    root: Digest,
}

impl Histories {
    /// Only the empty tree.
    pub fn new() -> Histories {
        let empty = Frontier::empty();
        let root = empty.root();
        Histories {
            nodes: vec![Node {
                parent: 0,
                frontier: empty,
                root,
            }],
            children: HashMap::new(),
            by_head: HashMap::from([((0, root), 0)]),
        }
    }

    /// The node of the tree `tip` grown by `leaf`.
    pub fn extend(&mut self, tip: usize, leaf: Digest) -> usize {
        if let Some(&child) = self.children.get(&(tip, leaf)) {
            return child;
        }
        let mut frontier = self.nodes[tip].frontier.clone();
        frontier.push(leaf);
        let root = frontier.root();
        let size = frontier.size();
        self.nodes.push(Node {
            parent: tip,
            frontier,
            root,
        });
        let id = self.nodes.len() - 1;
        self.children.insert((tip, leaf), id);
        self.by_head.insert((size, root), id);
        id
    }

    /// The head at node `node`.
    pub fn head(&self, node: usize) -> Head {
        Head {
            size: self.nodes[node].frontier.size(),
            root_hash: self.nodes[node].root,
        }
    }

    /// Whether the tree `older` is a prefix of the tree `newer` (either
    /// order of sizes); `None` when a head is of no history ever held.
    pub fn consistent(&self, a: Head, b: Head) -> Option<bool> {
        let (small, large) = if a.size <= b.size { (a, b) } else { (b, a) };
        let _ = self.by_head.get(&(small.size, small.root_hash))?;
        let mut node = *self.by_head.get(&(large.size, large.root_hash))?;
        while self.nodes[node].frontier.size() > small.size {
            node = self.nodes[node].parent;
        }
        Some(self.nodes[node].root == small.root_hash)
    }

    /// Whether the head is of some history a store held.
    pub fn knows(&self, head: Head) -> bool {
        self.by_head.contains_key(&(head.size, head.root_hash))
    }
}

/// What a store holds: the ledger, the store's copy of the signer's
/// memory, and the log's memory of its witnesses (the ports' own
/// in-process adapters). Cloned (deeply) to back it up.
#[derive(Debug, Default)]
pub struct StoreState {
    /// The leaves' canonical records, in order.
    pub records: Vec<String>,
    /// The leaf hashes.
    pub leaves: Vec<Digest>,
    /// Each id's seq.
    pub ids: HashMap<String, u64>,
    /// The head's node in [`Histories`].
    pub tip: usize,
    /// The store's signer memory.
    pub signed: Arc<InProcess>,
    /// What is kept of the witnesses, and the witnessed history.
    pub witnesses: Arc<InProcessWitnesses>,
}

impl Clone for StoreState {
    fn clone(&self) -> StoreState {
        StoreState {
            records: self.records.clone(),
            leaves: self.leaves.clone(),
            ids: self.ids.clone(),
            tip: self.tip,
            signed: Arc::new(InProcess::clone(&self.signed)),
            witnesses: Arc::new(InProcessWitnesses::clone(&self.witnesses)),
        }
    }
}

/// The value of a port call the in-process adapters answer at once.
fn at_once<T>(future: impl Future<Output = Result<T, StoreError>>) -> T {
    future
        .now_or_never()
        .expect("the in-process adapters never wait")
        .expect("the in-process adapters never fail")
}

impl StoreState {
    /// The note the store's signer memory holds.
    pub fn signed_note(&self) -> Option<String> {
        at_once(self.signed.recall())
    }

    /// The witnessed checkpoint kept (size and note).
    pub fn witnessed(&self) -> Option<(u64, String)> {
        at_once(self.witnesses.read()).witnessed
    }

    /// The witnessed history, smallest first.
    pub fn history(&self) -> Vec<KeptCheckpoint> {
        at_once(self.witnesses.history(0, usize::MAX))
    }
}

/// The ledger store, in memory: every call yields once first (a kill or
/// another task may come between any two of them).
pub struct SimStore {
    /// What it holds.
    pub state: Mutex<StoreState>,
    histories: Arc<Mutex<Histories>>,
}

impl SimStore {
    /// A store holding `state`, its heads recorded in `histories`.
    pub fn new(state: StoreState, histories: Arc<Mutex<Histories>>) -> Arc<SimStore> {
        Arc::new(SimStore {
            state: Mutex::new(state),
            histories,
        })
    }

    /// A copy of what it holds.
    pub fn snapshot(&self) -> StoreState {
        lock(&self.state).clone()
    }

    /// Its head, read at once (for the simulator's checks).
    pub fn head_now(&self) -> Head {
        let tip = lock(&self.state).tip;
        lock(&self.histories).head(tip)
    }
}

#[async_trait]
impl HeadReads for SimStore {
    async fn head(&self) -> Result<Head, StoreError> {
        yield_now().await;
        Ok(self.head_now())
    }
}

#[async_trait]
impl TileReads for SimStore {
    async fn tiles(&self, ids: &[TileId]) -> Result<TileRead, StoreError> {
        yield_now().await;
        let state = lock(&self.state);
        let head = lock(&self.histories).head(state.tip);
        let all = tiles_of(&state.leaves);
        Ok(TileRead {
            head,
            tiles: ids
                .iter()
                .filter_map(|id| all.get(id).map(|hashes| (*id, hashes.clone())))
                .collect(),
        })
    }

    async fn entry_run(&self, first_seq: u64, count: u64) -> Result<EntryRun, StoreError> {
        yield_now().await;
        let state = lock(&self.state);
        let head = lock(&self.histories).head(state.tip);
        let entries = (first_seq.max(1)..first_seq.saturating_add(count))
            .take_while(|seq| *seq <= head.size)
            .map(|seq| Entry {
                seq,
                leaf_hash: state.leaves[(seq - 1) as usize],
                canonical: state.records[(seq - 1) as usize].clone(),
            })
            .collect();
        Ok(EntryRun { head, entries })
    }
}

#[async_trait]
impl LedgerAppend for SimStore {
    async fn append(&self, candidate: Candidate) -> Result<AppendOutcome, StoreError> {
        yield_now().await;
        let mut state = lock(&self.state);
        let mut histories = lock(&self.histories);
        assert!(
            !state.ids.contains_key(candidate.id.as_str()),
            "the simulator appends each id once"
        );
        state.tip = histories.extend(state.tip, candidate.leaf_hash);
        state.leaves.push(candidate.leaf_hash);
        state.records.push(candidate.canonical.clone());
        let seq = state.leaves.len() as u64;
        state.ids.insert(candidate.id.as_str().to_owned(), seq);
        Ok(AppendOutcome::Created {
            entry: Entry {
                seq,
                leaf_hash: candidate.leaf_hash,
                canonical: candidate.canonical,
            },
            head: histories.head(state.tip),
        })
    }

    async fn check(&self, _candidate: Candidate) -> Result<AppendOutcome, StoreError> {
        unreachable!("the custody simulator never dry-runs")
    }
}

/// The store's copy of the signer's memory (lost and restored with it):
/// the port's in-process adapter, behind a yield.
pub struct StoreMemory(pub Arc<SimStore>);

impl StoreMemory {
    fn memory(&self) -> Arc<InProcess> {
        Arc::clone(&lock(&self.0.state).signed)
    }
}

#[async_trait]
impl SignerMemory for StoreMemory {
    async fn recall(&self) -> Result<Option<String>, StoreError> {
        yield_now().await;
        self.memory().recall().await
    }

    async fn remember(&self, previous: Option<&str>, next: &str) -> Result<bool, StoreError> {
        yield_now().await;
        self.memory().remember(previous, next).await
    }

    fn describe(&self) -> String {
        "the store's memory".into()
    }
}

/// The memory beside the key (outside the store): the port's in-process
/// adapter, behind a yield, replaced whole when a backup of the key's
/// folder is restored.
#[derive(Default)]
pub struct KeyMemory(Mutex<Arc<InProcess>>);

impl KeyMemory {
    fn memory(&self) -> Arc<InProcess> {
        Arc::clone(&lock(&self.0))
    }

    /// What it holds now.
    pub fn note(&self) -> Option<String> {
        at_once(self.memory().recall())
    }

    /// A copy of it (a backup).
    pub fn backup(&self) -> InProcess {
        InProcess::clone(&self.memory())
    }

    /// Replaced by `backup` (a restore), or emptied (`None`: lost).
    pub fn restore(&self, backup: Option<InProcess>) {
        *lock(&self.0) = Arc::new(backup.unwrap_or_default());
    }
}

#[async_trait]
impl SignerMemory for KeyMemory {
    async fn recall(&self) -> Result<Option<String>, StoreError> {
        yield_now().await;
        self.memory().recall().await
    }

    async fn remember(&self, previous: Option<&str>, next: &str) -> Result<bool, StoreError> {
        yield_now().await;
        self.memory().remember(previous, next).await
    }

    fn describe(&self) -> String {
        "the memory beside the key".into()
    }
}

/// The log's memory of its witnesses, in the store: the port's in-process
/// adapter, behind a yield.
pub struct StoreWitnesses(pub Arc<SimStore>);

impl StoreWitnesses {
    fn memory(&self) -> Arc<InProcessWitnesses> {
        Arc::clone(&lock(&self.0.state).witnesses)
    }
}

#[async_trait]
impl WitnessMemory for StoreWitnesses {
    async fn read(&self) -> Result<WitnessState, StoreError> {
        yield_now().await;
        self.memory().read().await
    }

    async fn set_size(&self, witness: &str, size: u64) -> Result<(), StoreError> {
        yield_now().await;
        self.memory().set_size(witness, size).await
    }

    async fn keep_witnessed(
        &self,
        size: u64,
        note: &str,
        quorum_time: Option<u64>,
    ) -> Result<bool, StoreError> {
        yield_now().await;
        self.memory().keep_witnessed(size, note, quorum_time).await
    }

    async fn history(&self, from: u64, limit: usize) -> Result<Vec<KeptCheckpoint>, StoreError> {
        yield_now().await;
        self.memory().history(from, limit).await
    }

    async fn history_times(&self, from: u64, limit: usize) -> Result<Vec<(u64, u64)>, StoreError> {
        yield_now().await;
        self.memory().history_times(from, limit).await
    }
}

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

/// A reply's slot: filled when the network delivers it.
#[derive(Default)]
struct Slot {
    reply: Mutex<Option<Result<WitnessReply, String>>>,
    waker: Mutex<Option<Waker>>,
}

/// A request in flight.
pub struct InFlight {
    /// The witness's index.
    pub witness: usize,
    /// What was asked.
    pub request: Request,
    /// When it is answered, or given up (virtual milliseconds).
    pub due: i64,
    /// Whether the answer comes after the client gave up.
    pub late: bool,
    timeout_ms: i64,
    slot: Arc<Slot>,
}

/// The witnesses and the network to them.
pub struct Network {
    /// The witnesses, by index (`http://w<index>.sim`).
    pub witnesses: Mutex<Vec<SimWitness>>,
    in_flight: Mutex<Vec<InFlight>>,
    clock: VirtualClock,
    log_key: VerifierKey,
    /// Every checkpoint the log sent out (size and root): each was signed.
    pub sent: Mutex<Vec<Head>>,
}

impl Network {
    /// The network to `witnesses`, for the log of `log_key`.
    pub fn new(
        witnesses: Vec<SimWitness>,
        clock: VirtualClock,
        log_key: VerifierKey,
    ) -> Arc<Network> {
        Arc::new(Network {
            witnesses: Mutex::new(witnesses),
            in_flight: Mutex::new(Vec::new()),
            clock,
            log_key,
            sent: Mutex::new(Vec::new()),
        })
    }

    /// Witness `index`'s URL.
    pub fn url(index: usize) -> String {
        format!("http://w{index}.sim")
    }

    /// The requests in flight (witness, request kind, when due), for a
    /// failure's report.
    pub fn in_flight(&self) -> Vec<(usize, &'static str, i64)> {
        lock(&self.in_flight)
            .iter()
            .map(|f| {
                let kind = match f.request {
                    Request::Add(_) => "add-checkpoint",
                    Request::Monitor(_) => "monitoring read",
                };
                (f.witness, kind, f.due)
            })
            .collect()
    }

    /// When the next request in flight is due.
    pub fn next_due(&self) -> Option<i64> {
        lock(&self.in_flight).iter().map(|f| f.due).min()
    }

    /// Delivers every request due by now (the witness answers, or the
    /// client has given up): one at a time, earliest first.
    pub fn deliver_due(&self) -> usize {
        let now = self.clock.now();
        let mut delivered = 0;
        loop {
            let next = {
                let mut in_flight = lock(&self.in_flight);
                let Some(at) = in_flight
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.due <= now)
                    .min_by_key(|(_, f)| f.due)
                    .map(|(i, _)| i)
                else {
                    break;
                };
                in_flight.remove(at)
            };
            let answer = {
                let mut witnesses = lock(&self.witnesses);
                let witness = &mut witnesses[next.witness];
                if witness.behaviour.down {
                    Err("the connection was reset".to_owned())
                } else {
                    let reply = witness.answer(&next.request, now, &self.log_key);
                    if next.late {
                        Err(format!("no answer within {} ms", next.timeout_ms))
                    } else {
                        Ok(reply)
                    }
                }
            };
            *lock(&next.slot.reply) = Some(answer);
            if let Some(waker) = lock(&next.slot.waker).take() {
                waker.wake();
            }
            delivered += 1;
        }
        delivered
    }

    fn send(&self, prefix: &str, request: Request, timeout: Duration) -> Result<Arc<Slot>, String> {
        let index = prefix
            .strip_prefix("http://w")
            .and_then(|rest| rest.strip_suffix(".sim"))
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| "no such host".to_owned())?;
        if let Request::Add(body) = &request
            && let Ok(parsed) = AddCheckpoint::parse(body)
            && let Ok(checkpoint) = Checkpoint::open(&parsed.checkpoint, &self.log_key)
        {
            lock(&self.sent).push(Head {
                size: checkpoint.size,
                root_hash: checkpoint.root,
            });
        }
        let behaviour = lock(&self.witnesses)
            .get(index)
            .map(|w| w.behaviour)
            .ok_or_else(|| "no such host".to_owned())?;
        if behaviour.down {
            return Err("connection refused".into());
        }
        let timeout_ms = i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX);
        let late = behaviour.latency_ms > timeout_ms;
        let slot = Arc::new(Slot::default());
        lock(&self.in_flight).push(InFlight {
            witness: index,
            request,
            due: self
                .clock
                .now()
                .saturating_add(behaviour.latency_ms.min(timeout_ms)),
            late,
            timeout_ms,
            slot: Arc::clone(&slot),
        });
        Ok(slot)
    }
}

/// Waits for a slot to be filled.
struct Answer(Arc<Slot>);

impl Future for Answer {
    type Output = Result<WitnessReply, String>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(answer) = lock(&self.0.reply).take() {
            return Poll::Ready(answer);
        }
        *lock(&self.0.waker) = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// The log's witness client on the simulated network.
pub struct SimClient(pub Arc<Network>);

impl SimClient {
    async fn call(
        &self,
        prefix: &str,
        request: Request,
        timeout: Duration,
    ) -> Result<WitnessReply, String> {
        yield_now().await;
        let slot = self.0.send(prefix, request, timeout)?;
        Answer(slot).await
    }
}

#[async_trait]
impl WitnessClient for SimClient {
    async fn add_checkpoint(
        &self,
        prefix: &str,
        body: &str,
        timeout: Duration,
    ) -> Result<WitnessReply, String> {
        self.call(prefix, Request::Add(body.to_owned()), timeout)
            .await
    }

    async fn latest_checkpoint(
        &self,
        prefix: &str,
        origin_hash: &str,
        timeout: Duration,
    ) -> Result<WitnessReply, String> {
        self.call(prefix, Request::Monitor(origin_hash.to_owned()), timeout)
            .await
    }
}
