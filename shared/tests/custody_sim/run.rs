//! One simulation: a fault plan (drawn from a seed, or written out for a
//! named regression), the log's real use cases run over the simulated
//! world, and the seven invariants checked after every step.

use crate::exec::{Done, Rng, Tasks, VirtualClock};
use crate::net::{Network, SimClient};
use crate::witness::{Lie, SimWitness};
use crate::world::{Histories, KeyMemory, SimStore, StoreState, StoreWitnesses, store_memory};
use freedom_shared::merkle::{Digest, Head};
use freedom_shared::ports::{SignerMemory, TileReads, no_events};
use freedom_shared::service::{CosignRound, CosignSchedule, Log};
use freedom_shared::tlog::checkpoint::Checkpoint;
use freedom_shared::tlog::note::{SigningKey, VerifierKey, split_note};
use freedom_shared::tlog::policy::Policy;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The log's name in the simulation.
const ORIGIN: &str = "custody.sim/log";
/// 2026-11-02T00:00:00Z: the virtual clock's start.
const START_MS: i64 = 1_793_577_600_000;
/// The cosigning timer's interval.
const INTERVAL: Duration = Duration::from_secs(60);
/// How long any call of the log may take, in virtual time: the witnesses'
/// timeout plus a second.
const CALL_BOUND_MS: i64 = 6_000;
/// How often a task may be polled before it counts as a busy loop.
const MAX_POLLS: u32 = 20_000;
/// How far a witnessed time may precede what the service vouches for.
const TOLERANCE_S: i64 = 60;

/// The policies the simulator runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// No witnessing.
    None,
    /// `quorum W0`.
    OneOfOne,
    /// Any one of two.
    OneOfTwo,
    /// Two of three.
    TwoOfThree,
    /// Two of four (two disjoint quorums).
    TwoOfFour,
    /// Three of five.
    ThreeOfFive,
    /// Any of W0 W1, and two of W2 W3 W4.
    Nested,
}

const SHAPES: [Shape; 6] = [
    Shape::OneOfOne,
    Shape::OneOfTwo,
    Shape::TwoOfThree,
    Shape::TwoOfFour,
    Shape::ThreeOfFive,
    Shape::Nested,
];

/// Where the signer's memories are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// freedom-local: beside the key file (first), and in the store.
    Local,
    /// Lambda: in the store only; two instances may run at once.
    Lambda,
}

/// What a witness's behaviour becomes.
#[derive(Debug, Clone, Copy)]
pub enum Change {
    /// Down or up.
    Down(bool),
    /// Its answers take this long.
    Latency(i64),
    /// Its clock is off by this much (seconds).
    Skew(i64),
    /// It lies so.
    Lie(Lie),
    /// It serves the monitoring read or not.
    Monitoring(bool),
}

/// One step of a fault plan.
#[derive(Debug, Clone, Copy)]
pub enum Action {
    /// Appends this many records (each a task), `backfill_s` before now.
    Append(u8, i64),
    /// `POST /log/cosign`.
    Cosign,
    /// `GET /log/checkpoint?head=1`.
    Checkpoint,
    /// `GET /log/checkpoint` (the witnessed one).
    Witnessed,
    /// An inclusion proof of a record.
    Proof,
    /// Lets this many virtual milliseconds pass.
    Advance(i64),
    /// Runs every task to its end (time passes as needed).
    Settle,
    /// A witness changes.
    Witness(usize, Change),
    /// A process is killed (between any two of its writes) and started again.
    Restart,
    /// The store is lost: a new, empty one (the key's memory stays).
    StoreLost,
    /// A fresh start with the key from the environment: a new store and no
    /// memory beside the key.
    FreshStart,
    /// A backup of the store (and of the key's folder).
    Snapshot,
    /// A backup restored, with or without the key's folder.
    Restore(usize, bool),
    /// The policy changes (a restart under another shape).
    Policy(Shape),
    /// A restart with `--new-log`, when it is true.
    NewLog,
    /// Under Lambda, a second instance starts.
    SecondInstance,
}

