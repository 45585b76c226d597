//! freedom-local never signs two histories with its key: the log remembers
//! the largest checkpoint it signed beside the key file, outside the data
//! dir (`<data-dir>.key.signed`), and in the store; a ledger that is gone
//! while it remembers one stops start-up naming the file; a ledger or a
//! whole data dir restored from an older backup is served but never
//! signed; a key from the environment on a fresh data dir signs nothing
//! non-empty until `--new-log`; and the key file and the memory are
//! checked before they are read.

mod support;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use support::{
    Running, TOKEN, data_dir, key_file, record, refused_start, refused_start_with_args, start,
    start_with, start_with_args, stop,
};

async fn append(server: &Running, i: usize) -> u16 {
    reqwest::Client::new()
        .post(format!("{}/api/freedom-fund", server.base))
        .bearer_auth(TOKEN)
        .json(&record(i))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn get(server: &Running, path: &str) -> (u16, String) {
    let response = reqwest::get(format!("{}{path}", server.base))
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// A ledger of `records` records whose checkpoint was served (so the log
/// remembers it), then stopped.
async fn signed_ledger(dir: &Path, records: std::ops::Range<usize>) {
    let server = start(dir);
    for i in records {
        assert_eq!(append(&server, i).await, 201);
    }
    let (status, checkpoint) = get(&server, "/log/checkpoint").await;
    assert_eq!(status, 200, "{checkpoint}");
    stop(server);
    let remembered = std::fs::read_to_string(dir.join("data.key.signed")).unwrap();
    assert_eq!(
        remembered, checkpoint,
        "the memory holds the served checkpoint"
    );
}

/// Copies the ledger's database files of the run in `from` over those of
/// the run in `to`.
fn copy_ledger(from: &Path, to: &Path) {
    let (from, to) = (&data_dir(from), &data_dir(to));
    std::fs::create_dir_all(to).unwrap();
    for name in ["ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm"] {
        let _ = std::fs::remove_file(to.join(name));
        if from.join(name).exists() {
            std::fs::copy(from.join(name), to.join(name)).unwrap();
        }
    }
}

#[tokio::test]
async fn a_missing_emptied_or_foreign_ledger_stops_start_up_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    signed_ledger(dir.path(), 0..3).await;
    let ledger = data_dir(dir.path()).join("ledger.sqlite3");
    let saved = tempfile::tempdir().unwrap();
    copy_ledger(dir.path(), saved.path());
    let cases: [(&str, &dyn Fn()); 3] = [
        ("is missing", &|| {
            for name in ["ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm"] {
                let _ = std::fs::remove_file(data_dir(dir.path()).join(name));
            }
        }),
        ("is an empty file", &|| {
            std::fs::write(&ledger, b"").unwrap();
        }),
        ("is not a ledger", &|| {
            std::fs::write(&ledger, b"a spreadsheet, not a database, of some length").unwrap();
        }),
    ];
    for (what, damage) in cases {
        copy_ledger(saved.path(), dir.path());
        for name in ["ledger.sqlite3-wal", "ledger.sqlite3-shm"] {
            let _ = std::fs::remove_file(data_dir(dir.path()).join(name));
        }
        damage();
        let stderr = refused_start(dir.path(), &[]);
        assert!(
            stderr.contains(&ledger.display().to_string()),
            "{what}: {stderr}"
        );
        assert!(stderr.contains(what), "{stderr}");
        assert!(stderr.contains("3 records"), "{stderr}");
        assert!(stderr.contains("data.key.signed"), "{stderr}");
    }
}

#[tokio::test]
async fn a_restored_older_ledger_is_served_but_never_signed() {
    let dir = tempfile::tempdir().unwrap();
    let backup = tempfile::tempdir().unwrap();
    signed_ledger(dir.path(), 0..2).await;
    copy_ledger(dir.path(), backup.path());
    signed_ledger_more(dir.path()).await;
    copy_ledger(backup.path(), dir.path());

    let server = start(dir.path());
    // Without a policy, start-up says once what a restored backup of the
    // key's folder could do, naming the memory's file.
    let warned = server
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|line| line.contains("the log has no witness policy"))
        .count();
    assert_eq!(warned, 1, "one warning at start-up");
    assert!(server.logged("data.key.signed"));
    for path in [
        "/log/checkpoint",
        "/api/freedom-fund?view=proof&seq=1",
        "/api/freedom-fund?view=consistency&from=1",
    ] {
        let (status, body) = get(&server, path).await;
        assert_eq!(status, 500, "{path}: {body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"]["code"], "internal_error");
    }
    assert!(server.logged("the log refuses to sign"));
    assert_eq!(append(&server, 10).await, 201, "appends go on");
    let (status, _) = get(&server, "/api/freedom-fund?view=ledger").await;
    assert_eq!(status, 200, "reads go on");
    let (status, page) = get(&server, "/").await;
    assert_eq!(status, 200);
    assert!(page.contains("refuses to sign"), "the page says so");
    let (status, _) = get(&server, "/log/tile/entries/000.p/3").await;
    assert_eq!(status, 200, "tiles go on");
    stop(server);
}

