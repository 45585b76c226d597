use super::*;
use crate::scan::Authority;
use crate::scan::Risk;
use crate::scan::experiments::pool::Reserves;
use crate::scan::holders::{BURN_ADDRESS, Holding};
use crate::scan::mint::{Mint, SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM};
use CheckStatus::{Fail, Pass, Unknown};
use rust_decimal::Decimal;
use serde_json::{Value, json};

fn quote(liquidity: i64) -> MarketQuote {
    MarketQuote {
        symbol: "TKN".into(),
        price_usd: Some(Decimal::new(125, 2)),
        liquidity_usd: Some(Decimal::from(liquidity)),
        price_change_h24: Some(3.0),
        pair_url: None,
        pools: vec!["Pool111111111111111111111111111111111111111".into()],
        reserves: Reserves::new(
            Decimal::from(liquidity),
            Decimal::from(liquidity),
            Decimal::ONE,
        ),
    }
}

/// A Token-2022 mint with `extensions` (jsonParsed form), nothing held back.
fn mint_2022(extensions: Value) -> MintAccount {
    MintAccount::parsed(
        Some(TOKEN_2022_PROGRAM),
        "mint",
        &json!({
            "decimals": 6, "freezeAuthority": null, "isInitialized": true,
            "mintAuthority": null, "supply": "1000000", "extensions": extensions,
        }),
    )
}

fn clean_mint() -> MintAccount {
    mint_2022(json!([
        {"extension": "metadataPointer", "state": {"authority": null, "metadataAddress": "M"}},
        {"extension": "tokenMetadata", "state": {"mint": "M", "name": "n", "symbol": "s", "uri": "", "additionalMetadata": [], "updateAuthority": null}},
    ]))
}

fn report(levels: &[&str], lp_locked: Option<f64>) -> RiskReport {
    RiskReport {
        score: Some(1.0),
        score_normalised: Some(1.0),
        risks: levels
            .iter()
            .map(|l| Risk {
                name: format!("{l} risk"),
                level: (*l).into(),
                score: None,
            })
            .collect(),
        lp_locked_pct: lp_locked,
        unreadable: None,
        reading: crate::scan::RISK_READING,
    }
}

/// Holders: the pool with 60 %, the burn address with 20 %, then ten
/// holders of 1 % each (10 % for the top ten once pool and burn are left out).
fn spread() -> Vec<Holding> {
    let mut holdings = vec![
        Holding {
            address: "PoolVault".into(),
            owner: Some("Pool111111111111111111111111111111111111111".into()),
            amount: 600_000,
        },
        Holding {
            address: "Burnt".into(),
            owner: Some(BURN_ADDRESS.into()),
            amount: 200_000,
        },
    ];
    holdings.extend((0..12).map(|i| Holding {
        address: format!("A{i}"),
        owner: Some(format!("Holder{i}")),
        amount: 10_000,
    }));
    holdings
}

struct Case {
    market: Option<Option<MarketQuote>>,
    risk: Option<RiskReport>,
    mint: Option<MintAccount>,
    holders: Option<Vec<Holding>>,
    epoch: Option<u64>,
}

impl Case {
    fn clean() -> Case {
        Case {
            market: Some(Some(quote(250_000))),
            risk: Some(report(&["info", "warn"], Some(100.0))),
            mint: Some(clean_mint()),
            holders: Some(spread()),
            epoch: Some(800),
        }
    }

    fn checks(&self) -> Vec<Check> {
        let sources = Sources {
            market: vec![0],
            risk: vec![1],
            mint: vec![2],
            holders: vec![3, 4],
        };
        evaluate(&Evidence {
            market: self.market.as_ref().map(Option::as_ref),
            risk: self.risk.as_ref(),
            mint: self.mint.as_ref(),
            holders: self.holders.as_ref().map(|h| Some(h.as_slice())),
            epoch: self.epoch,
            sources: &sources,
        })
    }

    fn status(&self, name: &str) -> CheckStatus {
        status_of(&self.checks(), name).unwrap()
    }
}

fn with_mint(extensions: Value) -> Case {
    Case {
        mint: Some(mint_2022(extensions)),
        ..Case::clean()
    }
}