/// What a simulation runs.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The policy.
    pub shape: Shape,
    /// The memories' layout.
    pub layout: Layout,
    /// The plan; `None`: drawn from the seed.
    pub plan: Option<Vec<Action>>,
    /// How many steps a drawn plan has.
    pub steps: usize,
    /// Whether the drawn plan may lose or restore the store.
    pub store_faults: bool,
}

impl Setup {
    /// The setup a seed draws.
    pub fn drawn(seed: u64) -> Setup {
        let mut rng = Rng::new(seed ^ 0x005E_ED0F_C057_0D1E);
        let shape = if rng.chance(8) {
            Shape::None
        } else {
            *rng.pick(&SHAPES)
        };
        Setup {
            shape,
            layout: if rng.chance(50) {
                Layout::Local
            } else {
                Layout::Lambda
            },
            plan: None,
            steps: 90,
            store_faults: rng.chance(45),
        }
    }
}

#[derive(Debug, Clone)]
enum Kind {
    Append {
        id: String,
        as_of_s: i64,
    },
    Round {
        timer: bool,
    },
    Signed,
    /// An inclusion proof: its note may be the witnessed checkpoint another
    /// instance signed, so it says nothing of whether this one settled.
    Proof,
    Witnessed,
}

enum Out {
    Append(Result<u64, String>),
    Round(Result<CosignRound, String>),
    Signed(Result<String, String>),
    Witnessed(Result<Option<String>, String>),
}

struct Life {
    id: u64,
    log: Arc<Log>,
    /// The first memory's size when it started.
    memory_at_start: u64,
    /// Whether it signed a head beyond that (so it consulted, if it had to).
    settled: bool,
    new_log: bool,
}

/// A failed invariant, with the steps that led to it.
#[derive(Debug)]
pub struct Failure {
    /// The invariant and what broke it.
    pub what: String,
    /// The last steps.
    pub trace: Vec<String>,
}

struct Sim {
    setup: Setup,
    plan_rng: Rng,
    sched_rng: Rng,
    clock: VirtualClock,
    histories: Arc<Mutex<Histories>>,
    key: SigningKey,
    verifier: VerifierKey,
    key_memory: Arc<KeyMemory>,
    store: Arc<SimStore>,
    net: Arc<Network>,
    shape: Shape,
    policy: Option<Policy>,
    lives: Vec<Life>,
    next_life: u64,
    tasks: Tasks<Kind, Out>,
    schedule: Option<CosignSchedule>,
    timer_running: bool,
    last_timer_start: Option<i64>,
    backups: Vec<(StoreState, freedom_shared::ports::InProcess)>,
    next_id: u64,
    // What the invariants remember.
    signed: BTreeMap<u64, Digest>,
    signed_heads: std::collections::HashSet<(u64, Digest)>,
    key_memory_went_back: bool,
    second_history_without_policy: bool,
    quorum_met: Vec<Head>,
    /// Checkpoints witnessed under earlier policies, protected while the
    /// memory carries them across the change.
    earlier_policies: Vec<Head>,
    last_witnessed: Option<String>,
    acked: Vec<(String, u64)>,
    as_of: std::collections::HashMap<Digest, (i64, i64)>,
    history_seen: BTreeMap<u64, u64>,
    rounds_in_epoch: usize,
    history_at_epoch: usize,
    round_starts: Vec<i64>,
    watches: Vec<(u64, i64, u32)>,
    disturbed: bool,
    trace: Vec<String>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn policy_text(shape: Shape, log: &VerifierKey, witnesses: &[SimWitness]) -> Option<String> {
    let (count, tail) = match shape {
        Shape::None => return None,
        Shape::OneOfOne => (1, "quorum W0\n".to_owned()),
        Shape::OneOfTwo => (2, "group G 1 W0 W1\nquorum G\n".to_owned()),
        Shape::TwoOfThree => (3, "group G 2 W0 W1 W2\nquorum G\n".to_owned()),
        Shape::TwoOfFour => (4, "group G 2 W0 W1 W2 W3\nquorum G\n".to_owned()),
        Shape::ThreeOfFive => (5, "group G 3 W0 W1 W2 W3 W4\nquorum G\n".to_owned()),
        Shape::Nested => (
            5,
            "group A any W0 W1\ngroup B 2 W2 W3 W4\ngroup G all A B\nquorum G\n".to_owned(),
        ),
    };
    let mut text = format!("log {}\n", log.to_text());
    for (index, witness) in witnesses.iter().take(count).enumerate() {
        text.push_str(&format!(
            "witness {} {} {}\n",
            witness.name,
            witness.key.witness_key().to_text(),
            Network::url(index)
        ));
    }
    text.push_str(&tail);
    Some(text)
}

impl Sim {
    fn new(seed: u64, setup: Setup) -> Sim {
        let clock = VirtualClock::at(START_MS);
        let key = SigningKey::from_seed(ORIGIN, [7; 32]).expect("a key");
        let verifier = key.verifier();
        let witnesses: Vec<SimWitness> = (0..5)
            .map(|i| SimWitness::new(&format!("W{i}"), 100 + i as u8))
            .collect();
        let histories = Arc::new(Mutex::new(Histories::new()));
        let store = SimStore::new(StoreState::default(), Arc::clone(&histories));
        let net = Network::new(witnesses, clock.clone(), verifier.clone());
        let shape = setup.shape;
        let mut sim = Sim {
            plan_rng: Rng::new(seed),
            sched_rng: Rng::new(seed.rotate_left(17) ^ 0xA5A5),
            clock,
            histories,
            key,
            verifier,
            key_memory: Arc::new(KeyMemory::default()),
            store,
            net,
            shape,
            policy: None,
            lives: Vec::new(),
            next_life: 0,
            tasks: Tasks::default(),
            schedule: None,
            timer_running: false,
            last_timer_start: None,
            backups: Vec::new(),
            next_id: 0,
            signed: BTreeMap::new(),
            signed_heads: std::collections::HashSet::new(),
            key_memory_went_back: false,
            second_history_without_policy: false,
            quorum_met: Vec::new(),
            earlier_policies: Vec::new(),
            last_witnessed: None,
            acked: Vec::new(),
            as_of: std::collections::HashMap::new(),
            history_seen: BTreeMap::new(),
            rounds_in_epoch: 0,
            history_at_epoch: 0,
            round_starts: Vec::new(),
            watches: Vec::new(),
            disturbed: false,
            trace: Vec::new(),
            setup,
        };
        sim.set_policy(shape);
        sim.start_life(false);
        sim
    }