/// Two more records on top of the ledger in `dir`, signed.
async fn signed_ledger_more(dir: &Path) {
    signed_ledger(dir, 2..4).await;
}

// Multi-threaded: the bridge keeps answering while the test waits on a
// process that is starting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_kv_store_a_flushed_database_or_a_new_prefix_stops_start_up() {
    let redis = freedom_testkit::redis_server::RedisServer::start().unwrap();
    let kv_token = "kv-bridge-secret-value";
    let bridge = freedom_testkit::upstash_bridge::UpstashBridge::start(&redis.url(), kv_token)
        .await
        .unwrap();
    let env = [
        ("FF_KV_REST_API_URL", bridge.url()),
        ("FF_KV_REST_API_TOKEN", kv_token),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = start_with(dir.path(), &env);
    for i in 0..3 {
        assert_eq!(append(&server, i).await, 201);
    }
    assert_eq!(get(&server, "/log/checkpoint").await.0, 200);
    // Flushed while it runs: the next checkpoint is refused.
    let _: () = redis::cmd("FLUSHALL")
        .query_async(&mut bridge.redis())
        .await
        .unwrap();
    assert_eq!(append(&server, 7).await, 201);
    assert_eq!(get(&server, "/log/checkpoint").await.0, 500);
    stop(server);

    let _: () = redis::cmd("FLUSHALL")
        .query_async(&mut bridge.redis())
        .await
        .unwrap();
    let stderr = refused_start(dir.path(), &env);
    assert!(stderr.contains("holds no ledger"), "{stderr}");
    assert!(stderr.contains("KV REST store"), "{stderr}");
    let mut other_prefix = env.to_vec();
    other_prefix.push(("FF_KV_PREFIX", "new:"));
    let stderr = refused_start(dir.path(), &other_prefix);
    assert!(stderr.contains("new:"), "{stderr}");
    assert!(!stderr.contains(kv_token), "never the token");
}

#[test]
fn a_key_file_that_is_not_a_small_private_regular_file_stops_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let key = key_file(dir.path());
    let fifo = std::process::Command::new("mkfifo")
        .arg(&key)
        .status()
        .unwrap();
    assert!(fifo.success());
    let stderr = refused_start(dir.path(), &[]);
    assert!(stderr.contains("is not a regular file"), "{stderr}");

    std::fs::remove_file(&key).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &key).unwrap();
    let stderr = refused_start(dir.path(), &[]);
    assert!(stderr.contains("is not a regular file"), "{stderr}");

    std::fs::remove_file(&key).unwrap();
    std::fs::write(&key, vec![b'A'; 5000]).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let stderr = refused_start(dir.path(), &[]);
    assert!(stderr.contains("is larger than a key"), "{stderr}");

    std::fs::write(&key, b"PRIVATE+KEY+x").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let stderr = refused_start(dir.path(), &[]);
    assert!(stderr.contains("readable by group or others"), "{stderr}");
    assert!(stderr.contains(&key.display().to_string()), "{stderr}");
}

/// SIGTERM during a scanner run releases the run's lock before the process
/// exits: a restarted freedom-local runs the scanner at once (the lock used
/// to stay held for its 5-minute expiry, so runs answered 409).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_scanner_run_releases_the_lock() {
    use freedom_testkit::provider_standin::{Fault, Provider, ProviderStandIn, fixture_tokens};
    let stand_in = ProviderStandIn::start(fixture_tokens()).await.unwrap();
    let env = stand_in.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let dir = tempfile::tempdir().unwrap();
    stand_in.fail_always(Provider::DexScreener, Some(Fault::Hang));
    let (server, _) = start_with(dir.path(), &env);
    let run = tokio::spawn(
        reqwest::Client::new()
            .post(format!("{}/api/freedom-scanner", server.base))
            .bearer_auth(TOKEN)
            .send(),
    );
    let started = std::time::Instant::now();
    while stand_in.requests(Provider::DexScreener) == 0 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the run never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    stop(server);
    let _ = run.await;
    stand_in.fail_always(Provider::DexScreener, None);
    let (server, _) = start_with(dir.path(), &env);
    let response = reqwest::Client::new()
        .post(format!("{}/api/freedom-scanner", server.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
    stop(server);
}

/// The log's key as the environment gives it (`FF_LOG_SIGNING_KEY`).
fn environment_key() -> String {
    freedom_shared::tlog::note::SigningKey::from_seed("custody.example/log", [42; 32])
        .unwrap()
        .to_private_text()
}

/// The signing views all refuse (500 `internal_error`); reads, tiles and
/// appends go on.
async fn signs_nothing(server: &Running, next_record: usize) {
    for path in [
        "/log/checkpoint",
        "/log/checkpoint?head=1",
        "/api/freedom-fund?view=proof&seq=1",
        "/api/freedom-fund?view=consistency&from=1",
    ] {
        let (status, body) = get(server, path).await;
        assert_eq!(status, 500, "{path}: {body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"]["code"], "internal_error");
    }
    assert!(server.logged("the log refuses to sign"));
    assert_eq!(get(server, "/api/freedom-fund?view=ledger").await.0, 200);
    assert_eq!(get(server, "/log/tile/entries/000.p/1").await.0, 200);
    assert_eq!(append(server, next_record).await, 201, "appends go on");
}

