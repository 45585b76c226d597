//! The seven invariants, checked after every step.

use super::{Failure, Kind, Sim, TOLERANCE_S, cosigners, lock, opened};
use freedom_shared::merkle::Head;

impl Sim {
    /// Checks every invariant against what the world holds now.
    pub(super) fn check(&mut self) -> Result<(), Failure> {
        let sent = std::mem::take(&mut *lock(&self.net.sent));
        for head in sent {
            self.observe_signed(head)?;
        }
        let witnessed = lock(&self.store.state).witnessed();
        if let Some((_, note)) = witnessed
            && self.last_witnessed.as_ref() != Some(&note)
        {
            self.last_witnessed = Some(note.clone());
            self.observe_quorum(&note, false)?;
        }
        self.check_history()?;
        self.check_liveness()
    }

    /// Invariant 1: one root per size, across every life of the process;
    /// once the key's memory went back (restored or lost), a head may be
    /// signed twice only where no witness can know, and no new signature
    /// may contradict a checkpoint that met the quorum (without a policy:
    /// the documented limit, counted).
    pub(super) fn observe_signed(&mut self, head: Head) -> Result<(), Failure> {
        if !lock(&self.histories).knows(head) {
            return Err(self.fail(format!(
                "invariant 1: the log signed a tree of {} that no store ever held",
                head.size
            )));
        }
        // A checkpoint signed before (the same size and root) shown again
        // is no new signature: a restored memory re-presents what it signed.
        if !self.signed_heads.insert((head.size, head.root_hash)) {
            return Ok(());
        }
        match self.signed.get(&head.size) {
            Some(root) if *root != head.root_hash => {
                if !self.key_memory_went_back {
                    return Err(self.fail(format!(
                        "invariant 1: two signed checkpoints of size {} with different roots, the key's memory intact",
                        head.size
                    )));
                }
                if self.policy.is_none() {
                    self.second_history_without_policy = true;
                }
            }
            Some(_) => {}
            None => {
                self.signed.insert(head.size, head.root_hash);
            }
        }
        let histories = lock(&self.histories);
        if let Some(witnessed) = self
            .protected()
            .find(|q| histories.consistent(head, **q) == Some(false))
        {
            let what = format!(
                "invariant 1: the log signed a tree of {} that is not consistent with the witnessed checkpoint of {}",
                head.size, witnessed.size
            );
            drop(histories);
            return Err(self.fail(what));
        }
        Ok(())
    }

    /// Invariant 2: every checkpoint that met the quorum (checked here
    /// from its cosignatures, under the policy the log runs) is consistent
    /// with every earlier one. `served`: the log served `note` as its
    /// witnessed checkpoint (it must meet the quorum); otherwise it is what
    /// the store keeps, which may be a backup's, witnessed under another
    /// policy (the log checks it again before serving it).
    pub(super) fn observe_quorum(&mut self, note: &str, served: bool) -> Result<(), Failure> {
        let Some(head) = opened(&self.verifier, note) else {
            return Err(
                self.fail("invariant 2: a witnessed note not signed by the log's key".into())
            );
        };
        if let Some(policy) = &self.policy
            && !policy.check(&cosigners(policy, note)).met
        {
            if !served {
                return Ok(());
            }
            return Err(self.fail(format!(
                "invariant 2: the log served a witnessed checkpoint of {} that does not meet the quorum",
                head.size
            )));
        }
        let histories = lock(&self.histories);
        if let Some(earlier) = self
            .protected()
            .find(|q| histories.consistent(head, **q) != Some(true))
        {
            let what = format!(
                "invariant 2: witnessed checkpoints of {} and {} are not consistent (a witnessed fork; witnessed under this policy: {:?}, under earlier ones: {:?})",
                earlier.size,
                head.size,
                self.quorum_met.iter().map(|h| h.size).collect::<Vec<_>>(),
                self.earlier_policies
                    .iter()
                    .map(|h| h.size)
                    .collect::<Vec<_>>()
            );
            drop(histories);
            return Err(self.fail(what));
        }
        drop(histories);
        if !self.quorum_met.contains(&head) {
            self.quorum_met.push(head);
        }
        self.observe_signed(head)
    }