    fn set_policy(&mut self, shape: Shape) {
        self.shape = shape;
        let witnesses = lock(&self.net.witnesses);
        self.policy = policy_text(shape, &self.verifier, &witnesses)
            .map(|text| Policy::parse(&text).expect("the simulator's policies parse"));
    }

    fn witness_count(&self) -> usize {
        self.policy.as_ref().map_or(0, |p| p.witnesses().len())
    }

    /// The first memory: beside the key (local) or the store's (Lambda).
    fn first_memory_size(&self) -> u64 {
        let note = match self.setup.layout {
            Layout::Local => self.key_memory.note(),
            Layout::Lambda => lock(&self.store.state).signed_note(),
        };
        note.and_then(|n| Checkpoint::open(&n, &self.verifier).ok())
            .map_or(0, |c| c.size)
    }

    fn start_life(&mut self, new_log: bool) {
        let memories: Vec<Arc<dyn SignerMemory>> = match self.setup.layout {
            Layout::Local => vec![
                Arc::new(self.key_memory.signer()) as Arc<dyn SignerMemory>,
                Arc::new(store_memory(&self.store)),
            ],
            Layout::Lambda => vec![Arc::new(store_memory(&self.store))],
        };
        let mut log = Log::new(
            Arc::clone(&self.store) as Arc<dyn TileReads>,
            ORIGIN,
            Some(self.key.clone()),
        )
        .expect("the key's name is the origin")
        .with_clock(self.clock.service_clock())
        .with_memories(memories)
        .with_new_log(new_log)
        .with_events(no_events());
        if let Some(policy) = &self.policy {
            log = log.with_witnesses(
                policy.clone(),
                Arc::new(StoreWitnesses(Arc::clone(&self.store))),
                Arc::new(SimClient(Arc::clone(&self.net))),
            );
        }
        let id = self.next_life;
        self.next_life += 1;
        self.lives.push(Life {
            id,
            log: Arc::new(log),
            memory_at_start: self.first_memory_size(),
            settled: false,
            new_log,
        });
        if self.policy.is_some() && (self.setup.layout == Layout::Local || self.schedule.is_none())
        {
            let head = self.store.head_now().size;
            self.schedule = Some(CosignSchedule::new(INTERVAL, self.now(), head));
            self.timer_running = false;
            self.last_timer_start = None;
        }
        if self.policy.is_none() {
            self.schedule = None;
        }
    }

    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::from_timestamp_millis(self.clock.now()).expect("in range")
    }