fn statuses(checks: &[Check]) -> Vec<CheckStatus> {
    checks.iter().map(|c| c.status).collect()
}

#[test]
fn a_clean_liquid_token_passes_everything_and_names_its_evidence() {
    let checks = Case::clean().checks();
    assert_eq!(statuses(&checks), vec![Pass; CHECK_NAMES.len()]);
    assert!(eligible(&checks));
    let evidence = |name: &str| {
        checks
            .iter()
            .find(|c| c.name == name)
            .unwrap()
            .evidence
            .clone()
    };
    assert_eq!(evidence(LIQUIDITY), vec![0]);
    assert_eq!(evidence(NO_DANGER_RISK), vec![1]);
    assert_eq!(evidence(TRANSFER_FEE_LOW), vec![2]);
    // The holders' share rests on the holders, the pools and the supply.
    assert_eq!(evidence(HOLDERS_SPREAD), vec![0, 2, 3, 4]);
    // A plain SPL Token mint has no extensions: the same checks pass.
    let spl = Case {
        mint: Some(MintAccount::parsed(
            Some(SPL_TOKEN_PROGRAM),
            "mint",
            &json!({"decimals": 6, "freezeAuthority": null, "mintAuthority": null, "supply": "1000000"}),
        )),
        ..Case::clean()
    };
    assert!(eligible(&spl.checks()));
}

#[test]
fn authorities_danger_and_thin_liquidity_fail_their_own_check() {
    let mut minting = Case::clean();
    if let Some(MintAccount::Mint(mint)) = &mut minting.mint {
        mint.mint_authority = Authority::HeldBy("Auth".into());
        mint.freeze_authority = Authority::HeldBy("Auth".into());
    }
    assert_eq!(minting.status(MINT_AUTHORITY_REVOKED), Fail);
    assert_eq!(minting.status(FREEZE_AUTHORITY_REVOKED), Fail);
    let danger = Case {
        risk: Some(report(&["warn", "danger"], Some(100.0))),
        ..Case::clean()
    };
    assert_eq!(danger.status(NO_DANGER_RISK), Fail);
    let thin = Case {
        market: Some(Some(quote(49_999))),
        ..Case::clean()
    };
    assert_eq!(thin.status(LIQUIDITY), Fail);
    assert!(!eligible(&thin.checks()));
}

#[test]
fn each_token_2022_hazard_fails_its_check() {
    let hazards: [(&str, Value); 8] = [
        (
            NO_PERMANENT_DELEGATE,
            json!({"extension": "permanentDelegate", "state": {"delegate": "Deleg11111111111111111111111111111111111111"}}),
        ),
        (
            NO_TRANSFER_HOOK,
            json!({"extension": "transferHook", "state": {"authority": null, "programId": "Hook111111111111111111111111111111111111111"}}),
        ),
        (
            TRANSFER_FEE_LOW,
            json!({"extension": "transferFeeConfig", "state": {"withheldAmount": 0,
                "olderTransferFee": {"epoch": 0, "maximumFee": 1000000000, "transferFeeBasisPoints": 0},
                "newerTransferFee": {"epoch": 700, "maximumFee": 1000000000, "transferFeeBasisPoints": 10000}}}),
        ),
        (TRANSFERABLE, json!({"extension": "nonTransferable"})),
        (
            TRANSFERABLE,
            json!({"extension": "defaultAccountState", "state": {"accountState": "frozen"}}),
        ),
        (
            TRANSFERABLE,
            json!({"extension": "pausableConfig", "state": {"authority": "P", "paused": true}}),
        ),
        (
            NO_MINT_CLOSE_AUTHORITY,
            json!({"extension": "mintCloseAuthority", "state": {"closeAuthority": "Close111111111111111111111111111111111111111"}}),
        ),
        (
            EXTENSIONS_UNDERSTOOD,
            json!({"extension": "confidentialTransferMint", "state": {"authority": null, "autoApproveNewAccounts": true, "auditorElgamalPubkey": null}}),
        ),
    ];
    for (name, extension) in hazards {
        let case = with_mint(json!([extension]));
        let checks = case.checks();
        assert_eq!(status_of(&checks, name), Some(Fail), "{extension}");
        assert_eq!(
            checks.iter().filter(|c| c.status != Pass).count(),
            1,
            "only {name} fails: {checks:?}"
        );
        assert!(!eligible(&checks));
    }
}

