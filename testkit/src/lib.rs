//! # freedom-testkit
//!
//! Test support shared by the workspace's tests and benchmarks. Nothing here
//! ships in the functions.
//!
//! - [`redis_server::RedisServer`]: a private `redis-server` on a free
//!   loopback port, with nothing kept on disk, stopped on drop.
//! - [`upstash_bridge::UpstashBridge`]: the Upstash REST protocol in front of
//!   that server (JSON command arrays in, `{"result"}` / `{"error"}` out,
//!   Bearer auth, `/pipeline`, `/multi-exec`), counting round trips and able to
//!   fail on demand: answer 500 before or after executing, or never answer.
//!   The production KV client talks to it exactly as it talks to Upstash.
//! - [`lambda_runtime_api`]: a fake Lambda Runtime API to drive the real
//!   binaries as Lambda does.
//! - [`moto`]: moto's server as a private EventBridge with an SQS sink.
//! - [`provider_standin`]: DexScreener, RugCheck and Solana RPC in their
//!   real shapes, with injectable latency and failures (also a program).
//! - [`python`]: checks by Python's validators (OpenAPI, JSON Schema).
//! - [`sample_ledger`]: a small, realistic ledger for page tests and the
//!   docs/page.md screenshot.
//! - [`spec_witness`]: a c2sp.org/tlog-witness written from the specifications
//!   alone (no code shared with `freedom-witness` or the service's `tlog`).
//! - [`stoppable`]: an in-process server that really goes down (listener and
//!   open connections closed) and comes back on the same port.

pub mod lambda_runtime_api;
pub mod moto;
pub mod provider_standin;
pub mod python;
pub mod redis_server;
pub mod sample_ledger;
pub mod spec_witness;
pub mod stoppable;
pub mod upstash_bridge;
