//! The simulator's scheduler: a virtual clock, a seeded PRNG, and a
//! single-threaded executor that polls the log's real futures one step at
//! a time, in an order the PRNG chooses, and can drop any of them between
//! two polls (a kill). Every port call of the simulated adapters yields
//! once ([`yield_now`]), so a task can be interleaved with others, or
//! killed, between any two writes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::task::{Context, Poll, Wake, Waker};

/// SplitMix64: small, fast, and the same sequence for the same seed on
/// every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The generator of `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: i64, high: i64) -> i64 {
        let span = high.saturating_sub(low).saturating_add(1).max(1) as u64;
        low.saturating_add(self.below(span) as i64)
    }

    /// One of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// The virtual clock, in milliseconds since the epoch: it moves only when
/// the simulator moves it.
#[derive(Debug, Clone)]
pub struct VirtualClock(Arc<AtomicI64>);

impl VirtualClock {
    /// A clock reading `millis`.
    pub fn at(millis: i64) -> VirtualClock {
        VirtualClock(Arc::new(AtomicI64::new(millis)))
    }

    /// Now, in milliseconds.
    pub fn now(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }

    /// Moves the clock to `millis` (never back).
    pub fn advance_to(&self, millis: i64) {
        self.0.fetch_max(millis, Ordering::SeqCst);
    }

    /// The clock as the service reads it.
    pub fn service_clock(&self) -> freedom_shared::clock::Clock {
        let millis = Arc::clone(&self.0);
        Arc::new(move || {
            chrono::DateTime::from_timestamp_millis(millis.load(Ordering::SeqCst))
                .expect("the simulated clock stays in chrono's range")
        })
    }
}

/// Gives the scheduler a turn: pending once, woken at once.
pub async fn yield_now() {
    struct YieldNow(bool);
    impl Future for YieldNow {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                Poll::Ready(())
            } else {
                self.0 = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }
    YieldNow(false).await
}

/// A task's wake-up flag.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A future the scheduler runs, with what the simulator knows of it.
pub struct Task<K, O> {
    /// What it is (the simulator's description).
    pub kind: K,
    /// The process life it belongs to (killed with it).
    pub life: u64,
    /// When it started (virtual milliseconds).
    pub started: i64,
    /// How many times it was polled.
    pub polls: u32,
    future: Pin<Box<dyn Future<Output = O>>>,
    flag: Arc<Flag>,
}

/// A task that finished.
pub struct Done<K, O> {
    /// What it was.
    pub kind: K,
    /// Its process life.
    pub life: u64,
    /// When it started (virtual milliseconds).
    pub started: i64,
    /// What it gave.
    pub output: O,
}

/// The running tasks.
pub struct Tasks<K, O> {
    tasks: Vec<Task<K, O>>,
}

impl<K, O> Default for Tasks<K, O> {
    fn default() -> Self {
        Tasks { tasks: Vec::new() }
    }
}

impl<K, O> Tasks<K, O> {
    /// Starts `future`, to be polled at the scheduler's next turn.
    pub fn spawn(
        &mut self,
        kind: K,
        life: u64,
        now: i64,
        future: impl Future<Output = O> + 'static,
    ) {
        self.tasks.push(Task {
            kind,
            life,
            started: now,
            polls: 0,
            future: Box::pin(future),
            flag: Arc::new(Flag(AtomicBool::new(true))),
        });
    }

    /// The indexes of the tasks that can make progress.
    pub fn woken(&self) -> Vec<usize> {
        (0..self.tasks.len())
            .filter(|&i| self.tasks[i].flag.0.load(Ordering::SeqCst))
            .collect()
    }

    /// Polls task `index` once: what it gave when it finished (it is then
    /// removed).
    pub fn poll(&mut self, index: usize) -> Option<Done<K, O>> {
        let task = &mut self.tasks[index];
        task.flag.0.store(false, Ordering::SeqCst);
        task.polls += 1;
        let waker = Waker::from(Arc::clone(&task.flag));
        let mut cx = Context::from_waker(&waker);
        match task.future.as_mut().poll(&mut cx) {
            Poll::Pending => None,
            Poll::Ready(output) => {
                let done = self.tasks.swap_remove(index);
                Some(Done {
                    kind: done.kind,
                    life: done.life,
                    started: done.started,
                    output,
                })
            }
        }
    }

    /// Drops every task of `life` (a kill: each stops at its last await).
    pub fn kill(&mut self, life: u64) {
        self.tasks.retain(|task| task.life != life);
    }

    /// The running tasks.
    pub fn iter(&self) -> impl Iterator<Item = &Task<K, O>> {
        self.tasks.iter()
    }

    /// Whether no task is running.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
}