    /// Invariants 3 and 4: the witnessed history grows by at most one
    /// entry a round, its sizes increase and its times never decrease; no
    /// time before the round that asked (less the tolerance) or after it
    /// ended (plus the tolerance), and no snapshot witnessed before its
    /// valuation beyond the tolerance.
    fn check_history(&mut self) -> Result<(), Failure> {
        let history: Vec<(u64, u64)> = lock(&self.store.state)
            .history()
            .iter()
            .map(|kept| (kept.size, kept.quorum_time))
            .collect();
        let grown = history.len().saturating_sub(self.history_at_epoch);
        if grown > self.rounds_in_epoch {
            return Err(self.fail(format!(
                "invariant 3: the witnessed history grew by {grown} entries in {} rounds",
                self.rounds_in_epoch
            )));
        }
        for pair in history.windows(2) {
            if pair[1].1 < pair[0].1 {
                return Err(self.fail(format!(
                    "invariant 3: the witnessed time of {} ({}) is earlier than that of {} ({})",
                    pair[1].0, pair[1].1, pair[0].0, pair[0].1
                )));
            }
        }
        let earliest_round = self.round_starts.iter().min().copied();
        let now_s = self.clock.now() / 1000;
        let mut previous = 0;
        for &(size, time) in &history {
            let first = previous + 1;
            previous = size;
            if self.history_seen.contains_key(&size) {
                continue;
            }
            self.history_seen.insert(size, time);
            let time = i64::try_from(time).unwrap_or(i64::MAX);
            let asked = earliest_round.map_or(now_s, |ms| ms / 1000);
            if time < asked - TOLERANCE_S || time > now_s + TOLERANCE_S {
                return Err(self.fail(format!(
                    "invariant 4: the checkpoint of {size} was kept with the witnessed time {time}, outside the round that asked ({asked} to {now_s}) and the {TOLERANCE_S} s tolerance"
                )));
            }
            let leaves: Vec<_> = {
                let state = lock(&self.store.state);
                (first..=size)
                    .filter_map(|seq| state.leaves.get((seq - 1) as usize).copied())
                    .collect()
            };
            for leaf in leaves {
                if let Some(&(as_of, appended)) = self.as_of.get(&leaf)
                    && as_of <= appended
                    && time < as_of - TOLERANCE_S
                {
                    return Err(self.fail(format!(
                        "invariant 4: a record valued at {as_of} was witnessed at {time}, {} s before it (a negative lag past the tolerance)",
                        as_of - time
                    )));
                }
            }
        }
        self.round_starts = self
            .tasks
            .iter()
            .filter(|t| matches!(t.kind, Kind::Round { .. }))
            .map(|t| t.started)
            .collect();
        Ok(())
    }

    /// Invariant 7: while the liveness condition holds, every acknowledged
    /// record is witnessed by the end of the second timer round that
    /// started after it.
    fn check_liveness(&mut self) -> Result<(), Failure> {
        if !self.live_now() {
            self.watches.clear();
            return Ok(());
        }
        let witnessed = lock(&self.store.state)
            .witnessed()
            .map_or(0, |(size, _)| size);
        if let Some(&(seq, _, _)) = self
            .watches
            .iter()
            .find(|(seq, _, rounds)| *rounds >= 2 && witnessed < *seq)
        {
            return Err(self.fail(format!(
                "invariant 7: record {seq} was not witnessed within two rounds (witnessed size {witnessed}) while enough honest witnesses answered"
            )));
        }
        self.watches.retain(|(_, _, rounds)| *rounds < 2);
        Ok(())
    }

    /// Invariant 6: no acknowledged append lost while the store was not.
    pub(super) fn check_acknowledged(&self) -> Result<(), Failure> {
        let state = lock(&self.store.state);
        for (id, seq) in &self.acked {
            if state.ids.get(id) != Some(seq) {
                return Err(self.fail(format!(
                    "invariant 6: the acknowledged record {id} (seq {seq}) is gone"
                )));
            }
        }
        Ok(())
    }
}
