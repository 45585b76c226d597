//! `freedom-verify` against a real fund service on a loopback port: an
//! honest log verifies, and each way a log can lie is caught and named: a
//! changed hash tile, a changed entry, a record changed in the store, a
//! ledger view that shows another record, a checkpoint signed by another
//! key, a rolled-back tree, a forked tree (another history at the same
//! size); and offline, a `.tlog-proof` for another record or key.

mod support;

use freedom_shared::ports::Candidate;
use freedom_shared::tlog::note::SigningKey;
use freedom_verify::{Failure, Service, verify_log, verify_proof_file};
use support::*;

async fn verify(
    running: &Running,
    verifier: SigningKey,
    state: Option<&std::path::Path>,
) -> Result<String, Failure> {
    let service = Service::new(&running.base).unwrap();
    verify_log(&service, &verifier.verifier(), state, None)
        .await
        .map(|v| v.0)
}

fn discrepancy(result: Result<String, Failure>) -> String {
    match result {
        Err(Failure::Discrepancy(line)) => line,
        other => panic!("expected a discrepancy, got {other:?}"),
    }
}

/// What freedom-verify, holding key 1 and no state, says of a log of
/// `candidates` signed with `signing` and served through `tamper`.
async fn discrepancy_in(
    candidates: Vec<Candidate>,
    signing: SigningKey,
    tamper: Option<Tamper>,
) -> String {
    let running = serve(candidates, signing, tamper).await;
    discrepancy(verify(&running, key(1), None).await)
}

fn flip_byte(at: usize) -> impl Fn(Vec<u8>) -> Vec<u8> {
    move |mut bytes| {
        bytes[at] ^= 1;
        bytes
    }
}

#[tokio::test]
async fn an_honest_log_verifies_and_then_extends_the_checkpoint_kept() {
    let running = serve(records("d", 300), key(1), None).await;
    let state = running.dir.path().join("state.json");
    let line = verify(&running, key(1), Some(&state)).await.unwrap();
    assert!(
        line.starts_with("OK fund.example.com/log size 300 "),
        "{line}"
    );
    // A second run against the same tree, and against a longer one.
    assert!(
        verify(&running, key(1), Some(&state))
            .await
            .unwrap()
            .contains("consistent with the checkpoint kept (size 300)")
    );
    let longer = serve(records("d", 310), key(1), None).await;
    let line = verify(&longer, key(1), Some(&state)).await.unwrap();
    assert!(
        line.contains("size 310") && line.contains("(size 300)"),
        "{line}"
    );
}

#[tokio::test]
async fn a_changed_hash_tile_is_caught() {
    let tamper = Tamper {
        path_and_query_prefix: "/log/tile/0/000",
        exact: false,
        change: std::sync::Arc::new(|b| flip_byte(40)(b)),
    };
    let line = discrepancy_in(records("d", 300), key(1), Some(tamper)).await;
    assert!(line.contains("hash tile 0/000 differs"), "{line}");
}

#[tokio::test]
async fn a_changed_entry_is_caught() {
    let tamper = Tamper {
        path_and_query_prefix: "/log/tile/entries/001",
        exact: false,
        change: std::sync::Arc::new(|b| flip_byte(30)(b)),
    };
    let line = discrepancy_in(records("d", 300), key(1), Some(tamper)).await;
    assert!(
        line.contains("do not hash to the checkpoint's root"),
        "{line}"
    );
}

/// A record changed in the store behind the ledger's back is never served
/// (it does not hash to its leaf): the entry tile answers 500, and the
/// verifier, which cannot read it, never says OK. (A changed entry served
/// anyway is `a_changed_entry_is_caught`.)
#[tokio::test]
async fn a_record_changed_in_the_store_is_never_served_and_never_verified() {
    let running = serve(records("d", 40), key(1), None).await;
    let database = rusqlite::Connection::open(running.dir.path().join("ledger.sqlite3")).unwrap();
    database
        .execute(
            "UPDATE records SET canonical = replace(canonical, 'decision d7', 'decision d8') WHERE seq = 8",
            [],
        )
        .unwrap();
    match verify(&running, key(1), None).await {
        Err(Failure::CannotCheck(line)) => assert!(line.contains("500"), "{line}"),
        other => panic!("an altered record must not verify: {other:?}"),
    }
}

#[tokio::test]
async fn a_ledger_view_showing_another_record_is_caught() {
    let tamper = Tamper {
        path_and_query_prefix: "/api/freedom-fund?view=ledger",
        exact: false,
        change: std::sync::Arc::new(|bytes| {
            String::from_utf8(bytes)
                .unwrap()
                .replacen("decision d3\"", "decision d4\"", 1)
                .into_bytes()
        }),
    };
    let line = discrepancy_in(records("d", 40), key(1), Some(tamper)).await;
    assert_eq!(line, "record 4 in the ledger view is not the logged entry");
}

#[tokio::test]
async fn a_checkpoint_signed_by_another_key_is_caught() {
    let line = discrepancy_in(records("d", 10), key(2), None).await;
    assert!(line.starts_with("the checkpoint does not verify"), "{line}");
}