    fn kill_all(&mut self) {
        for life in std::mem::take(&mut self.lives) {
            self.tasks.kill(life.id);
        }
        self.timer_running = false;
    }

    fn new_epoch(&mut self, state: StoreState) {
        self.kill_all();
        self.store = SimStore::new(state, Arc::clone(&self.histories));
        self.acked.clear();
        self.rounds_in_epoch = 0;
        let history = lock(&self.store.state).history();
        self.history_at_epoch = history.len();
        self.history_seen = history
            .iter()
            .map(|kept| (kept.size, kept.quorum_time))
            .collect();
        self.last_witnessed = None;
        self.disturbed = true;
        self.watches.clear();
    }

    /// The first memory went back (lost, or restored from a backup): what
    /// earlier policies' witnesses hold is out of reach (the log asks only
    /// the witnesses of the policy it runs).
    fn memory_went_back(&mut self) {
        self.key_memory_went_back = true;
        self.earlier_policies.clear();
    }

    /// The checkpoints a signature must never contradict.
    fn protected(&self) -> impl Iterator<Item = &Head> {
        self.quorum_met.iter().chain(self.earlier_policies.iter())
    }

    fn say(&mut self, line: String) {
        if self.trace.len() >= 300 {
            self.trace.remove(0);
        }
        self.trace.push(format!(
            "t+{:.1}s {line}",
            (self.clock.now() - START_MS) as f64 / 1e3
        ));
    }

    fn fail(&self, what: String) -> Failure {
        Failure {
            what,
            trace: self.trace.clone(),
        }
    }
}

mod act;
mod check;

/// Runs `setup` under `seed`; `Err` names the first invariant broken.
pub fn simulate(seed: u64, setup: Setup) -> Result<Report, Failure> {
    let mut sim = Sim::new(seed, setup);
    let plan = sim.setup.plan.clone();
    let steps = plan.as_ref().map_or(sim.setup.steps, Vec::len);
    for step in 0..steps {
        let action = match &plan {
            Some(plan) => plan[step],
            None => sim.draw(),
        };
        sim.interleave()?;
        sim.act(action)?;
        sim.check()?;
    }
    sim.act(Action::Settle)?;
    sim.check()?;
    sim.check_acknowledged()?;
    if std::env::var_os("FF_SIM_TRACE").is_some() {
        eprintln!("{}", sim.trace.join("\n"));
    }
    Ok(Report {
        second_history_without_policy: sim.second_history_without_policy,
    })
}

/// What a simulation saw.
#[derive(Debug, Default, Clone, Copy)]
pub struct Report {
    /// Whether, without a policy, a restored key folder let the log sign a
    /// second history (the documented limit).
    pub second_history_without_policy: bool,
}

/// The heads of `done`'s output the invariants watch.
fn opened(verifier: &VerifierKey, note: &str) -> Option<Head> {
    Checkpoint::open(note, verifier).ok().map(|c| Head {
        size: c.size,
        root_hash: c.root,
    })
}

/// The indexes of the policy's witnesses whose cosignature on `note`
/// verifies (checked here, not by the log).
fn cosigners(policy: &Policy, note: &str) -> BTreeSet<usize> {
    let Ok((text, lines)) = split_note(note) else {
        return BTreeSet::new();
    };
    policy
        .witnesses()
        .iter()
        .enumerate()
        .filter(|(_, w)| {
            lines.iter().any(|(name, encoded)| {
                matches!(w.key.verify_line(text, name, encoded), Ok(Some(_)))
            })
        })
        .map(|(i, _)| i)
        .collect()
}

