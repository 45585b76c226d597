//! freedom-witness against implementations it shares no code with: the Go
//! reference witness's test vectors (transparency-dev/witness,
//! `witness/witness_test.go`: the "monkeys" log's key and two checkpoints
//! it signed, the consistency proof between them, the witness key), and
//! Cloudflare's `signed_note` crate (the published note parser and key ID
//! of the azul project) verifying the cosignatures it makes. azul's
//! `tlog_cosignature` crate is not published, so its `cosignature/v1`
//! verification (a dozen lines over `signed_note`'s `Verifier` trait) is
//! restated here, as it reads there.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::Verifier as _;
use freedom_shared::tlog::cosignature::{CosignerKey, WitnessKey};
use freedom_witness::{TrustedLogs, Witness, WitnessState, app};

/// From transparency-dev/witness, `witness/witness_test.go`.
const LOG_KEY: &str = "monkeys+db4d9f7e+AULaJMvTtDLHPUcUrjdDad9vDlh/PTfC2VV60JUtCfWT";
const WITNESS_PRIVATE: &str =
    "PRIVATE+KEY+witness+f13a86db+AaLa/dfyBhyo/m0Z7WCi98ENVZWtrP8pxgRNrx7tIWiA";
const WITNESS_PUBLIC: &str = "witness+f13a86db+AdYV1Ztajd9BvyjP2HgpwrqYL6TjOwIjGMOq8Bu42xbN";
const INIT: &str = "monkeys\n5\n41smjBUiAU70EtKlT6lIOIYtRTYxYXsDB+XHfcvu/BE=\n\n\u{2014} monkeys 202fftzGl3LVoqjXfwCFZZXs8I+5G22+Ek2K0AOyBuSJ/8/CZawNF+6fNlTKOCd622pbzJNkkJFWuw9DbicZCkEx9AY=\n";
const NEXT: &str = "monkeys\n8\nV8K9aklZ4EPB+RMOk1/8VsJUdFZR77GDtZUQq84vSbo=\n\n\u{2014} monkeys 202ffoUEboiQYpHzICeaFmoy3RNviHTpAxYrq/eO4QQVQMvu9UebKBMX2MJC76NLthZaKsnKbCA8GxrjePZhvDCH7Ag=\n";
const PROOF_5_TO_8: [&str; 4] = [
    "b9e1d62618f7fee8034e4c5010f727ab24d8e4705cb296c374bf2025a87a10d2",
    "aac66cd7a79ce4012d80762fe8eec3a77f22d1ca4145c3f4cee022e7efcd599d",
    "89d0f753f66a290c483b39cd5e9eafb12021293395fad3d4a2ad053cfbcfdc9e",
    "29e40bb79c966f4c6fe96aff6f30acfce5f3e8d84c02215175d6e018a5dee833",
];

/// azul's `CosignatureV1NoteVerifier::verify`, over `signed_note`'s trait.
struct CosignatureV1 {
    name: String,
    id: u32,
    key: ed25519_dalek::VerifyingKey,
}

impl CosignatureV1 {
    fn new(name: &str, key: ed25519_dalek::VerifyingKey) -> CosignatureV1 {
        let mut typed = vec![0x04];
        typed.extend_from_slice(key.as_bytes());
        CosignatureV1 {
            name: name.to_owned(),
            id: signed_note::key_id(name, &typed),
            key,
        }
    }
}

impl signed_note::Verifier for CosignatureV1 {
    fn name(&self) -> &str {
        &self.name
    }

    fn key_id(&self) -> u32 {
        self.id
    }

    fn verify(&self, msg: &[u8], sig: &[u8]) -> bool {
        let Some((timestamp, signature)) = sig.split_first_chunk::<8>() else {
            return false;
        };
        let Ok(signature) = ed25519_dalek::Signature::from_slice(signature) else {
            return false;
        };
        let mut message =
            format!("cosignature/v1\ntime {}\n", u64::from_be_bytes(*timestamp)).into_bytes();
        message.extend_from_slice(msg);
        self.key.verify(&message, &signature).is_ok()
    }
}

