//! `freedom-witness`'s key file: made on first start with `--algorithm`,
//! kept after; asking for another algorithm than the file's is refused with
//! a sentence, and the key is left as it was.

use std::process::Command;

const LOG_KEY: &str = "monkeys+db4d9f7e+AULaJMvTtDLHPUcUrjdDad9vDlh/PTfC2VV60JUtCfWT";

fn print_key(dir: &std::path::Path, algorithm: &str) -> std::process::Output {
    let config = dir.join("witness.conf");
    std::fs::write(&config, format!("log {LOG_KEY}\n")).unwrap();
    Command::new(env!("CARGO_BIN_EXE_freedom-witness"))
        .args(["--config", config.to_str().unwrap(), "--data-dir"])
        .arg(dir.join("data"))
        .args([
            "--name",
            "pq.example",
            "--algorithm",
            algorithm,
            "--print-key",
        ])
        .output()
        .unwrap()
}

#[test]
fn the_key_is_made_with_its_algorithm_and_another_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let made = print_key(dir.path(), "ml-dsa-44");
    assert!(made.status.success(), "{made:?}");
    let vkey = String::from_utf8(made.stdout).unwrap();
    let key = freedom_tlog::cosignature::WitnessKey::parse(&vkey).unwrap();
    assert_eq!(key.key_type(), freedom_tlog::cosignature::ML_DSA_44);
    let file = std::fs::read(dir.path().join("data/witness.key")).unwrap();

    let again = print_key(dir.path(), "ml-dsa-44");
    assert_eq!(String::from_utf8(again.stdout).unwrap(), vkey, "kept");
    let other = print_key(dir.path(), "ed25519");
    assert_eq!(other.status.code(), Some(1));
    let said = String::from_utf8(other.stderr).unwrap();
    assert!(
        said.contains("holds a MlDsa44 key, not the Ed25519 key"),
        "{said}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("data/witness.key")).unwrap(),
        file
    );
    let unknown = print_key(dir.path(), "rsa");
    assert_eq!(unknown.status.code(), Some(2), "clap refuses it");
}