impl Sim {
    fn finished(&mut self, done: Done<Kind, Out>) -> Result<(), Failure> {
        let elapsed = self.clock.now() - done.started;
        if !matches!(done.kind, Kind::Append { .. }) && elapsed > CALL_BOUND_MS {
            return Err(self.fail(format!(
                "invariant 5: a {:?} call took {elapsed} ms of virtual time, past its bound of {CALL_BOUND_MS} ms",
                done.kind
            )));
        }
        let settled_size = |sim: &Sim, life: u64, size: u64| {
            sim.lives
                .iter()
                .position(|l| l.id == life && size > l.memory_at_start)
        };
        match (done.kind, done.output) {
            (Kind::Append { id, as_of_s }, Out::Append(Ok(seq))) => {
                self.acked.push((id, seq));
                let leaf = lock(&self.store.state).leaves[(seq - 1) as usize];
                self.as_of.insert(leaf, (as_of_s, self.clock.now() / 1000));
                if self.live_now() {
                    self.watches.push((seq, self.clock.now(), 0));
                }
            }
            (Kind::Append { .. }, Out::Append(Err(error))) => {
                return Err(self.fail(format!("an append failed: {error}")));
            }
            (Kind::Round { timer }, Out::Round(result)) => {
                if timer {
                    self.timer_running = false;
                    let now = self.now();
                    if let Some(schedule) = &mut self.schedule {
                        schedule.ran(now);
                    }
                    for watch in &mut self.watches {
                        if done.started >= watch.1 {
                            watch.2 += 1;
                        }
                    }
                }
                match result {
                    Ok(round) => {
                        self.say(format!(
                            "round (timer {timer}) of {}: quorum {}, witnessed {:?}, {:?}",
                            round.tree_size,
                            round.quorum_met,
                            round.witnessed_size,
                            round
                                .witnesses
                                .iter()
                                .map(|w| format!("{}:{}", w.name, w.outcome))
                                .collect::<Vec<_>>()
                        ));
                        if let Some(at) = settled_size(self, done.life, round.tree_size) {
                            self.lives[at].settled = true;
                        }
                    }
                    Err(error) => self.say(format!("round (timer {timer}) failed: {error}")),
                }
            }
            (Kind::Signed, Out::Signed(Ok(note))) => {
                let Some(head) = opened(&self.verifier, &note) else {
                    return Err(self.fail("a checkpoint the log served does not verify".into()));
                };
                self.observe_signed(head)?;
                if let Some(at) = settled_size(self, done.life, head.size) {
                    self.lives[at].settled = true;
                }
            }
            (Kind::Proof, Out::Signed(Ok(note))) => {
                let Some(head) = opened(&self.verifier, &note) else {
                    return Err(self.fail("a proof's checkpoint does not verify".into()));
                };
                self.observe_signed(head)?;
            }
            (Kind::Witnessed, Out::Witnessed(Ok(Some(note)))) => {
                self.observe_quorum(&note, true)?;
            }
            (_, Out::Signed(Err(error)) | Out::Witnessed(Err(error))) => {
                self.say(format!("refused: {error}"));
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether the liveness invariant's condition holds now: k honest
    /// witnesses answer (up, fast, not lying, dated no more than ten
    /// minutes ahead) and, for a process not yet settled, the others could
    /// not on their own meet the quorum.
    fn live_now(&self) -> bool {
        let Some(policy) = &self.policy else {
            return false;
        };
        if self.disturbed || policy.needs_no_cosignature() {
            return false;
        }
        let witnesses = lock(&self.net.witnesses);
        let honest: BTreeSet<usize> = (0..policy.witnesses().len())
            .filter(|&i| {
                let b = witnesses[i].behaviour;
                !b.down && b.latency_ms <= 100 && b.lie == Lie::Honest && b.skew_s < 600
            })
            .collect();
        let others: BTreeSet<usize> = (0..policy.witnesses().len())
            .filter(|i| !honest.contains(i))
            .collect();
        // With two instances, one may sign a head the shared memory holds
        // because the other signed it, without settling: the condition then
        // asks for the answered set whatever the simulator saw.
        let all_settled =
            self.lives.len() == 1 && self.lives.iter().all(|l| l.settled || l.new_log);
        policy.check(&honest).met && (all_settled || !policy.check(&others).met)
    }
}
