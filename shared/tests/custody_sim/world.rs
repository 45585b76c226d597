//! The simulated world around the log: in-memory adapters of its ports
//! (the ledger store with the store's signer memory and witness memory in
//! it, the memory beside the key), and a tree of every history any store
//! ever held, to tell consistent checkpoints from forks. The witnesses are
//! `witness.rs`'s, the network to them `net.rs`'s.

use crate::exec::yield_now;
use async_trait::async_trait;
use freedom_shared::merkle::{Digest, Frontier, Head};
use freedom_shared::ports::{
    AppendOutcome, Candidate, Entry, EntryRun, HeadReads, InProcess, InProcessWitnesses,
    KeptCheckpoint, LedgerAppend, SignerMemory, StoreError, TileRead, TileReads, WitnessMemory,
    WitnessState,
};
use freedom_shared::tlog::tiles::{TileId, tiles_of};
use futures_util::FutureExt as _;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

/// The mutex's guard, whether or not a holder panicked.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
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

/// A signer memory: the port's in-process adapter, found anew at each
/// call (the store's, replaced with the store; the key's, replaced when a
/// backup of its folder is restored), behind a yield.
pub struct Yielding {
    memory: Box<dyn Fn() -> Arc<InProcess> + Send + Sync>,
    describe: &'static str,
}

#[async_trait]
impl SignerMemory for Yielding {
    async fn recall(&self) -> Result<Option<String>, StoreError> {
        yield_now().await;
        (self.memory)().recall().await
    }

    async fn remember(&self, previous: Option<&str>, next: &str) -> Result<bool, StoreError> {
        yield_now().await;
        (self.memory)().remember(previous, next).await
    }

    fn describe(&self) -> String {
        self.describe.into()
    }
}

/// The store's copy of the signer's memory (lost and restored with it).
pub fn store_memory(store: &Arc<SimStore>) -> Yielding {
    let store = Arc::clone(store);
    Yielding {
        memory: Box::new(move || Arc::clone(&lock(&store.state).signed)),
        describe: "the store's memory",
    }
}

/// The memory beside the key (outside the store).
#[derive(Default)]
pub struct KeyMemory(Mutex<Arc<InProcess>>);

impl KeyMemory {
    fn memory(&self) -> Arc<InProcess> {
        Arc::clone(&lock(&self.0))
    }

    /// The memory as the log reaches it.
    pub fn signer(self: &Arc<Self>) -> Yielding {
        let key = Arc::clone(self);
        Yielding {
            memory: Box::new(move || key.memory()),
            describe: "the memory beside the key",
        }
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