#[test]
fn harmless_states_of_checked_extensions_pass() {
    for extension in [
        json!({"extension": "permanentDelegate", "state": {"delegate": null}}),
        json!({"extension": "transferHook", "state": {"authority": "A", "programId": null}}),
        json!({"extension": "defaultAccountState", "state": {"accountState": "initialized"}}),
        json!({"extension": "pausableConfig", "state": {"authority": null, "paused": false}}),
        json!({"extension": "mintCloseAuthority", "state": {"closeAuthority": null}}),
        // 0.5 % in force, 1 % scheduled for a later epoch.
        json!({"extension": "transferFeeConfig", "state": {"withheldAmount": 0,
            "olderTransferFee": {"epoch": 0, "maximumFee": 1000, "transferFeeBasisPoints": 50},
            "newerTransferFee": {"epoch": 900, "maximumFee": 1000, "transferFeeBasisPoints": 100}}}),
        json!({"extension": "cpiGuard", "state": {"lockCpi": true}}),
    ] {
        let checks = with_mint(json!([extension])).checks();
        assert!(eligible(&checks), "{extension}: {checks:?}");
    }
}

#[test]
fn unknown_is_never_pass() {
    // Each missing or unreadable piece of evidence leaves its checks unknown.
    let silent = Case {
        market: None,
        risk: None,
        mint: None,
        holders: None,
        epoch: None,
    };
    assert_eq!(statuses(&silent.checks()), vec![Unknown; CHECK_NAMES.len()]);
    let unread = with_mint(
        json!([{"extension": "pausableConfig", "state": {"authority": null, "paused": "maybe"}}]),
    );
    assert_eq!(unread.status(TRANSFERABLE), Unknown);
    let no_lp = Case {
        risk: Some(report(&[], None)),
        ..Case::clean()
    };
    assert_eq!(no_lp.status(LIQUIDITY_LOCKED), Unknown);
    let unlocked = Case {
        risk: Some(report(&[], Some(89.9))),
        ..Case::clean()
    };
    assert_eq!(unlocked.status(LIQUIDITY_LOCKED), Fail);
    let no_holders = Case {
        holders: None,
        ..Case::clean()
    };
    assert_eq!(no_holders.status(HOLDERS_SPREAD), Unknown);
    let no_pools = Case {
        market: None,
        ..Case::clean()
    };
    assert_eq!(no_pools.status(HOLDERS_SPREAD), Unknown);
    let mut owner_unknown = spread();
    owner_unknown[3].owner = None;
    let case = Case {
        holders: Some(owner_unknown),
        ..Case::clean()
    };
    assert_eq!(case.status(HOLDERS_SPREAD), Unknown);
    let foreign = Case {
        mint: Some(MintAccount::NotAMint {
            program: Some("Other1111111111111111111111111111111111111".into()),
        }),
        ..Case::clean()
    };
    assert_eq!(foreign.status(TOKEN_PROGRAM_KNOWN), Fail);
    assert_eq!(foreign.status(NO_TRANSFER_HOOK), Unknown);
    let missing = Case {
        market: Some(None),
        mint: Some(MintAccount::Missing),
        ..Case::clean()
    };
    assert_eq!(missing.status(INDEXED_AND_PRICED), Fail);
    assert_eq!(missing.status(TOKEN_PROGRAM_KNOWN), Fail);
}

#[test]
fn concentrated_holders_fail_but_pools_and_burns_do_not_count() {
    // Without the pool and the burn address left out, 80 % sits in two
    // accounts; with them left out the top ten hold 10 %.
    assert_eq!(Case::clean().status(HOLDERS_SPREAD), Pass);
    let mut whale = spread();
    whale.insert(
        2,
        Holding {
            address: "Whale".into(),
            owner: Some("WhaleOwner".into()),
            amount: 420_000,
        },
    );
    let case = Case {
        holders: Some(whale),
        ..Case::clean()
    };
    assert_eq!(case.status(HOLDERS_SPREAD), Fail);
    let unlisted_pool = Case {
        market: Some(Some(MarketQuote {
            pools: Vec::new(),
            ..quote(250_000)
        })),
        ..Case::clean()
    };
    assert_eq!(unlisted_pool.status(HOLDERS_SPREAD), Fail);
}

