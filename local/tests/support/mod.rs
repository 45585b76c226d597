//! What the freedom-local tests share: running the real binary on a free
//! port, reading its log, stopping it, and a few records.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// The write token the tests start freedom-local with.
pub const TOKEN: &str = "local-test-token-0123456789";

/// A running freedom-local: the process, its base URL and its log lines.
pub struct Running {
    /// The process.
    pub child: Child,
    /// `http://<addr>`.
    pub base: String,
    /// Every log line it wrote so far (stderr).
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Running {
    /// A test that fails midway leaves no process behind.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Running {
    /// Whether a log line so far contains `text`.
    pub fn logged(&self, text: &str) -> bool {
        self.log
            .lock()
            .unwrap()
            .iter()
            .any(|line| line.contains(text))
    }
}

/// A command for `freedom-local` with no KV variables from the environment.
pub fn local_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_freedom-local"));
    for (url, token) in freedom_shared::config::KV_PAIRS {
        command.env_remove(url).env_remove(token);
    }
    command.env_remove("FF_KV_PREFIX");
    command
}

/// The data dir of a run whose files live in `home`: `<home>/data`, so
/// the key file (by default `<data-dir>.key`) lands in `home` too.
pub fn data_dir(home: &Path) -> std::path::PathBuf {
    home.join("data")
}

/// The key file of a run in `home`: `<home>/data.key`.
pub fn key_file(home: &Path) -> std::path::PathBuf {
    home.join("data.key")
}

/// Starts `freedom-local` on a free port with its files in `home` (the data
/// dir `<home>/data`, the key file beside it) and waits for its
/// "listening" line.
pub fn start(home: &Path) -> Running {
    start_with(home, &[]).0
}

/// Starts it with extra environment; also returns the "listening" line.
pub fn start_with(home: &Path, env: &[(&str, &str)]) -> (Running, String) {
    start_with_args(home, env, &[])
}

/// Starts it with extra environment and options.
pub fn start_with_args(home: &Path, env: &[(&str, &str)], args: &[&str]) -> (Running, String) {
    let mut child = local_command()
        .args(["--addr", "127.0.0.1:0", "--no-schedule", "--data-dir"])
        .arg(data_dir(home))
        .args(args)
        .env("FF_AGENT_WRITE_TOKEN", TOKEN)
        .env("RUST_LOG", "info")
        .envs(env.iter().copied())
        .stderr(Stdio::piped())
        .spawn()
        .expect("freedom-local starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut before = Vec::new();
    let (addr, listening) = loop {
        let Some(line) = lines.next() else {
            panic!("freedom-local stopped before listening: {before:#?}");
        };
        let line = line.unwrap();
        before.push(line.clone());
        if line.contains("freedom-local listening") {
            let at = line
                .find("addr=")
                .expect("the listening line names the address")
                + 5;
            break (
                line[at..].split_whitespace().next().unwrap().to_owned(),
                line,
            );
        }
    };
    // Keep draining the log so the child never blocks on a full pipe.
    let log = Arc::new(Mutex::new(before));
    let kept = Arc::clone(&log);
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            kept.lock().unwrap().push(line);
        }
    });
    let running = Running {
        child,
        base: format!("http://{addr}"),
        log,
    };
    (running, listening)
}

pub fn record(i: usize) -> Value {
    json!({
        "id": format!("rec-{i}"), "type": "snapshot", "visibility": "public", "mode": "paper",
        "strategyId": format!("strategy-{i}"), "strategyName": "Crash test",
        "asOf": "2026-05-04T16:00:00Z", "source": {"name": "test", "url": "https://example.com/t"},
        "currency": "USD", "equity": 1000 + i, "flowSincePrevious": 0
    })
}

pub async fn ledger(base: &str) -> Value {
    reqwest::get(format!("{base}/api/freedom-fund?view=ledger&limit=1000"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Stops it with SIGTERM and checks it exits cleanly.
pub fn stop(mut server: Running) {
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = server.child.wait().unwrap();
    assert!(
        exit.success(),
        "freedom-local exits cleanly on SIGTERM: {exit:?}"
    );
}

/// Starts it with its files in `home` and `env`, expecting start-up to
/// stop: its stderr.
pub fn refused_start(home: &Path, env: &[(&str, &str)]) -> String {
    refused_start_with_args(home, env, &[])
}

/// Starts it with extra options too, expecting start-up to stop.
pub fn refused_start_with_args(home: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
    let output = local_command()
        .args(["--addr", "127.0.0.1:0", "--no-schedule", "--data-dir"])
        .arg(data_dir(home))
        .args(args)
        .env("FF_AGENT_WRITE_TOKEN", TOKEN)
        .env("RUST_LOG", "off")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "start-up must stop: {stderr}");
    assert!(stderr.starts_with("freedom-local: "), "{stderr}");
    stderr
}
