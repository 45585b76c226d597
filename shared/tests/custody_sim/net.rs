//! The network between the log and its witnesses, on the virtual clock:
//! a request is answered after the witness's latency, or given up at the
//! client's timeout (the witness still acts on it: an answer that comes
//! late); a witness that is down refuses the connection.

use crate::exec::{VirtualClock, yield_now};
use crate::witness::{Request, SimWitness};
use crate::world::lock;
use async_trait::async_trait;
use freedom_shared::merkle::Head;
use freedom_shared::ports::{WitnessClient, WitnessReply};
use freedom_shared::tlog::checkpoint::Checkpoint;
use freedom_shared::tlog::note::VerifierKey;
use freedom_shared::tlog::witness::AddCheckpoint;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

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