fn witness_verifying_key() -> ed25519_dalek::VerifyingKey {
    let bytes = BASE64
        .decode(WITNESS_PUBLIC.rsplit('+').next().unwrap())
        .unwrap();
    ed25519_dalek::VerifyingKey::from_bytes(bytes[1..].try_into().unwrap()).unwrap()
}

struct Running {
    base: String,
    _dir: tempfile::TempDir,
}

async fn start() -> Running {
    start_with(CosignerKey::parse(WITNESS_PRIVATE).unwrap()).await
}

async fn start_with(key: CosignerKey) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let witness = Witness::new(
        key,
        TrustedLogs::parse(&format!("# the Go reference's test log\nlog {LOG_KEY}\n")).unwrap(),
        WitnessState::open(&dir.path().join("witness.sqlite3")).unwrap(),
    );
    let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", socket.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(socket, app(witness)).await });
    Running { base, _dir: dir }
}

async fn add(base: &str, body: String) -> (u16, Option<String>, String) {
    let answer = reqwest::Client::new()
        .post(format!("{base}/add-checkpoint"))
        .body(body)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    let content_type = answer
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, content_type, answer.text().await.unwrap())
}

fn proof_lines(hexes: &[&str]) -> String {
    hexes
        .iter()
        .map(|h| format!("{}\n", BASE64.encode(hex_bytes(h))))
        .collect()
}

