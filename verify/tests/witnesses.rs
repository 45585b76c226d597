//! `--policy`: a checkpoint is accepted only with cosignatures meeting the
//! policy's quorum; forged and future-dated cosignatures fail; lines from
//! keys the policy does not list are ignored.

use freedom_shared::merkle::{Head, leaf_hash};
use freedom_shared::tlog::checkpoint::Checkpoint;
use freedom_shared::tlog::cosignature::CosignerKey;
use freedom_shared::tlog::note::SigningKey;
use freedom_shared::tlog::policy::Policy;
use freedom_verify::{Failure, check_witnesses};

const NOW: u64 = 1_800_000_000;

fn witness(seed: u8) -> CosignerKey {
    CosignerKey::from_seed(&format!("w{seed}.example"), [seed; 32]).unwrap()
}

fn signed_checkpoint() -> (String, String) {
    let log = SigningKey::from_seed("fund.example.com/log", [9; 32]).unwrap();
    let text = Checkpoint::of(
        "fund.example.com/log",
        Head {
            size: 7,
            root_hash: leaf_hash(b"seven"),
        },
    )
    .text();
    (log.sign(&text), text)
}

fn policy() -> Policy {
    Policy::parse(&format!(
        "witness A {}\nwitness B {}\nwitness C {}\ngroup G 2 A B C\nquorum G\n",
        witness(1).witness_key().to_text(),
        witness(2).witness_key().to_text(),
        witness(3).witness_key().to_text()
    ))
    .unwrap()
}

fn failure(result: Result<String, Failure>) -> String {
    match result {
        Err(Failure::Discrepancy(line)) => line,
        other => panic!("expected a discrepancy, got {other:?}"),
    }
}

#[test]
fn two_of_three_pass_and_name_the_witnesses() {
    let (note, text) = signed_checkpoint();
    let stranger = CosignerKey::from_seed("stranger.example", [7; 32]).unwrap();
    let cosigned = format!(
        "{note}{}{}{}",
        witness(1).cosign(&text, NOW - 5).unwrap(),
        stranger.cosign(&text, NOW).unwrap(),
        witness(3).cosign(&text, NOW).unwrap()
    );
    let line = check_witnesses(&cosigned, &policy(), NOW).unwrap();
    assert_eq!(line, ", witnessed by A, C (quorum met)");
}

#[test]
fn one_of_three_is_short_and_names_the_group() {
    let (note, text) = signed_checkpoint();
    let cosigned = format!("{note}{}", witness(2).cosign(&text, NOW).unwrap());
    let line = failure(check_witnesses(&cosigned, &policy(), NOW));
    assert!(
        line.contains("verified by B; short: G (1 of 2 needed)"),
        "{line}"
    );
    let line = failure(check_witnesses(&note, &policy(), NOW));
    assert!(line.contains("verified by none"), "{line}");
}

#[test]
fn a_forged_cosignature_fails_even_with_the_quorum_met() {
    let (note, text) = signed_checkpoint();
    let genuine = witness(2).cosign(&text, NOW).unwrap();
    // Same key ID and time, another signature: a forged line.
    let forged = witness(2)
        .cosign(&text.replace("\n7\n", "\n8\n"), NOW)
        .unwrap();
    let cosigned = format!(
        "{note}{}{}{forged}",
        witness(1).cosign(&text, NOW).unwrap(),
        witness(3).cosign(&text, NOW).unwrap()
    );
    assert_ne!(forged, genuine);
    let line = failure(check_witnesses(&cosigned, &policy(), NOW));
    assert!(
        line.contains("witness B's cosignature does not verify"),
        "{line}"
    );
}

#[test]
fn a_cosignature_dated_ahead_of_the_clock_fails() {
    let (note, text) = signed_checkpoint();
    let cosigned = format!(
        "{note}{}{}",
        witness(1).cosign(&text, NOW + 601).unwrap(),
        witness(2).cosign(&text, NOW + 600).unwrap()
    );
    let line = failure(check_witnesses(&cosigned, &policy(), NOW));
    assert!(
        line.contains("witness A's cosignature is dated 601 s ahead"),
        "{line}"
    );
}

/// Round 4: `--policy` ignored the policy's `log` lines, so another log's
/// policy was applied to this one. A policy listing logs must list the key
/// being checked: otherwise the check cannot be made (exit 2).
#[test]
fn a_policy_for_another_log_cannot_check_this_one() {
    use freedom_verify::check_policy_trusts;
    let ours = SigningKey::from_seed("fund.example.com/log", [9; 32])
        .unwrap()
        .verifier();
    let theirs = SigningKey::from_seed("other.example/log", [8; 32])
        .unwrap()
        .verifier();
    let witnesses = format!(
        "witness A {}\nquorum A\n",
        witness(1).witness_key().to_text()
    );
    let for_them = Policy::parse(&format!("log {}\n{witnesses}", theirs.to_text())).unwrap();
    match check_policy_trusts(Some(&for_them), &ours) {
        Err(Failure::CannotCheck(line)) => assert!(line.contains("another log's policy"), "{line}"),
        other => panic!("another log's policy must not be applied: {other:?}"),
    }
    let (note, _) = signed_checkpoint();
    let proof_of_nothing = freedom_verify::verify_proof_file(&note, &ours, b"{}", Some(&for_them));
    assert!(matches!(proof_of_nothing, Err(Failure::CannotCheck(_))));
    let for_us = Policy::parse(&format!("log {}\n{witnesses}", ours.to_text())).unwrap();
    assert!(check_policy_trusts(Some(&for_us), &ours).is_ok());
    let unnamed = Policy::parse(&witnesses).unwrap();
    assert!(check_policy_trusts(Some(&unnamed), &ours).is_ok());
}
