//! The plan's steps: drawing them from the seed, and carrying them out on
//! the simulated world (tasks started, time moved, faults applied).

use super::{Action, Change, Kind, Layout, Out, SHAPES, Shape, Sim, lock};
use crate::run::{CALL_BOUND_MS, Failure, MAX_POLLS};
use crate::witness::Lie;
use freedom_shared::merkle::Head;
use freedom_shared::ports::conformance::candidate;
use freedom_shared::ports::{AppendOutcome, LedgerAppend};
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::Arc;

/// How many polls one quiet spell may take before it is a busy loop.
const QUIET_POLLS: u32 = 200_000;

impl Sim {
    /// The next step of a plan drawn from the seed.
    pub(super) fn draw(&mut self) -> Action {
        let rng = &mut self.plan_rng;
        let faults = self.setup.store_faults;
        match rng.below(1_000) {
            0..200 => {
                let backfill = if rng.chance(5) {
                    rng.between(3_600, 3 * 86_400)
                } else {
                    rng.between(0, 30)
                };
                Action::Append(1 + rng.below(3) as u8, backfill)
            }
            200..260 => Action::Cosign,
            260..310 => Action::Checkpoint,
            310..340 => Action::Witnessed,
            340..360 => Action::Proof,
            360..560 => Action::Advance(rng.between(100, 5_000)),
            560..640 => Action::Advance(rng.between(20_000, 90_000)),
            640..750 => {
                let index = rng.below(5) as usize;
                let change = match rng.below(100) {
                    0..30 => Change::Down(rng.chance(50)),
                    30..50 => {
                        let late = rng.between(8_000, 30_000);
                        Change::Latency(*rng.pick(&[40, 40, 1_500, late]))
                    }
                    50..70 => Change::Skew(match rng.below(4) {
                        0 => 0,
                        1 => rng.between(-30, 30),
                        2 => rng.between(600, 86_400),
                        _ => -rng.between(600, 86_400),
                    }),
                    70..85 => Change::Lie(*rng.pick(&[
                        Lie::Honest,
                        Lie::Honest,
                        Lie::Refuses,
                        Lie::Unhinted,
                        Lie::ClaimsLarger,
                        Lie::BadCosignature,
                        Lie::Unknown,
                        Lie::Stale,
                    ])),
                    _ => Change::Monitoring(rng.chance(50)),
                };
                Action::Witness(index, change)
            }
            750..780 => Action::Restart,
            780..795 if faults => Action::StoreLost,
            795..810 if faults => Action::FreshStart,
            810..840 => Action::Snapshot,
            840..860 if faults => Action::Restore(rng.below(1_000) as usize, rng.chance(50)),
            // A memory lost or restored across a policy change is protected
            // only by the new policy's witnesses (docs/log.md): the two
            // faults are drawn apart.
            860..870 if !faults => Action::Policy(*rng.pick(&SHAPES)),
            870..880 => Action::NewLog,
            880..895 => Action::SecondInstance,
            _ => Action::Settle,
        }
    }

    /// Lets a few tasks move before the next step, in an order of the
    /// seed's choosing.
    pub(super) fn interleave(&mut self) -> Result<(), Failure> {
        let polls = self.sched_rng.below(5);
        for _ in 0..polls {
            let woken = self.tasks.woken();
            if woken.is_empty() {
                break;
            }
            let index = *self.sched_rng.pick(&woken);
            self.poll(index)?;
        }
        Ok(())
    }

    fn poll(&mut self, index: usize) -> Result<(), Failure> {
        if let Some(done) = self.tasks.poll(index) {
            self.finished(done)?;
        }
        Ok(())
    }

    /// Polls every task that can move until none can.
    fn run_quiet(&mut self) -> Result<(), Failure> {
        let mut polls = 0u32;
        loop {
            let woken = self.tasks.woken();
            if woken.is_empty() {
                return Ok(());
            }
            polls += 1;
            if polls > QUIET_POLLS {
                return Err(self.fail(format!(
                    "invariant 5: tasks were polled {QUIET_POLLS} times without waiting for anything (a busy loop)"
                )));
            }
            let index = *self.sched_rng.pick(&woken);
            self.poll(index)?;
        }
    }

