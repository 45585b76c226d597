//! Load test of freedom-local's listener against slow clients, on loopback.
//!
//! ```text
//! slow-clients <freedom-local binary> [half-open connections, default 2000]
//! ```
//!
//! Starts freedom-local on a fresh data dir, appends a few records, then:
//! 1. measures normal GETs of the dashboard (median and worst of 50) and the
//!    server's resident memory (VmRSS);
//! 2. opens the half-open connections, each having sent part of a request
//!    head and nothing more, and while they are all open measures the same
//!    GETs again (every one must answer 200) and the memory;
//! 3. waits for the server to answer each of them `408` (its request-head
//!    timeout) and measures the memory after;
//! 4. opens them again and sends SIGTERM: the time until the process exits.
//!
//! Prints a Markdown table for docs/performance.md; exits non-zero if a
//! normal GET fails or the memory passes 100 MB. `scripts/bench-slow-clients`
//! builds freedom-local in release and runs this.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TOKEN: &str = "slow-clients-bench-token-0123456789";
const GETS: usize = 50;
const RSS_LIMIT_KIB: u64 = 100 * 1024;

/// Resident memory of `pid` (KiB) from /proc: (current, peak).
fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn start(binary: &str, data_dir: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(binary)
        .args(["--addr", "127.0.0.1:0", "--no-schedule", "--data-dir"])
        .arg(data_dir)
        .env("FF_AGENT_WRITE_TOKEN", TOKEN)
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .expect("freedom-local starts");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let addr = loop {
        let line = lines.next().expect("a listening line").expect("log line");
        if let Some(at) = line.find("addr=") {
            break line[at + 5..]
                .split_whitespace()
                .next()
                .expect("address")
                .to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

/// One GET of the dashboard on a fresh connection: its time, or why it failed.
async fn get(addr: &str) -> Result<Duration, String> {
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    stream
        .write_all(b"GET /api/freedom-fund HTTP/1.1\r\nhost: bench\r\nconnection: close\r\n\r\n")
        .await
        .map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer))
        .await
        .map_err(|_| "no answer within 30 s".to_owned())?
        .map_err(|e| e.to_string())?;
    if answer.starts_with(b"HTTP/1.1 200") {
        Ok(started.elapsed())
    } else {
        Err(String::from_utf8_lossy(&answer[..answer.len().min(80)]).into_owned())
    }
}

/// Median and worst of `GETS` sequential GETs; fails on any error.
async fn gets(addr: &str) -> Result<(Duration, Duration), String> {
    let mut times = Vec::with_capacity(GETS);
    for _ in 0..GETS {
        times.push(get(addr).await?);
    }
    times.sort();
    Ok((times[GETS / 2], times[GETS - 1]))
}

async fn half_open(addr: &str, count: usize) -> Vec<TcpStream> {
    let mut streams = Vec::with_capacity(count);
    for _ in 0..count {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(b"GET /api/freedom-fund HTTP/1.1\r\nhost: bench\r\nx-slow: ")
            .await
            .expect("partial head");
        streams.push(stream);
    }
    streams
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn mb(kib: u64) -> String {
    format!("{:.1} MB", kib as f64 / 1024.0)
}

// Long: the measurement as one script, step after step, as docs/performance.md reports it.
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let binary = args
        .next()
        .ok_or("usage: slow-clients <freedom-local> [connections]")?;
    let count: usize = args.next().map_or(Ok(2000), |n| n.parse())?;
    // This process holds `count` sockets too.
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let dir = tempfile::tempdir()?;
    let (mut child, addr) = start(&binary, &dir.path().join("data"));
    let pid = child.id();

    let client = reqwest::Client::new();
    for i in 0..20 {
        let record = serde_json::json!({
            "id": format!("bench-{i}"), "type": "snapshot", "visibility": "public", "mode": "live",
            "strategyId": format!("s{}", i % 4), "strategyName": "Bench",
            "asOf": format!("2026-05-{:02}T20:00:00Z", 4 + i / 4),
            "source": {"name": "bench", "url": "https://example.com/b"},
            "currency": "USD", "equity": 1000 + i, "flowSincePrevious": 0
        });
        let status = client
            .post(format!("http://{addr}/api/freedom-fund"))
            .bearer_auth(TOKEN)
            .json(&record)
            .send()
            .await?
            .status();
        if status != 201 {
            return Err(format!("seeding answered {status}").into());
        }
    }

    let (quiet_median, quiet_worst) = gets(&addr).await?;
    let (quiet_rss, _) = rss_kib(pid);

    let opened = Instant::now();
    let streams = half_open(&addr, count).await;
    let open_time = opened.elapsed();
    let (busy_median, busy_worst) = gets(&addr).await?;
    let (busy_rss, _) = rss_kib(pid);

    // Every half-open connection is answered 408 at the head timeout.
    let mut answered_408 = 0;
    let mut reads = tokio::task::JoinSet::new();
    for mut stream in streams {
        reads.spawn(async move {
            let mut answer = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut answer))
                .await;
            answer.starts_with(b"HTTP/1.1 408")
        });
    }
    while let Some(got) = reads.join_next().await {
        answered_408 += usize::from(got.unwrap_or(false));
    }
    let closed_after = opened.elapsed();
    let (after_rss, peak_rss) = rss_kib(pid);

    let streams = half_open(&addr, count).await;
    let term = Instant::now();
    Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()?;
    let exit = tokio::task::spawn_blocking(move || child.wait()).await??;
    let shutdown = term.elapsed();
    drop(streams);

    println!("| measure | value |");
    println!("|---|---|");
    println!(
        "| normal GET, no other clients (median / worst of {GETS}) | {} / {} |",
        ms(quiet_median),
        ms(quiet_worst)
    );
    println!(
        "| normal GET with {count} half-open connections (median / worst of {GETS}) | {} / {} |",
        ms(busy_median),
        ms(busy_worst)
    );
    println!(
        "| opening the {count} half-open connections | {} |",
        ms(open_time)
    );
    println!(
        "| half-open connections answered 408 and closed | {answered_408} of {count}, {:.1} s after opening |",
        closed_after.as_secs_f64()
    );
    println!(
        "| server RSS: idle / with {count} half-open / after they closed / peak | {} / {} / {} / {} |",
        mb(quiet_rss),
        mb(busy_rss),
        mb(after_rss),
        mb(peak_rss)
    );
    println!(
        "| SIGTERM to exit with {count} half-open connections | {} ({exit}) |",
        ms(shutdown)
    );

    if peak_rss > RSS_LIMIT_KIB {
        return Err(format!("peak RSS {} is over 100 MB", mb(peak_rss)).into());
    }
    if answered_408 != count || !exit.success() {
        return Err("not every half-open connection was answered 408, or the exit failed".into());
    }
    Ok(())
}