mod property {
    //! Any hazard, in any combination with harmless extensions, makes a
    //! token ineligible, and an ineligible token is never bought.
    use super::*;
    use crate::scan::experiments::{Book, EXPERIMENTS, TokenMarket};
    use crate::scan::mint::FeeInForce;
    use proptest::prelude::*;

    fn hazard() -> impl Strategy<Value = Value> {
        prop_oneof![
            "[1-9A-HJ-NP-Za-km-z]{32,44}".prop_map(|d| json!({"extension": "permanentDelegate", "state": {"delegate": d}})),
            "[1-9A-HJ-NP-Za-km-z]{32,44}".prop_map(|p| json!({"extension": "transferHook", "state": {"authority": null, "programId": p}})),
            (101u16..=10_000).prop_map(|bps| json!({"extension": "transferFeeConfig", "state": {"withheldAmount": 0,
                "olderTransferFee": {"epoch": 0, "maximumFee": u64::MAX, "transferFeeBasisPoints": bps},
                "newerTransferFee": {"epoch": 0, "maximumFee": u64::MAX, "transferFeeBasisPoints": bps}}})),
            Just(json!({"extension": "nonTransferable"})),
            Just(json!({"extension": "defaultAccountState", "state": {"accountState": "frozen"}})),
            Just(json!({"extension": "pausableConfig", "state": {"authority": null, "paused": true}})),
            "[1-9A-HJ-NP-Za-km-z]{32,44}".prop_map(|c| json!({"extension": "mintCloseAuthority", "state": {"closeAuthority": c}})),
            "[a-z][A-Za-z]{2,30}"
                .prop_filter("not a known extension", |n| {
                    !crate::scan::mint::CHECKED_EXTENSIONS.contains(&n.as_str())
                        && !crate::scan::mint::HARMLESS_EXTENSIONS.contains(&n.as_str())
                })
                .prop_map(|n| json!({"extension": n, "state": {}})),
        ]
    }

    fn harmless() -> impl Strategy<Value = Value> {
        prop::sample::select(crate::scan::mint::HARMLESS_EXTENSIONS.to_vec())
            .prop_map(|n| json!({"extension": n, "state": {}}))
    }

    proptest! {
        #[test]
        fn a_token_with_any_hazard_is_never_eligible_and_never_bought(
            hazards in prop::collection::vec(hazard(), 1..4),
            harmless in prop::collection::vec(harmless(), 0..3),
            position in 0usize..6,
        ) {
            let mut extensions = harmless;
            for (i, hazard) in hazards.into_iter().enumerate() {
                extensions.insert((position + i).min(extensions.len()), hazard);
            }
            let case = with_mint(Value::Array(extensions));
            let checks = case.checks();
            prop_assert!(!eligible(&checks), "{checks:?}");
            let market = [TokenMarket {
                mint: "hazard".into(),
                symbol: "HZD".into(),
                mid: Some(Decimal::ONE),
                pool: Reserves::new(
                    Decimal::from(10_000_000),
                    Decimal::from(10_000_000),
                    Decimal::ONE,
                ),
                change_h24: Some(50.0),
                eligible: eligible(&checks),
                transfer_fee: Some(FeeInForce::NONE),
                blocked: status_of(&checks, TRANSFERABLE) == Some(Fail),
                evidence: Vec::new(),
                pool_evidence: None,
            }];
            for experiment in &EXPERIMENTS {
                let mut book = Book::new(experiment);
                let at = chrono::DateTime::from_timestamp(1_777_896_000, 0).unwrap();
                let fills = book.advance(experiment, &market, at);
                prop_assert!(fills.is_empty());
                prop_assert!(book.positions.is_empty());
            }
        }
    }

