//! The HTTP layer's limits: what the local listener enforces, and what the
//! contract view publishes about it (so they are stated once).

use std::time::Duration;

/// The listener's limits. [`ServerLimits::default`] is what the binaries use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// How long a ready connection may take to deliver a whole request head
    /// (it also closes idle keep-alive connections).
    pub head_timeout: Duration,
    /// Largest request head (request line and header fields), in bytes.
    pub max_head_bytes: usize,
    /// Longest request target (path and query), in bytes.
    pub max_uri_bytes: usize,
    /// Most connections served at once.
    pub max_connections: usize,
    /// How long in-flight requests get to finish after shutdown begins.
    pub shutdown_grace: Duration,
}

impl Default for ServerLimits {
    fn default() -> ServerLimits {
        ServerLimits {
            head_timeout: Duration::from_secs(10),
            max_head_bytes: 32 * 1024,
            max_uri_bytes: 8 * 1024,
            max_connections: 4096,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}