/// Finding 1: the memory follows the key, not the data dir. A key from the
/// environment with no memory anywhere signs nothing non-empty until
/// `--new-log` says this key signed nothing else; a second data dir with
/// the same key (a new container, another working directory) never gets a
/// second tree signed.
#[tokio::test]
async fn a_key_from_the_environment_on_a_fresh_data_dir_signs_only_when_told_new_log() {
    let key = environment_key();
    let env = [("FF_LOG_SIGNING_KEY", key.as_str())];
    let home = tempfile::tempdir().unwrap();
    let (server, _) = start_with(home.path(), &env);
    assert!(
        server.logged("--new-log"),
        "start-up says what it waits for"
    );
    assert_eq!(
        get(&server, "/log/checkpoint").await.0,
        200,
        "the empty tree"
    );
    for i in 0..2 {
        assert_eq!(append(&server, i).await, 201);
    }
    signs_nothing(&server, 2).await;
    stop(server);

    let (server, _) = start_with_args(home.path(), &env, &["--new-log"]);
    let (status, checkpoint) = get(&server, "/log/checkpoint").await;
    assert_eq!(status, 200, "{checkpoint}");
    assert!(checkpoint.contains("\n3\n"), "{checkpoint}");
    stop(server);

    let stderr = refused_start_with_args(home.path(), &env, &["--new-log"]);
    assert!(stderr.contains("drop --new-log"), "{stderr}");
    assert!(stderr.contains("3 records"), "{stderr}");
    let (server, _) = start_with(home.path(), &env);
    assert_eq!(append(&server, 3).await, 201);
    assert_eq!(get(&server, "/log/checkpoint").await.0, 200);
    stop(server);

    // The same key on a fresh data dir: another tree of the same size is
    // appended and never signed.
    let other = tempfile::tempdir().unwrap();
    let (server, _) = start_with(other.path(), &env);
    for i in 10..14 {
        assert_eq!(append(&server, i).await, 201);
    }
    signs_nothing(&server, 14).await;
    stop(server);
}

/// Finding 2: a whole data dir restored from an older backup, grown again
/// with other records, is served but never signed: the memory beside the
/// key, outside the data dir, was not restored with it. With the key from
/// a file and from the environment.
#[tokio::test]
async fn a_whole_data_dir_restored_from_a_backup_is_served_but_never_signed() {
    let key = environment_key();
    let from_environment = [("FF_LOG_SIGNING_KEY", key.as_str())];
    for env in [&[][..], &from_environment[..]] {
        let home = tempfile::tempdir().unwrap();
        let args: &[&str] = if env.is_empty() { &[] } else { &["--new-log"] };
        let (server, _) = start_with_args(home.path(), env, args);
        for i in 0..2 {
            assert_eq!(append(&server, i).await, 201);
        }
        assert_eq!(get(&server, "/log/checkpoint").await.0, 200);
        stop(server);
        let data = data_dir(home.path());
        let backup = home.path().join("data.bak");
        copy_dir(&data, &backup);

        let (server, _) = start_with(home.path(), env);
        for i in 2..4 {
            assert_eq!(append(&server, i).await, 201);
        }
        assert_eq!(get(&server, "/log/checkpoint").await.0, 200);
        stop(server);

        std::fs::remove_dir_all(&data).unwrap();
        copy_dir(&backup, &data);
        let (server, _) = start_with(home.path(), env);
        for i in 20..22 {
            assert_eq!(append(&server, i).await, 201);
        }
        signs_nothing(&server, 22).await;
        stop(server);
    }
}

/// `cp -a`: every file of `from` into `to` (created), recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Finding 7: a memory file that is not a regular file (a FIFO would block
/// the read for ever) stops start-up naming it.
#[test]
fn a_memory_file_that_is_not_a_regular_file_stops_start_up() {
    let home = tempfile::tempdir().unwrap();
    let key = environment_key();
    let memory = home.path().join("data.key.signed");
    let fifo = std::process::Command::new("mkfifo")
        .arg(&memory)
        .status()
        .unwrap();
    assert!(fifo.success());
    let stderr = refused_start(home.path(), &[("FF_LOG_SIGNING_KEY", key.as_str())]);
    assert!(stderr.contains("is not a regular file"), "{stderr}");
    assert!(stderr.contains("data.key.signed"), "{stderr}");
}