fn hex_bytes(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// Opens `checkpoint` with the cosignature `line` appended, with
/// Cloudflare's `signed_note` and the witness's key alone.
fn verified_by_signed_note(checkpoint: &str, line: &str) -> bool {
    let note = signed_note::Note::from_bytes(format!("{checkpoint}{line}").as_bytes()).unwrap();
    let verifiers = signed_note::VerifierList::new(vec![Box::new(CosignatureV1::new(
        "witness",
        witness_verifying_key(),
    ))]);
    match note.verify(&verifiers) {
        Ok((verified, _unknown)) => verified.len() == 1,
        Err(_) => false,
    }
}

/// Runs `scripts/mldsa-cosignature.py` (OpenSSL's ML-DSA through Python's
/// `cryptography`) with `args` and `input`: its exit status and output.
fn other_ml_dsa(args: &[&str], input: &str) -> (bool, String) {
    use std::io::Write as _;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/mldsa-cosignature.py"
    );
    let mut child = std::process::Command::new("python3")
        .arg(script)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs (scripts/test installs cryptography)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

/// freedom-witness with an ML-DSA-44 key (`--algorithm ml-dsa-44`) cosigns
/// the reference checkpoint; another implementation (OpenSSL's ML-DSA)
/// verifies that cosignature and refuses it over another checkpoint; and a
/// cosignature the other implementation makes verifies here, under the
/// verifier key it derived from its own seed.
#[tokio::test]
async fn ml_dsa_44_cosignatures_verify_across_two_implementations() {
    use freedom_shared::tlog::cosignature::Algorithm;
    let key = CosignerKey::from_seed_of(Algorithm::MlDsa44, "pq.example", [9; 32]).unwrap();
    let vkey = key.witness_key().to_text();
    let witness = start_with(key).await;
    let (status, _, line) = add(&witness.base, format!("old 0\n\n{INIT}")).await;
    assert_eq!(status, 200, "{line}");
    let checkpoint = &INIT[..INIT.find("\n\n").unwrap() + 1];
    let (verified, _) = other_ml_dsa(&["verify", &vkey], &format!("{checkpoint}\n{line}"));
    assert!(
        verified,
        "OpenSSL's ML-DSA verifies freedom-witness's cosignature"
    );
    let other = &NEXT[..NEXT.find("\n\n").unwrap() + 1];
    let (verified, _) = other_ml_dsa(&["verify", &vkey], &format!("{other}\n{line}"));
    assert!(!verified, "not over another checkpoint");

    let seed = "5a".repeat(32);
    let (made, output) = other_ml_dsa(&["sign", "pq.elsewhere", &seed, "1700000000"], checkpoint);
    assert!(made);
    let (their_vkey, their_line) = output.split_once('\n').unwrap();
    let theirs = WitnessKey::parse(their_vkey).unwrap();
    let ours = CosignerKey::from_seed_of(Algorithm::MlDsa44, "pq.elsewhere", [0x5a; 32]).unwrap();
    assert_eq!(ours.witness_key(), theirs, "one seed, one key, both ways");
    let found = theirs.cosignatures_in(checkpoint, their_line).unwrap();
    assert_eq!((found.len(), found[0].time), (1, 1_700_000_000));
    assert!(theirs.cosignatures_in(other, their_line).is_err());
}

#[test]
fn the_reference_witness_key_reads_the_same_both_ways() {
    // The Go reference reads a plain Ed25519 key as its cosigning key.
    let from_private = CosignerKey::parse(WITNESS_PRIVATE).unwrap().witness_key();
    assert_eq!(WitnessKey::parse(WITNESS_PUBLIC).unwrap(), from_private);
}

#[tokio::test]
async fn the_reference_checkpoints_are_cosigned_and_the_cosignatures_verify_elsewhere() {
    let witness = start().await;
    let (status, _, line) = add(&witness.base, format!("old 0\n\n{INIT}")).await;
    assert_eq!(status, 200, "{line}");
    assert!(line.starts_with("\u{2014} witness ") && line.ends_with('\n'));
    assert!(verified_by_signed_note(INIT, &line));
    assert!(
        !verified_by_signed_note(NEXT, &line),
        "a cosignature of size 5 does not verify on size 8"
    );

    let body = format!("old 5\n{}\n{NEXT}", proof_lines(&PROOF_5_TO_8));
    let (status, _, line) = add(&witness.base, body).await;
    assert_eq!(status, 200, "{line}");
    assert!(verified_by_signed_note(NEXT, &line));

    let monitored = reqwest::get(format!(
        "{}/{}/checkpoint",
        witness.base,
        freedom_shared::tlog::witness::origin_hash("monkeys")
    ))
    .await
    .unwrap();
    assert_eq!(monitored.status(), 200);
    assert_eq!(monitored.text().await.unwrap(), format!("{NEXT}{line}"));
}

#[tokio::test]
async fn every_status_of_the_specification() {
    let witness = start().await;
    let base = &witness.base;
    assert_eq!(add(base, format!("old 0\n\n{INIT}")).await.0, 200);

    let (status, content_type, body) = add(base, format!("old 0\n\n{NEXT}")).await;
    assert_eq!(
        (status, content_type.as_deref(), body.as_str()),
        (409, Some("text/x.tlog.size"), "5\n")
    );

    let mut bad = PROOF_5_TO_8;
    bad[1] = PROOF_5_TO_8[2];
    let (status, _, _) = add(base, format!("old 5\n{}\n{NEXT}", proof_lines(&bad))).await;
    assert_eq!(status, 422, "a proof that does not verify");

    let forked = INIT.replace("41smjBUiAU70", "41smjBUiAU71");
    assert_eq!(
        add(base, format!("old 5\n\n{forked}")).await.0,
        403,
        "the signature no longer verifies"
    );

    assert_eq!(
        add(base, format!("old 9\n\n{NEXT}")).await.0,
        400,
        "old above the size"
    );
    assert_eq!(add(base, "old 0\nnot base64\n\nx\n".into()).await.0, 400);
    let unsigned = &INIT[..INIT.find("\n\n").unwrap() + 2];
    assert_eq!(
        add(base, format!("old 5\n\n{unsigned}")).await.0,
        403,
        "no trusted signature"
    );
    let other_log = INIT.replace("monkeys\n5", "bananas\n5");
    assert_eq!(add(base, format!("old 0\n\n{other_log}")).await.0, 404);
    let huge = format!("old 0\n{}\n{INIT}", "A".repeat(20_000));
    assert_eq!(add(base, huge).await.0, 413, "the body is capped at 16 KiB");

    let (status, _, line) = add(base, format!("old 5\n\n{INIT}")).await;
    assert_eq!(status, 200, "the same checkpoint again is cosigned again");
    assert!(verified_by_signed_note(INIT, &line));
}
