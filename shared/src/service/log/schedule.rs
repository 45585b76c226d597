//! When a process's cosigning timer runs its next round
//! ([`CosignSchedule`]): the decisions of freedom-local's timer loop, kept
//! apart from the loop so the custody simulator steps them on its virtual
//! clock and the loop itself only sleeps until the time it is given.
//!
//! A round runs at start when the ledger holds records (the checkpoint
//! served after a restart is witnessed within seconds), then one interval
//! after the previous round *ended*, whatever it did: a round that failed
//! waits like one that succeeded, so a process with nothing to do sleeps
//! (a loop that started its next round as the last one ended spun a core
//! and starved `POST /log/cosign` of the round lock).

use chrono::{DateTime, Utc};
use std::time::Duration;

/// The timer's plan: when the next round is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CosignSchedule {
    interval: Duration,
    next_due: DateTime<Utc>,
}

impl CosignSchedule {
    /// The plan of a timer starting at `now` on a ledger of `head_size`
    /// records, one round every `interval` (at least a second): the first
    /// round at once when there are records to witness, else after one
    /// interval.
    pub fn new(interval: Duration, now: DateTime<Utc>, head_size: u64) -> CosignSchedule {
        let interval = interval.max(Duration::from_secs(1));
        let next_due = if head_size > 0 {
            now
        } else {
            later(now, interval)
        };
        CosignSchedule { interval, next_due }
    }

    /// When the next round is due.
    pub fn next_due(&self) -> DateTime<Utc> {
        self.next_due
    }

    /// How long to wait from `now` until the next round (zero when due).
    pub fn wait(&self, now: DateTime<Utc>) -> Duration {
        (self.next_due - now).to_std().unwrap_or_default()
    }

    /// Records that a round ended at `now` (whatever its outcome): the
    /// next is due one interval later.
    pub fn ran(&mut self, now: DateTime<Utc>) {
        self.next_due = later(now, self.interval);
    }
}

/// `now` plus `interval`, or the latest instant chrono knows.
fn later(now: DateTime<Utc>, interval: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(interval)
        .ok()
        .and_then(|step| now.checked_add_signed(step))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
    }

    #[test]
    fn a_round_is_due_at_once_only_when_there_are_records() {
        let minute = Duration::from_secs(60);
        assert_eq!(CosignSchedule::new(minute, at(0), 3).next_due(), at(0));
        assert_eq!(CosignSchedule::new(minute, at(0), 0).next_due(), at(60));
        let zero = CosignSchedule::new(Duration::ZERO, at(0), 0);
        assert_eq!(zero.next_due(), at(1), "at least a second between rounds");
    }

    #[test]
    fn the_next_round_waits_an_interval_after_the_last_ended_whatever_it_did() {
        let mut schedule = CosignSchedule::new(Duration::from_secs(60), at(0), 5);
        assert_eq!(schedule.wait(at(0)), Duration::ZERO);
        // However many times a round ends (a failed round ends at once),
        // the next is never due before an interval has passed.
        for end in [0, 3, 70, 200] {
            schedule.ran(at(end));
            assert_eq!(schedule.next_due(), at(end + 60));
            assert_eq!(schedule.wait(at(end)), Duration::from_secs(60));
        }
        assert_eq!(schedule.wait(at(1_000)), Duration::ZERO, "overdue: at once");
        schedule.ran(DateTime::<Utc>::MAX_UTC);
        assert_eq!(schedule.next_due(), DateTime::<Utc>::MAX_UTC);
    }
}
