//! The fund's handlers: each reads its parameters ([`crate::params`]),
//! calls one use case on [`crate::AppState`], and answers with a view
//! ([`crate::views`]) or the use case's own bytes. None touches a store.

pub(crate) mod exports;
pub(crate) mod ledger;
pub(crate) mod log;
