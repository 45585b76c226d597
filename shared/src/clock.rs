//! Where "now" comes from. Production reads the system clock; tests inject a
//! fixed or stepped one, so rules that depend on the time (a record may not
//! be dated in the future; the scanner's schedule) are tested exactly.

use chrono::{DateTime, Utc};
use std::sync::Arc;

/// A source of the current instant.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(Utc::now)
}

/// A clock that always reads `at` (tests).
pub fn fixed_clock(at: DateTime<Utc>) -> Clock {
    Arc::new(move || at)
}