    /// Moves the clock to `target`, stopping at every answer due on the
    /// way (and at the timer's rounds) to let the tasks react.
    fn advance_to(&mut self, target: i64) -> Result<(), Failure> {
        loop {
            self.run_quiet()?;
            self.start_timer_round();
            self.run_quiet()?;
            let timer_due = self
                .schedule
                .filter(|_| !self.timer_running)
                .map(|s| s.next_due().timestamp_millis());
            let next = [self.net.next_due(), timer_due]
                .into_iter()
                .flatten()
                .filter(|t| *t > self.clock.now())
                .min()
                .unwrap_or(target)
                .min(target);
            let due_now = self.net.next_due().is_some_and(|t| t <= self.clock.now());
            if !due_now {
                self.clock.advance_to(next);
            }
            self.net.deliver_due();
            self.overdue()?;
            if self.clock.now() >= target && self.net.next_due().is_none_or(|t| t > target) {
                self.run_quiet()?;
                self.start_timer_round();
                return self.run_quiet();
            }
        }
    }

    /// A task past its bound, still running, is a hang.
    fn overdue(&self) -> Result<(), Failure> {
        for task in self.tasks.iter() {
            if task.polls > MAX_POLLS {
                return Err(self.fail(format!(
                    "invariant 5: a {:?} call was polled {} times",
                    task.kind, task.polls
                )));
            }
            let waited = self.clock.now() - task.started;
            if !matches!(task.kind, Kind::Append { .. }) && waited > CALL_BOUND_MS {
                return Err(self.fail(format!(
                    "invariant 5: a {:?} call has not returned after {waited} ms of virtual time (bound {CALL_BOUND_MS} ms); in flight: {:?}",
                    task.kind,
                    self.net.in_flight()
                ) + &format!(
                    "; tasks: {:?}; lives: {:?}",
                    self.tasks.iter().map(|t| (t.kind.clone(), t.life, t.started)).collect::<Vec<_>>(),
                    self.lives.iter().map(|l| l.id).collect::<Vec<_>>()
                )));
            }
        }
        Ok(())
    }

    /// Starts the timer's round when it is due.
    fn start_timer_round(&mut self) {
        let Some(schedule) = self.schedule else {
            return;
        };
        if self.timer_running || self.lives.is_empty() || self.now() < schedule.next_due() {
            return;
        }
        let at = self.sched_rng.below(self.lives.len() as u64) as usize;
        let (life, log) = (self.lives[at].id, Arc::clone(&self.lives[at].log));
        self.timer_running = true;
        self.last_timer_start = Some(self.clock.now());
        self.rounds_in_epoch += 1;
        self.round_starts.push(self.clock.now());
        self.tasks.spawn(
            Kind::Round { timer: true },
            life,
            self.clock.now(),
            async move { Out::Round(log.cosign(false).await.map_err(|e| e.to_string())) },
        );
    }

    /// Runs every task to its end.
    fn settle(&mut self) -> Result<(), Failure> {
        let limit = self.clock.now() + 4 * CALL_BOUND_MS;
        while !self.tasks.is_empty() {
            self.run_quiet()?;
            if self.tasks.is_empty() {
                break;
            }
            if self.net.next_due().is_none() && self.tasks.woken().is_empty() {
                return Err(self.fail(format!(
                    "invariant 5: {} calls wait for nothing that will ever come (a hang): {:?}",
                    self.tasks.iter().count(),
                    self.tasks
                        .iter()
                        .map(|t| t.kind.clone())
                        .collect::<Vec<_>>()
                )));
            }
            if self.clock.now() > limit {
                return Err(
                    self.fail("invariant 5: calls still running long after their bound".into())
                );
            }
            let next = self.net.next_due().unwrap_or(self.clock.now());
            self.advance_to(next.max(self.clock.now()))?;
        }
        Ok(())
    }

