//! Several processes contending for the scanner lock, on the embedded store
//! (one data dir) and on the KV REST store (one bridge): exactly one holds it;
//! the holder's fenced write and release succeed; then it is free again.

use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::upstash_bridge::UpstashBridge;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const CONTENDERS: usize = 6;

fn contender(data_dir: &Path, env: &[(&str, &str)]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lock-contender"));
    for (url, token) in freedom_shared::config::KV_PAIRS {
        command.env_remove(url).env_remove(token);
    }
    command
        .arg(data_dir)
        .arg("60000")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("lock-contender runs")
}

type Lines = std::io::Lines<BufReader<std::process::ChildStdout>>;

fn first_line(child: &mut Child) -> (String, Lines) {
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    (first, lines)
}

/// Runs one round of contention; returns after the holder has released.
fn contend(data_dir: &Path, env: &[(&str, &str)]) {
    let mut children: Vec<Child> = (0..CONTENDERS).map(|_| contender(data_dir, env)).collect();
    let mut holder = None;
    for (index, child) in children.iter_mut().enumerate() {
        let (first, rest) = first_line(child);
        match first.as_str() {
            "acquired" => {
                assert!(holder.is_none(), "two processes hold the lock");
                holder = Some((index, rest));
            }
            "busy" => {}
            other => panic!("unexpected answer {other:?}"),
        }
    }
    let (index, mut rest) = holder.expect("one process holds the lock");
    drop(children[index].stdin.take());
    let mut next = || rest.next().and_then(Result::ok);
    assert_eq!(next().as_deref(), Some("written"));
    assert_eq!(next().as_deref(), Some("released"));
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
}

#[test]
fn processes_sharing_a_data_dir_take_the_lock_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    contend(dir.path(), &[]);
    contend(dir.path(), &[]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_sharing_a_kv_store_take_the_lock_one_at_a_time() {
    let server = RedisServer::start().unwrap();
    let bridge = UpstashBridge::start(&server.url(), "lock-test-token")
        .await
        .unwrap();
    let url = bridge.url().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let rounds = tokio::task::spawn_blocking(move || {
        let env = [
            ("FF_KV_REST_API_URL", url.as_str()),
            ("FF_KV_REST_API_TOKEN", "lock-test-token"),
        ];
        contend(dir.path(), &env);
        contend(dir.path(), &env);
    });
    rounds.await.unwrap();
}