    #[test]
    fn the_mint_struct_has_no_hidden_pass() {
        // A parsed mint whose program is not given is unknown everywhere.
        let mint = MintAccount::Mint(Box::new(Mint {
            program: None,
            mint_authority: Authority::Revoked,
            freeze_authority: Authority::Revoked,
            supply: Some(1),
            decimals: Some(0),
            extensions: Some(Vec::new()),
        }));
        let case = Case {
            mint: Some(mint),
            ..Case::clean()
        };
        assert_eq!(case.status(TOKEN_PROGRAM_KNOWN), Unknown);
        assert!(!eligible(&case.checks()));
    }
}

/// Every extension check is unknown, never pass, when its extension's
/// state does not read.
#[test]
fn each_extension_check_is_unknown_when_its_state_does_not_read() {
    let unreadable: [(&str, Value); 5] = [
        (
            NO_PERMANENT_DELEGATE,
            json!({"extension": "permanentDelegate", "state": {"delegate": 7}}),
        ),
        (NO_TRANSFER_HOOK, json!({"extension": "transferHook"})),
        (
            TRANSFER_FEE_LOW,
            json!({"extension": "transferFeeConfig", "state": {"newerTransferFee": null}}),
        ),
        (
            TRANSFERABLE,
            json!({"extension": "defaultAccountState", "state": {"accountState": 1}}),
        ),
        (
            NO_MINT_CLOSE_AUTHORITY,
            json!({"extension": "mintCloseAuthority", "state": {"closeAuthority": ""}}),
        ),
    ];
    for (name, extension) in unreadable {
        let checks = with_mint(json!([extension])).checks();
        assert_eq!(status_of(&checks, name), Some(Unknown), "{extension}");
        assert!(!eligible(&checks));
    }
    // An extension list that is not a list: every extension check unknown.
    let case = Case {
        mint: Some(MintAccount::parsed(
            Some(TOKEN_2022_PROGRAM),
            "mint",
            &json!({"mintAuthority": null, "freezeAuthority": null, "supply": "1000000", "decimals": 6, "extensions": "?"}),
        )),
        ..Case::clean()
    };
    for name in [
        NO_PERMANENT_DELEGATE,
        NO_TRANSFER_HOOK,
        TRANSFER_FEE_LOW,
        TRANSFERABLE,
        NO_MINT_CLOSE_AUTHORITY,
        EXTENSIONS_UNDERSTOOD,
    ] {
        assert_eq!(case.status(name), Unknown, "{name}");
    }
    assert_eq!(case.status(TOKEN_PROGRAM_KNOWN), Pass);
    // The market's and the authorities' own unknowns.
    let no_liquidity = Case {
        market: Some(Some(MarketQuote {
            liquidity_usd: None,
            ..quote(1)
        })),
        ..Case::clean()
    };
    assert_eq!(no_liquidity.status(LIQUIDITY), Unknown);
    // Liquidity in dollars but no reserves to price a fill at: unknown.
    let no_reserves = Case {
        market: Some(Some(MarketQuote {
            reserves: None,
            ..quote(10_000_000)
        })),
        ..Case::clean()
    };
    assert_eq!(no_reserves.status(LIQUIDITY), Unknown);
    let absent_authority = Case {
        mint: Some(MintAccount::parsed(
            Some(SPL_TOKEN_PROGRAM),
            "mint",
            &json!({"freezeAuthority": null, "supply": "1000000", "decimals": 6}),
        )),
        ..Case::clean()
    };
    assert_eq!(absent_authority.status(MINT_AUTHORITY_REVOKED), Unknown);
    assert_eq!(absent_authority.status(FREEZE_AUTHORITY_REVOKED), Pass);
}

/// Round 4's findings: each reading that passed a hazard, one example each.
mod fail_closed {
    use super::*;

    fn pausable(state: Value) -> Case {
        with_mint(json!([{"extension": "pausableConfig", "state": state}]))
    }