    fn some_life(&mut self) -> Option<usize> {
        (!self.lives.is_empty()).then(|| self.sched_rng.below(self.lives.len() as u64) as usize)
    }

    /// Carries out one step of the plan.
    pub(super) fn act(&mut self, action: Action) -> Result<(), Failure> {
        if !matches!(action, Action::Advance(_) | Action::Settle) {
            self.say(format!("{action:?}"));
        }
        match action {
            Action::Append(count, backfill) => {
                for _ in 0..count {
                    self.spawn_append(backfill);
                }
            }
            Action::Cosign => self.spawn_call(Kind::Round { timer: false }),
            Action::Checkpoint => self.spawn_call(Kind::Signed),
            Action::Witnessed => self.spawn_call(Kind::Witnessed),
            Action::Proof => self.spawn_proof(),
            Action::Advance(ms) => self.advance_to(self.clock.now() + ms)?,
            Action::Settle => self.settle()?,
            Action::Witness(index, change) => self.change_witness(index, change),
            Action::Restart => {
                if let Some(at) = self.some_life() {
                    let life = self.lives.remove(at);
                    self.tasks.kill(life.id);
                    self.timer_running = self
                        .tasks
                        .iter()
                        .any(|t| matches!(t.kind, Kind::Round { timer: true }));
                    self.start_life(false);
                }
            }
            Action::StoreLost => {
                self.new_epoch(Default::default());
                if self.setup.layout == Layout::Lambda {
                    self.memory_went_back();
                }
                self.start_life(false);
            }
            Action::FreshStart => {
                self.new_epoch(Default::default());
                self.key_memory.restore(None);
                self.memory_went_back();
                self.start_life(false);
            }
            Action::Snapshot => {
                let key = self.key_memory.backup();
                self.backups.push((self.store.snapshot(), key));
            }
            Action::Restore(which, with_key) => {
                if self.backups.is_empty() {
                    return Ok(());
                }
                let (state, key) = self.backups[which % self.backups.len()].clone();
                self.new_epoch(state);
                if self.setup.layout == Layout::Lambda {
                    self.memory_went_back();
                } else if with_key {
                    self.key_memory.restore(Some(key));
                    self.memory_went_back();
                }
                self.start_life(false);
            }
            Action::Policy(shape) => {
                if self.shape == Shape::None || shape == self.shape {
                    return Ok(());
                }
                self.kill_all();
                // The memory carries the earlier witnesses' checkpoints
                // across the change only when it holds them.
                let carried = self.first_memory_size()
                    >= self.quorum_met.iter().map(|h| h.size).max().unwrap_or(0);
                let earlier = std::mem::take(&mut self.quorum_met);
                if carried {
                    self.earlier_policies.extend(earlier);
                }
                self.set_policy(shape);
                self.watches.clear();
                self.start_life(false);
            }
            Action::NewLog => {
                if self.first_memory_size() > 0 || !self.new_log_is_true() {
                    return Ok(());
                }
                self.kill_all();
                self.start_life(true);
            }
            Action::SecondInstance => {
                if self.setup.layout == Layout::Lambda && self.lives.len() < 2 {
                    self.start_life(false);
                }
            }
        }
        Ok(())
    }

    /// Whether the key signed nothing the store's ledger does not extend
    /// (what `--new-log` says), as far as anything signed was seen.
    fn new_log_is_true(&self) -> bool {
        let head = self.store.head_now();
        let histories = lock(&self.histories);
        self.signed.iter().all(|(size, root)| {
            let signed = Head {
                size: *size,
                root_hash: *root,
            };
            *size <= head.size && histories.consistent(signed, head) == Some(true)
        }) && lock(&self.store.state).signed_note().is_none()
    }

