//! Mint accounts as the RPC's `jsonParsed` form writes them for
//! `spl-token-2022` (extension names and fields of Solana's account
//! decoder).

use super::*;
use serde_json::json;

/// A Token-2022 mint's `info` with `extensions`.
pub(crate) fn token_2022_info(extensions: Value) -> Value {
    json!({
        "decimals": 6, "freezeAuthority": null, "isInitialized": true,
        "mintAuthority": null, "supply": "1000000000000",
        "extensions": extensions,
    })
}

fn mint_of(extensions: Value) -> Mint {
    match MintAccount::parsed(
        Some(TOKEN_2022_PROGRAM),
        "mint",
        &token_2022_info(extensions),
    ) {
        MintAccount::Mint(mint) => *mint,
        other => panic!("{other:?}"),
    }
}

fn fee_config(older_bps: u16, newer_bps: u16, newer_epoch: u64, maximum: u64) -> Value {
    json!({"extension": "transferFeeConfig", "state": {
        "transferFeeConfigAuthority": "FeeAuth1111111111111111111111111111111111111",
        "withdrawWithheldAuthority": null,
        "withheldAmount": 0,
        "olderTransferFee": {"epoch": 0, "maximumFee": maximum, "transferFeeBasisPoints": older_bps},
        "newerTransferFee": {"epoch": newer_epoch, "maximumFee": maximum, "transferFeeBasisPoints": newer_bps},
    }})
}

#[test]
fn every_checked_extension_reads_with_its_decoder_fields() {
    let mint = mint_of(json!([
        {"extension": "permanentDelegate", "state": {"delegate": "Deleg11111111111111111111111111111111111111"}},
        {"extension": "transferHook", "state": {"authority": null, "programId": "Hook111111111111111111111111111111111111111"}},
        fee_config(50, 200, 700, 5_000_000),
        {"extension": "nonTransferable"},
        {"extension": "defaultAccountState", "state": {"accountState": "frozen"}},
        {"extension": "pausableConfig", "state": {"authority": "P", "paused": true}},
        {"extension": "mintCloseAuthority", "state": {"closeAuthority": null}},
        {"extension": "tokenMetadata", "state": {"mint": "M", "name": "n", "symbol": "s", "uri": "", "additionalMetadata": [], "updateAuthority": null}},
        {"extension": "confidentialTransferMint", "state": {"authority": null, "autoApproveNewAccounts": false, "auditorElgamalPubkey": null}},
    ]));
    assert_eq!(mint.supply, Some(1_000_000_000_000));
    assert_eq!(mint.decimals, Some(6));
    assert_eq!(
        mint.extension("permanentDelegate"),
        Some(&Extension::PermanentDelegate {
            delegate: Field::Set("Deleg11111111111111111111111111111111111111".into())
        })
    );
    assert_eq!(
        mint.extension("transferHook"),
        Some(&Extension::TransferHook {
            program_id: Field::Set("Hook111111111111111111111111111111111111111".into())
        })
    );
    assert_eq!(
        mint.extension("nonTransferable"),
        Some(&Extension::NonTransferable)
    );
    assert_eq!(
        mint.extension("defaultAccountState"),
        Some(&Extension::DefaultAccountState {
            account_state: Some("frozen".into())
        })
    );
    assert_eq!(
        mint.extension("pausableConfig"),
        Some(&Extension::PausableConfig {
            authority: Field::Set("P".into()),
            paused: Some(true)
        })
    );
    assert_eq!(
        mint.extension("mintCloseAuthority"),
        Some(&Extension::MintCloseAuthority {
            close_authority: Field::Null
        })
    );
    assert_eq!(
        mint.extension("confidentialTransferMint"),
        Some(&Extension::Other {
            name: "confidentialTransferMint".into(),
            harmless: false
        })
    );
}

#[test]
fn the_fee_in_force_follows_the_epoch_and_its_cap() {
    let mint = mint_of(json!([fee_config(50, 200, 700, 5_000_000)]));
    // Before the newer fee's epoch the older one applies, from it the newer.
    let older = mint.fee_in_force(Some(699)).unwrap().unwrap();
    assert_eq!(older.basis_points, 50);
    let newer = mint.fee_in_force(Some(700)).unwrap().unwrap();
    assert_eq!(newer.basis_points, 200);
    // 5 000 000 smallest units at 6 decimals: at most 5 tokens a transfer.
    assert_eq!(newer.maximum, Decimal::from(5));
    // The epoch unknown: the higher of the two.
    assert_eq!(mint.fee_in_force(None).unwrap().unwrap().basis_points, 200);
    // 2 % of 100 tokens is 2; of 1 000 tokens 20, capped at 5.
    assert_eq!(newer.on(Decimal::from(100)), Some(Decimal::from(2)));
    assert_eq!(newer.on(Decimal::from(1000)), Some(Decimal::from(5)));
    // A fee is a whole number of smallest units, rounded up.
    assert_eq!(
        newer.on(Decimal::new(1, 6)),
        Some(Decimal::new(1, 6)),
        "2 % of one smallest unit is charged as one"
    );
    assert_eq!(FeeInForce::NONE.on(Decimal::from(7)), Some(Decimal::ZERO));
    // No extension: no fee; an extension that does not read: unknown.
    assert_eq!(mint_of(json!([])).fee_in_force(Some(1)), Some(None));
    let broken =
        mint_of(json!([{"extension": "transferFeeConfig", "state": {"olderTransferFee": "?"}}]));
    assert_eq!(broken.fee_in_force(Some(1)), None);
    assert_eq!(epoch_of(700 * SLOTS_PER_EPOCH + 5), 700);
}

#[test]
fn malformed_fields_read_as_unknown_never_as_unset() {
    let mint = mint_of(json!([
        {"extension": "permanentDelegate", "state": {"delegate": 7}},
        {"extension": "transferHook"},
        {"extension": "pausableConfig", "state": {"paused": "no"}},
        {"extension": "defaultAccountState", "state": {}},
        "not an extension",
    ]));
    assert_eq!(
        mint.extension("permanentDelegate"),
        Some(&Extension::PermanentDelegate {
            delegate: Field::Unknown
        })
    );
    assert_eq!(
        mint.extension("transferHook"),
        Some(&Extension::TransferHook {
            program_id: Field::Unknown
        })
    );
    assert_eq!(
        mint.extension("pausableConfig"),
        Some(&Extension::PausableConfig {
            authority: Field::Unknown,
            paused: None
        })
    );
    assert_eq!(
        mint.extension("unnamed"),
        Some(&Extension::Other {
            name: "unnamed".into(),
            harmless: false
        })
    );
    // An extension list that is not a list: unknown; absent: none.
    let info = json!({"mintAuthority": null, "freezeAuthority": null, "supply": "1", "decimals": 0, "extensions": {}});
    let MintAccount::Mint(mint) = MintAccount::parsed(Some(TOKEN_2022_PROGRAM), "mint", &info)
    else {
        panic!()
    };
    assert_eq!(mint.extensions, None);
    let info =
        json!({"mintAuthority": null, "freezeAuthority": null, "supply": "1", "decimals": 0});
    let MintAccount::Mint(mint) = MintAccount::parsed(Some(SPL_TOKEN_PROGRAM), "mint", &info)
    else {
        panic!()
    };
    assert_eq!(mint.extensions, Some(Vec::new()));
    assert_eq!(
        MintAccount::parsed(Some(SPL_TOKEN_PROGRAM), "account", &info),
        MintAccount::NotAMint {
            program: Some(SPL_TOKEN_PROGRAM.into())
        }
    );
}