    #[test]
    fn a_live_pause_authority_fails_transferable_whatever_paused_says() {
        let live = pausable(
            json!({"authority": "Pause1111111111111111111111111111111111111", "paused": false}),
        );
        assert_eq!(live.status(TRANSFERABLE), Fail);
        assert!(!eligible(&live.checks()));
        let unread = pausable(json!({"authority": 7, "paused": false}));
        assert_eq!(unread.status(TRANSFERABLE), Unknown);
        let absent = pausable(json!({"paused": false}));
        assert_eq!(absent.status(TRANSFERABLE), Unknown);
        let revoked = pausable(json!({"authority": null, "paused": false}));
        assert_eq!(revoked.status(TRANSFERABLE), Pass);
    }

    #[test]
    fn an_extension_listed_twice_is_neither_entry() {
        let twice = with_mint(json!([
            {"extension": "permanentDelegate", "state": {"delegate": null}},
            {"extension": "permanentDelegate", "state": {"delegate": "Deleg11111111111111111111111111111111111111"}},
        ]));
        assert_eq!(twice.status(NO_PERMANENT_DELEGATE), Unknown);
        assert_eq!(twice.status(EXTENSIONS_UNDERSTOOD), Fail);
        let paused_second = with_mint(json!([
            {"extension": "pausableConfig", "state": {"authority": null, "paused": false}},
            {"extension": "pausableConfig", "state": {"authority": null, "paused": true}},
        ]));
        assert_ne!(paused_second.status(TRANSFERABLE), Pass);
        let harmless_twice = with_mint(json!([
            {"extension": "cpiGuard", "state": {}},
            {"extension": "cpiGuard", "state": {}},
        ]));
        assert_eq!(harmless_twice.status(EXTENSIONS_UNDERSTOOD), Fail);
    }

    #[test]
    fn a_known_name_with_a_hidden_character_case_or_space_is_not_understood() {
        for name in [
            "permanentDelegate\u{200b}",
            "\u{feff}transferHook",
            "PermanentDelegate",
            "permanentDelegate ",
            "cpi\u{00ad}Guard",
            "memo\u{2062}Transfer",
            "immutable\u{180e}Owner",
        ] {
            let case = with_mint(json!([{"extension": name, "state": {"delegate": "D"}}]));
            assert_eq!(case.status(EXTENSIONS_UNDERSTOOD), Fail, "{name:?}");
            assert!(!eligible(&case.checks()));
        }
    }

    #[test]
    fn a_default_account_state_passes_only_exactly_initialized() {
        for (state, expected) in [
            (json!("initialized"), Pass),
            (json!("frozen"), Fail),
            (json!("Frozen"), Unknown),
            (json!("frozen "), Unknown),
            (json!("uninitialized"), Unknown),
            (json!("Initialized"), Unknown),
            (json!(null), Unknown),
            (json!(2), Unknown),
        ] {
            let case = with_mint(
                json!([{"extension": "defaultAccountState", "state": {"accountState": state}}]),
            );
            assert_eq!(case.status(TRANSFERABLE), expected, "{state}");
        }
    }

    #[test]
    fn a_transfer_fee_hike_scheduled_for_a_later_epoch_fails_now() {
        let hike = with_mint(
            json!([{"extension": "transferFeeConfig", "state": {"withheldAmount": 0,
            "olderTransferFee": {"epoch": 0, "maximumFee": 1000, "transferFeeBasisPoints": 0},
            "newerTransferFee": {"epoch": 801, "maximumFee": 1000, "transferFeeBasisPoints": 10000}}}]),
        );
        let checks = hike.checks();
        assert_eq!(status_of(&checks, TRANSFER_FEE_LOW), Some(Fail));
        let detail = &checks
            .iter()
            .find(|c| c.name == TRANSFER_FEE_LOW)
            .unwrap()
            .detail;
        assert!(detail.contains("scheduled from epoch 801"), "{detail}");
    }

    #[test]
    fn a_risk_report_that_cannot_say_there_is_no_danger_is_unknown() {
        let mut unread = report(&[], Some(100.0));
        unread.unreadable = Some("RugCheck's report has no risks list".into());
        let case = Case {
            risk: Some(unread),
            ..Case::clean()
        };
        assert_eq!(case.status(NO_DANGER_RISK), Unknown);
        let danger_anyway = Case {
            risk: Some(RiskReport {
                unreadable: Some("a risk without a readable name and level".into()),
                ..report(&["danger"], Some(100.0))
            }),
            ..Case::clean()
        };
        assert_eq!(danger_anyway.status(NO_DANGER_RISK), Fail);
    }