    fn spawn_append(&mut self, backfill: i64) {
        let Some(at) = self.some_life() else {
            return;
        };
        let life = self.lives[at].id;
        self.next_id += 1;
        let id = format!("sim-{}", self.next_id);
        let as_of_s = self.clock.now() / 1000 - backfill;
        let as_of = chrono::DateTime::from_timestamp(as_of_s, 0)
            .expect("in range")
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let record = if self.next_id.is_multiple_of(4) {
            json!({
                "id": id, "type": "decision", "visibility": "public", "mode": "paper",
                "strategyId": "sim", "strategyName": "Simulated", "asOf": as_of,
                "source": {"name": "sim", "url": "https://example.com/sim"},
                "action": "hold", "summary": "a simulated decision"
            })
        } else {
            json!({
                "id": id, "type": "snapshot", "visibility": "public", "mode": "live",
                "strategyId": "sim", "strategyName": "Simulated", "asOf": as_of,
                "source": {"name": "sim", "url": "https://example.com/sim"},
                "currency": "USD", "equity": 1000 + self.next_id as i64, "flowSincePrevious": 0
            })
        };
        let store = Arc::clone(&self.store);
        let candidate = candidate(record);
        self.tasks.spawn(
            Kind::Append { id, as_of_s },
            life,
            self.clock.now(),
            async move {
                Out::Append(match store.append(candidate).await {
                    Ok(AppendOutcome::Created { entry, .. }) => Ok(entry.seq),
                    other => Err(format!("{other:?}")),
                })
            },
        );
    }

    fn spawn_call(&mut self, kind: Kind) {
        let Some(at) = self.some_life() else {
            return;
        };
        let (life, log) = (self.lives[at].id, Arc::clone(&self.lives[at].log));
        let now = self.clock.now();
        match kind {
            Kind::Round { .. } => {
                if log.policy().is_none() {
                    return;
                }
                self.rounds_in_epoch += 1;
                self.round_starts.push(now);
                self.tasks.spawn(kind, life, now, async move {
                    Out::Round(log.cosign(false).await.map_err(|e| e.to_string()))
                });
            }
            Kind::Signed => self.tasks.spawn(kind, life, now, async move {
                Out::Signed(
                    log.checkpoint()
                        .await
                        .map(|signed| signed.note.to_string())
                        .map_err(|e| e.to_string()),
                )
            }),
            Kind::Witnessed => self.tasks.spawn(kind, life, now, async move {
                Out::Witnessed(
                    log.witnessed()
                        .await
                        .map(|w| w.map(|w| w.note.to_string()))
                        .map_err(|e| e.to_string()),
                )
            }),
            Kind::Append { .. } | Kind::Proof => {
                unreachable!("appends and proofs have their own spawn")
            }
        }
    }

    fn spawn_proof(&mut self) {
        let head = self.store.head_now().size;
        let Some(at) = self.some_life().filter(|_| head > 0) else {
            return;
        };
        let seq = 1 + self.sched_rng.below(head);
        let (life, log) = (self.lives[at].id, Arc::clone(&self.lives[at].log));
        self.tasks
            .spawn(Kind::Proof, life, self.clock.now(), async move {
                Out::Signed(
                    log.inclusion(seq, None)
                        .await
                        .map(|(_, note)| note.to_string())
                        .map_err(|e| e.to_string()),
                )
            });
    }

    fn change_witness(&mut self, index: usize, change: Change) {
        let count = self.witness_count().max(1);
        let index = index % count;
        if let Change::Lie(lie) = change
            && lie != Lie::Honest
            && let Some(policy) = &self.policy
        {
            // Liars stay within what the policy tolerates: the others
            // still make a quorum.
            let witnesses = lock(&self.net.witnesses);
            let truthful: BTreeSet<usize> = (0..count)
                .filter(|&i| i != index && witnesses[i].behaviour.lie == Lie::Honest)
                .collect();
            if !policy.check(&truthful).met {
                return;
            }
        }
        let mut witnesses = lock(&self.net.witnesses);
        let behaviour = &mut witnesses[index].behaviour;
        match change {
            Change::Down(down) => behaviour.down = down,
            Change::Latency(ms) => behaviour.latency_ms = ms,
            Change::Skew(seconds) => behaviour.skew_s = seconds,
            Change::Lie(lie) => behaviour.lie = lie,
            Change::Monitoring(serve) => behaviour.monitoring = serve,
        }
    }
}