#[tokio::test]
async fn a_rolled_back_or_forked_tree_is_caught_against_the_checkpoint_kept() {
    let first = serve(records("d", 30), key(1), None).await;
    let state = first.dir.path().join("state.json");
    verify(&first, key(1), Some(&state)).await.unwrap();
    let kept = std::fs::read(&state).unwrap();

    let rolled_back = serve(records("d", 20), key(1), None).await;
    let line = discrepancy(verify(&rolled_back, key(1), Some(&state)).await);
    assert!(line.starts_with("the log was rolled back"), "{line}");
    assert_eq!(
        std::fs::read(&state).unwrap(),
        kept,
        "a failed run keeps the old state"
    );

    // Another history of the same size, signed by the same key.
    let forked = serve(records("other", 30), key(1), None).await;
    let line = discrepancy(verify(&forked, key(1), Some(&state)).await);
    assert!(line.starts_with("the log forked"), "{line}");
    let forked_longer = serve(records("other", 35), key(1), None).await;
    let line = discrepancy(verify(&forked_longer, key(1), Some(&state)).await);
    assert!(line.starts_with("the log forked"), "{line}");
}

#[tokio::test]
async fn a_tlog_proof_verifies_offline_for_its_record_only() {
    let candidates = records("d", 25);
    let running = serve(candidates.clone(), key(1), None).await;
    let proof = reqwest::get(format!(
        "{}api/freedom-fund?view=proof&seq=9&format=tlog-proof",
        running.base
    ))
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    // The record as a reader might save it: pretty-printed, keys reordered.
    let record: serde_json::Value = serde_json::from_str(&candidates[8].canonical).unwrap();
    let pretty = serde_json::to_vec_pretty(&record).unwrap();
    let line = verify_proof_file(&proof, &key(1).verifier(), &pretty, None)
        .unwrap()
        .0;
    assert!(
        line.starts_with("OK record seq 9 is in fund.example.com/log at size 25"),
        "{line}"
    );
    let other = candidates[9].canonical.as_bytes();
    assert!(matches!(
        verify_proof_file(&proof, &key(1).verifier(), other, None),
        Err(Failure::Discrepancy(_))
    ));
    assert!(matches!(
        verify_proof_file(&proof, &key(2).verifier(), &pretty, None),
        Err(Failure::Discrepancy(_))
    ));
    // A record file that names a member twice is not one record: a reader
    // sees the first value, a JSON library keeps the last. It is refused,
    // even when its last values are the logged record's.
    let canonical = &candidates[8].canonical;
    let doubled = format!("{{\"id\":\"not-this-one\",{}", &canonical[1..]);
    match verify_proof_file(&proof, &key(1).verifier(), doubled.as_bytes(), None) {
        Err(Failure::CannotCheck(message)) => {
            assert!(message.contains("\"id\" twice"), "{message}")
        }
        other => panic!("a record file with a duplicate key must be refused: {other:?}"),
    }

    // Files of another shape are not failing proofs: a ledger entry given
    // as the record, or the JSON proof view given as the .tlog-proof, cannot
    // be checked (exit 2) and the hint names the right file.
    let entry = format!(
        "{{\"seq\":9,\"leafHash\":\"00\",\"record\":{}}}",
        candidates[8].canonical
    );
    match verify_proof_file(&proof, &key(1).verifier(), entry.as_bytes(), None) {
        Err(Failure::CannotCheck(message)) => {
            assert!(message.contains("ledger entry"), "{message}")
        }
        other => panic!("a ledger entry is not the record: {other:?}"),
    }
    let json_view = format!("{{\"seq\":9,\"proof\":{:?}}}", proof);
    match verify_proof_file(&json_view, &key(1).verifier(), &pretty, None) {
        Err(Failure::CannotCheck(message)) => {
            assert!(message.contains("format=tlog-proof"), "{message}")
        }
        other => panic!("a JSON document is not a .tlog-proof: {other:?}"),
    }

    // The binary: one line, and the exit code says which.
    let dir = tempfile::tempdir().unwrap();
    let proof_file = dir.path().join("9.tlog-proof");
    let record_file = dir.path().join("9.json");
    std::fs::write(&proof_file, &proof).unwrap();
    std::fs::write(&record_file, &pretty).unwrap();
    let binary = env!("CARGO_BIN_EXE_freedom-verify");
    let verifier_text = key(1).verifier().to_text();
    let check_offline = || {
        std::process::Command::new(binary)
            .arg("proof")
            .arg(&proof_file)
            .args(["--key", &verifier_text, "--record"])
            .arg(&record_file)
            .output()
            .unwrap()
    };
    let ok = check_offline();
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&ok.stdout).lines().count(), 1);
    std::fs::write(&record_file, other).unwrap();
    let failed = check_offline();
    assert_eq!(failed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failed.stderr).starts_with("FAILED: "));
    let online = tokio::task::spawn_blocking(move || {
        std::process::Command::new(binary)
            .args([running.base.as_str(), "--key", &verifier_text])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(
        online.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&online.stderr)
    );
}