    #[test]
    fn an_lp_figure_outside_0_to_100_or_not_finite_is_unknown() {
        for pct in [100.5, 1e9, -1.0, f64::NAN, f64::INFINITY] {
            let case = Case {
                risk: Some(report(&[], Some(pct))),
                ..Case::clean()
            };
            assert_eq!(case.status(LIQUIDITY_LOCKED), Unknown, "{pct}");
        }
    }

    #[test]
    fn holders_are_sorted_here_and_an_empty_list_is_unknown() {
        let mut whale_last = spread();
        whale_last.push(Holding {
            address: "Whale".into(),
            owner: Some("WhaleOwner".into()),
            amount: 600_000,
        });
        let case = Case {
            holders: Some(whale_last),
            ..Case::clean()
        };
        assert_eq!(case.status(HOLDERS_SPREAD), Fail);
        let empty = Case {
            holders: Some(Vec::new()),
            ..Case::clean()
        };
        assert_eq!(empty.status(HOLDERS_SPREAD), Unknown);
    }
}

mod readings_fail_closed {
    //! The mint's readers fed a hazardous extension list, mangled: its
    //! entries permuted, a harmless-looking copy listed before a hazard,
    //! names in another case, with white space or hidden characters, and
    //! the fields a check reads given wrong types or enumeration variants.
    //! No hazardous token is ever eligible.
    use super::*;
    use proptest::prelude::*;

    /// A hazard, and the same extension with the field a check reads at a
    /// harmless value (a decoy that a reader trusting the first entry of
    /// two would pass).
    fn hazard() -> impl Strategy<Value = (Value, Value)> {
        prop_oneof![
            Just((
                json!({"extension": "permanentDelegate", "state": {"delegate": "Deleg11111111111111111111111111111111111111"}}),
                json!({"extension": "permanentDelegate", "state": {"delegate": null}}),
            )),
            Just((
                json!({"extension": "transferHook", "state": {"authority": null, "programId": "Hook111111111111111111111111111111111111111"}}),
                json!({"extension": "transferHook", "state": {"authority": null, "programId": null}}),
            )),
            Just((
                json!({"extension": "defaultAccountState", "state": {"accountState": "frozen"}}),
                json!({"extension": "defaultAccountState", "state": {"accountState": "initialized"}}),
            )),
            Just((
                json!({"extension": "pausableConfig", "state": {"authority": "Pause111111111111111111111111111111111111111", "paused": false}}),
                json!({"extension": "pausableConfig", "state": {"authority": null, "paused": false}}),
            )),
            Just((
                json!({"extension": "mintCloseAuthority", "state": {"closeAuthority": "Close111111111111111111111111111111111111111"}}),
                json!({"extension": "mintCloseAuthority", "state": {"closeAuthority": null}}),
            )),
            Just((
                json!({"extension": "transferFeeConfig", "state": {"withheldAmount": 0,
                    "olderTransferFee": {"epoch": 0, "maximumFee": 1000, "transferFeeBasisPoints": 0},
                    "newerTransferFee": {"epoch": 900, "maximumFee": 1000, "transferFeeBasisPoints": 5000}}}),
                json!({"extension": "transferFeeConfig", "state": {"withheldAmount": 0,
                    "olderTransferFee": {"epoch": 0, "maximumFee": 1000, "transferFeeBasisPoints": 0},
                    "newerTransferFee": {"epoch": 0, "maximumFee": 1000, "transferFeeBasisPoints": 0}}}),
            )),
            Just((
                json!({"extension": "nonTransferable"}),
                json!({"extension": "cpiGuard", "state": {}}),
            )),
        ]
    }

