//! The adapters' readers on answers made here: the older DexScreener
//! envelope, the RPC's error envelope, a mint's authorities, a huge
//! RugCheck report. (The clients against the providers' stand-in, through
//! their ports, are `shared/tests/providers.rs`.)

use super::dexscreener::parse_pairs;
use super::rugcheck::parse_report;
use super::solana::parse_accounts;
use crate::ports::providers::ProviderError;
use crate::scan::accounts::mint_account;

#[test]
fn the_older_envelope_without_pairs_reads_as_not_indexed() {
    let parsed = parse_pairs(
        br#"{"schemaVersion": "1.0.0", "pairs": null}"#,
        &["X".to_owned()],
    )
    .unwrap();
    assert_eq!(parsed["X"], None);
}

/// The stand-in answers 101 keys in one call with the real -32602 error,
/// which the client reports (it never sends more than 100).
#[test]
fn an_rpc_error_envelope_is_the_rpc_error() {
    let body = serde_json::json!({"jsonrpc": "2.0", "error": {"code": -32602, "message": "Too many inputs provided; max 100"}, "id": 1});
    let parsed = parse_accounts(body.to_string().as_bytes(), 101);
    assert!(
        matches!(
            &parsed,
            Err(ProviderError::Rpc { code: -32602, message }) if message == "Too many inputs provided; max 100"
        ),
        "{parsed:?}"
    );
}

/// Only an explicit JSON `null` is a revoked authority: an absent field, or
/// one of the wrong type, is unknown (the token is not eligible), where it
/// used to read as revoked and the token was bought.
#[test]
fn authorities_are_revoked_only_by_an_explicit_null() {
    use crate::scan::checks::{self, CheckStatus, Evidence};
    let mint = |info: serde_json::Value| {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"context": {"slot": 1}, "value": [{
            "lamports": 1_461_600, "owner": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", "executable": false,
            "data": {"program": "spl-token", "space": 82, "parsed": {"type": "mint", "info": info}}
        }]}});
        let (slots, slot) = parse_accounts(body.to_string().as_bytes(), 1).unwrap();
        assert_eq!(slot, Some(1));
        mint_account(&slots[0])
    };
    let status = |info: serde_json::Value, check: &str| {
        let account = mint(info);
        let checks = checks::evaluate(&Evidence {
            market: None,
            risk: None,
            mint: Some(&account),
            holders: None,
            epoch: None,
            sources: &Default::default(),
        });
        checks.iter().find(|c| c.name == check).unwrap().status
    };
    let base = |authority: serde_json::Value| {
        let mut info = serde_json::json!({"decimals": 6, "isInitialized": true, "supply": "1000", "freezeAuthority": null});
        info["mintAuthority"] = authority;
        info
    };
    assert_eq!(
        status(base(serde_json::Value::Null), "mint_authority_revoked"),
        CheckStatus::Pass
    );
    assert_eq!(
        status(
            base(serde_json::json!(
                "FakeMintAuthBravoTestTestTestTestTestTestTes"
            )),
            "mint_authority_revoked"
        ),
        CheckStatus::Fail
    );
    for wrong in [
        serde_json::json!(7),
        serde_json::json!(["x"]),
        serde_json::json!({}),
        serde_json::json!(""),
        serde_json::json!(true),
    ] {
        assert_eq!(
            status(base(wrong.clone()), "mint_authority_revoked"),
            CheckStatus::Unknown,
            "{wrong}"
        );
    }
    let absent = serde_json::json!({"decimals": 6, "isInitialized": true, "supply": "1000"});
    assert_eq!(
        status(absent.clone(), "mint_authority_revoked"),
        CheckStatus::Unknown
    );
    assert_eq!(
        status(absent, "freeze_authority_revoked"),
        CheckStatus::Unknown
    );
}

/// A huge RugCheck answer cannot make the scanner's state large: only the
/// danger-level risks the checks use are kept, their names cleaned and cut,
/// at most 16 KiB of them a token (30 such answers once made a 120 MB
/// state).
#[test]
fn a_huge_risk_report_is_kept_small() {
    use crate::scan::{MAX_RISK_BYTES, MAX_RISK_NAME_CHARS};
    let risks: Vec<serde_json::Value> = (0..5000)
        .map(|i| {
            serde_json::json!({
                "name": format!("risk {i} \u{202E}{}", "x".repeat(4000)),
                "level": if i % 2 == 0 { "danger" } else { "warn" },
                "score": i, "description": "y".repeat(4000)
            })
        })
        .collect();
    let body = serde_json::json!({"score": 1, "score_normalised": 1, "risks": risks});
    let bytes = body.to_string();
    assert!(bytes.len() > 40_000_000, "a large answer");
    let report = parse_report(bytes.as_bytes()).unwrap();
    assert!(!report.risks.is_empty());
    assert!(report.risks.iter().all(|r| r.level == "danger"));
    assert!(
        report
            .risks
            .iter()
            .all(|r| r.name.chars().count() <= MAX_RISK_NAME_CHARS)
    );
    assert!(report.risks.iter().all(|r| !r.name.contains('\u{202E}')));
    let kept: usize = report.risks.iter().map(|r| r.name.len()).sum();
    assert!(kept <= MAX_RISK_BYTES, "{kept} bytes");
    assert!(serde_json::to_string(&report).unwrap().len() < 2 * MAX_RISK_BYTES);
}
