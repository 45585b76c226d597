//! Where "now" comes from, and how instants are written. Production reads the
//! system clock; tests inject a fixed or stepped one, so rules that depend on
//! the time (a record may not be dated in the future; the scanner's schedule;
//! a lock's expiry) are tested exactly.

use chrono::{DateTime, SecondsFormat, Utc};
use std::sync::Arc;

/// How far apart two honest clocks may be, in seconds: the service's and a
/// witness's. A cosignature dated further than this outside the cosigning
/// round that asked for it does not count towards a checkpoint's quorum
/// time, and a snapshot whose witnessed time precedes its `asOf` by more
/// than this is a clock conflict, never on time (docs/log.md, "When each
/// record was written"; the contract's `log.clockToleranceSeconds`).
pub const CLOCK_TOLERANCE_SECONDS: i64 = 60;

/// A source of the current instant.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(Utc::now)
}

/// Time elapsed since some fixed instant, never going back: what
/// deadlines and waits are counted on (a wall clock stepped back must not
/// stretch a bound).
pub type Ticks = Arc<dyn Fn() -> std::time::Duration + Send + Sync>;

/// The system's monotonic clock, from now.
pub fn system_ticks() -> Ticks {
    let start = std::time::Instant::now();
    Arc::new(move || start.elapsed())
}

/// Ticks read from `clock` (a test's or the custody simulator's), since
/// the epoch, never going back even if `clock` does.
pub fn ticks_of(clock: Clock) -> Ticks {
    let latest = std::sync::atomic::AtomicU64::new(0);
    Arc::new(move || {
        let millis = u64::try_from(clock().timestamp_millis()).unwrap_or(0);
        let seen = latest
            .fetch_max(millis, std::sync::atomic::Ordering::SeqCst)
            .max(millis);
        std::time::Duration::from_millis(seen)
    })
}

/// A clock that always reads `at` (tests).
pub fn fixed_clock(at: DateTime<Utc>) -> Clock {
    Arc::new(move || at)
}

/// `instant` as RFC 3339 in UTC (`2026-05-04T16:00:00Z`, with a fraction of
/// a second only when it has one): how the service writes every instant it
/// produces itself.
pub(crate) fn rfc3339(instant: DateTime<Utc>) -> String {
    instant.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// `instant` without its fraction of a second: the scanner and the messages
/// that name the service's clock count in whole seconds.
pub(crate) fn whole_seconds(instant: DateTime<Utc>) -> DateTime<Utc> {
    chrono::SubsecRound::trunc_subsecs(instant, 0)
}

/// An instant given as seconds since the epoch, in RFC 3339 (UTC, whole
/// seconds; the earliest or latest instant chrono knows when beyond it).
pub(crate) fn epoch_seconds_rfc3339(seconds: i64) -> String {
    let instant = DateTime::from_timestamp(seconds, 0).unwrap_or(if seconds < 0 {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    });
    rfc3339(instant)
}

/// Serialises seconds since the epoch as [`epoch_seconds_rfc3339`] does.
pub(crate) fn serialize_epoch_seconds<S: serde::Serializer>(
    seconds: &i64,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&epoch_seconds_rfc3339(*seconds))
}