    /// Values no field a check reads should be read as harmless from.
    fn wrong_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!(7)),
            Just(json!(true)),
            Just(json!([])),
            Just(json!({})),
            Just(json!("")),
            Just(json!("null")),
            Just(json!("false")),
            Just(json!("Initialized")),
            Just(json!(" initialized")),
            Just(json!("initialized\u{200b}")),
            Just(json!(-1)),
            Just(json!(1.5)),
        ]
    }

    const HIDDEN: [&str; 8] = [
        "\u{200b}", "\u{feff}", "\u{00ad}", "\u{2062}", "\u{180e}", "\u{202e}", " ", "\t",
    ];

    #[derive(Debug, Clone)]
    enum Mangle {
        /// The name in another case.
        Case,
        /// A hidden character or white space at a position of the name.
        Hidden(usize, usize),
        /// The decoy listed before the hazard.
        DecoyFirst,
        /// Each field of the hazard's state given a wrong value.
        WrongField(usize, Value),
        /// Nothing.
        Keep,
    }

    fn mangle() -> impl Strategy<Value = Mangle> {
        prop_oneof![
            Just(Mangle::Case),
            (0usize..40, 0usize..HIDDEN.len()).prop_map(|(at, h)| Mangle::Hidden(at, h)),
            Just(Mangle::DecoyFirst),
            (0usize..4, wrong_value()).prop_map(|(i, v)| Mangle::WrongField(i, v)),
            Just(Mangle::Keep),
        ]
    }

    fn apply(mangle: &Mangle, hazard: &Value, decoy: &Value) -> Vec<Value> {
        let mut entry = hazard.clone();
        let name = entry["extension"].as_str().unwrap().to_owned();
        match mangle {
            Mangle::Case => {
                let mut chars: Vec<char> = name.chars().collect();
                chars[0] = chars[0].to_ascii_uppercase();
                entry["extension"] = chars.into_iter().collect::<String>().into();
            }
            Mangle::Hidden(at, hidden) => {
                let mut mangled = name.clone();
                mangled.insert_str((*at).min(name.len()), HIDDEN[*hidden]);
                entry["extension"] = mangled.into();
            }
            Mangle::DecoyFirst => return vec![decoy.clone(), entry],
            Mangle::WrongField(index, value) => {
                if let Some(state) = entry.get_mut("state").and_then(Value::as_object_mut) {
                    let keys: Vec<String> = state.keys().cloned().collect();
                    if !keys.is_empty() {
                        let key = &keys[index % keys.len()];
                        if state[key].is_object() {
                            // A whole number is a fee, read as what it is
                            // (7 basis points scheduled is no hazard).
                            if value.as_u64().is_none() {
                                state[key]["transferFeeBasisPoints"] = value.clone();
                            }
                        } else if !state[key].is_null() {
                            state[key] = value.clone();
                        }
                    }
                }
            }
            Mangle::Keep => {}
        }
        vec![entry]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn no_hazardous_token_is_ever_eligible_however_its_answer_is_mangled(
            hazards in prop::collection::vec((hazard(), mangle()), 1..4),
            harmless in prop::collection::vec(
                prop::sample::select(crate::scan::mint::HARMLESS_EXTENSIONS.to_vec()), 0..3),
            order in prop::collection::vec(any::<u32>(), 8),
        ) {
            let mut extensions: Vec<Value> = harmless
                .iter()
                .map(|n| json!({"extension": n, "state": {}}))
                .collect();
            for ((hazard, decoy), mangle) in &hazards {
                extensions.extend(apply(mangle, hazard, decoy));
            }
            // A permutation of the list, the decoys kept before their hazard.
            let keys: Vec<u32> = (0..extensions.len()).map(|i| order[i % order.len()]).collect();
            let mut indexed: Vec<(usize, Value)> = extensions.into_iter().enumerate().collect();
            indexed.sort_by_key(|(i, _)| keys[*i]);
            let mut permuted: Vec<Value> = indexed.into_iter().map(|(_, v)| v).collect();
            // Decoys must stay before their hazard for the attack to mean
            // anything: put every decoy first.
            permuted.sort_by_key(|v| {
                hazards.iter().all(|((_, decoy), _)| v != decoy)
            });
            let checks = with_mint(Value::Array(permuted.clone())).checks();
            prop_assert!(!eligible(&checks), "{permuted:?}: {checks:?}");
        }
    }
}
