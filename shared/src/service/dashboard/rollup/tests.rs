use super::*;
use crate::ports::ledger_store::LedgerAppend;
use crate::record::Record;
use crate::record::guard::Guard;
use chrono::Duration;
use proptest::prelude::*;

fn point(at: DateTime<Utc>) -> ChartPoint {
    ChartPoint {
        as_of: at.to_rfc3339(),
        at,
        equity: Value::from(1),
        index: 1.0,
        drawdown: 0.0,
    }
}

fn chart_of(instants: &[DateTime<Utc>]) -> Chart {
    let mut chart = Chart::default();
    for at in instants {
        chart.push(point(*at));
    }
    chart
}

fn kept(chart: &Chart) -> Vec<DateTime<Utc>> {
    chart.points.iter().map(|p| p.at).collect()
}

fn start() -> DateTime<Utc> {
    "2026-05-01T00:00:00Z".parse().unwrap()
}

#[test]
fn a_chart_keeps_every_point_up_to_the_limit_then_each_days_last() {
    let short: Vec<DateTime<Utc>> = (0..MAX_CHART_POINTS as i64)
        .map(|i| start() + Duration::minutes(15 * i))
        .collect();
    assert_eq!(kept(&chart_of(&short)), short);
    // 96 points a day for 10 days and one more: the baseline and the last
    // of each day.
    let long: Vec<DateTime<Utc>> = (0..961)
        .map(|i| start() + Duration::minutes(15 * i))
        .collect();
    let chart = chart_of(&long);
    let shown = kept(&chart);
    assert_eq!(chart.grain, Grain::Day);
    assert_eq!(shown.len(), 1 + 11);
    assert_eq!((shown[0], shown[shown.len() - 1]), (long[0], long[960]));
    for at in &shown[1..] {
        let next = *at + Duration::minutes(15);
        assert!(
            next > long[960] || next.date_naive() != at.date_naive(),
            "{at} is its day's last"
        );
    }
}

#[test]
fn beyond_the_limit_in_days_a_chart_keeps_each_weeks_last_then_each_months() {
    // Hourly for about 2.3 years: more days than the limit, fewer weeks.
    let hourly: Vec<DateTime<Utc>> = (0..20_000).map(|i| start() + Duration::hours(i)).collect();
    let chart = chart_of(&hourly);
    assert_eq!(chart.grain, Grain::Week);
    let shown = kept(&chart);
    assert_eq!(shown[0], hourly[0]);
    assert_eq!(shown[shown.len() - 1], hourly[hourly.len() - 1]);
    for pair in shown[1..].windows(2) {
        assert_ne!(
            pair[0].date_naive().iso_week(),
            pair[1].date_naive().iso_week()
        );
        // The last of its week: the next hour is another week.
        let next = pair[0] + Duration::hours(1);
        assert_ne!(
            next.date_naive().iso_week(),
            pair[0].date_naive().iso_week()
        );
    }
    assert!(shown.len() <= MAX_CHART_POINTS + 1);
    // Daily for 12 years: more weeks than the limit, so months.
    let daily: Vec<DateTime<Utc>> = (0..12 * 366).map(|i| start() + Duration::days(i)).collect();
    let chart = chart_of(&daily);
    assert_eq!(chart.grain, Grain::Month);
    assert_eq!(chart.points.len(), 1 + 12 * 12 + 1);
}

fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A snapshot record of `strategy` at `at`.
fn record(strategy: &str, at: DateTime<Utc>, equity: Decimal, flow: Decimal) -> Record {
    let text = serde_json::json!({
        "id": format!("{strategy}-{}", at.timestamp()), "type": "snapshot", "visibility": "public",
        "mode": "paper", "strategyId": strategy, "strategyName": format!("Strategy {strategy}"),
        "asOf": timestamp(at), "source": {"name": "test", "url": "https://example.com/test"},
        "currency": "USD", "equity": equity.to_string().parse::<serde_json::Number>().unwrap(),
        "flowSincePrevious": flow.to_string().parse::<serde_json::Number>().unwrap()
    })
    .to_string();
    Record::parse(text.as_bytes(), &Guard::default(), at + Duration::days(1)).unwrap()
}

/// A snapshot of series "s" at `at`.
fn snapshot(at: DateTime<Utc>, equity: Decimal, flow: Decimal) -> Snapshot {
    match record("s", at, equity, flow) {
        Record::Snapshot(snapshot) => snapshot,
        Record::Decision(_) => unreachable!("a snapshot"),
    }
}

/// Gaps of 1 to 500 hours (crossing days, weeks, months and years), with
/// returns of ±20 % and flows now and then.
fn series_strategy() -> impl Strategy<Value = Vec<Snapshot>> {
    prop::collection::vec(
        (1i64..500, -2000i64..2000, prop::bool::weighted(0.1)),
        1..200,
    )
    .prop_map(|steps| {
        let mut at: DateTime<Utc> = "2025-12-01T14:00:00Z".parse().unwrap();
        let mut equity = Decimal::new(100_000, 2);
        let mut series = vec![snapshot(at, equity, Decimal::ZERO)];
        for (gap, return_bp, deposit) in steps {
            at += Duration::hours(gap);
            let flow = if deposit {
                Decimal::new(5_000, 2)
            } else {
                Decimal::ZERO
            };
            equity = (equity * (Decimal::ONE + Decimal::new(return_bp, 4))).round_dp(2) + flow;
            series.push(snapshot(at, equity, flow));
        }
        series
    })
}

fn one_pass(series: &[Snapshot]) -> SeriesFold {
    let mut fold = SeriesFold::default();
    for (seq, s) in series.iter().enumerate() {
        fold.push(seq as u64 + 1, s);
    }
    fold
}

fn view_json(fold: &SeriesFold, series: &[Snapshot]) -> String {
    view_json_with(fold, series, &WitnessTable::unwitnessed())
}

fn view_json_with(fold: &SeriesFold, series: &[Snapshot], table: &WitnessTable) -> String {
    let latest = &series[series.len() - 1];
    let view = fold
        .clone()
        .finish(
            series.len() as u64,
            latest,
            latest.header.as_of.instant(),
            table,
        )
        .view;
    serde_json::to_string(&view).unwrap()
}

/// A witnessed history in which record `seq` entered a checkpoint
/// `lags[seq - 1]` seconds after its valuation (checkpoints of one record
/// each), through record `through`.
fn history(series: &[Snapshot], lags: &[i64], through: usize) -> WitnessTable {
    let kept = series[..through]
        .iter()
        .zip(lags)
        .enumerate()
        .map(|(i, (s, lag))| {
            let time = s.header.as_of.instant().timestamp() + lag;
            (i as u64 + 1, u64::try_from(time).unwrap())
        })
        .collect();
    WitnessTable::new(1, kept)
}

proptest! {
    #[test]
    fn a_roll_up_stored_at_any_month_resumes_to_one_pass(series in series_strategy(), pick in 0usize..1000) {
        // Every month start inside the series is a place a roll-up ends.
        let month_starts: Vec<usize> = (1..series.len())
            .filter(|&i| {
                let (a, b) = (series[i - 1].header.as_of.instant(), series[i].header.as_of.instant());
                (a.year(), a.month()) != (b.year(), b.month())
            })
            .collect();
        let split = if month_starts.is_empty() { series.len() } else { month_starts[pick % month_starts.len()] };
        let mut rolled = one_pass(&series[..split]);
        let stored = serde_json::to_string(&rolled).unwrap();
        rolled = serde_json::from_str(&stored).unwrap();
        for (i, s) in series.iter().enumerate().skip(split) {
            rolled.push(i as u64 + 1, s);
        }
        let whole = one_pass(&series);
        prop_assert_eq!(&rolled, &whole);
        prop_assert_eq!(view_json(&rolled, &series), view_json(&whole, &series));
    }

    #[test]
    fn a_witnessed_roll_up_resolved_at_any_time_resumes_to_one_pass(
        series in series_strategy(),
        lags in prop::collection::vec(-5_000i64..20_000, 201),
        pick in 0usize..1000,
        witnessed_at_split in 0usize..1000,
    ) {
        let split = 1 + pick % series.len();
        // When the roll-up was made, a prefix of its records was witnessed
        // (the history only grows: never more than is witnessed now, below).
        let early_through = (witnessed_at_split % (split + 1)).min(series.len() - 1);
        let early = history(&series, &lags, early_through);
        let mut rolled = SeriesFold::new(true);
        for (i, s) in series[..split].iter().enumerate() {
            rolled.push(i as u64 + 1, s);
        }
        rolled.resolve(&early);
        let stored = serde_json::to_string(&rolled).unwrap();
        rolled = serde_json::from_str(&stored).unwrap();
        for (i, s) in series.iter().enumerate().skip(split) {
            rolled.push(i as u64 + 1, s);
        }
        let mut whole = SeriesFold::new(true);
        for (i, s) in series.iter().enumerate() {
            whole.push(i as u64 + 1, s);
        }
        // Now every record but the last is witnessed.
        let now = history(&series, &lags, series.len() - 1);
        rolled.resolve(&now);
        whole.resolve(&now);
        prop_assert_eq!(&rolled, &whole);
        prop_assert_eq!(view_json_with(&rolled, &series, &now), view_json_with(&whole, &series, &now));
        let view: serde_json::Value = serde_json::from_str(&view_json_with(&whole, &series, &now)).unwrap();
        let witnessed = &lags[..series.len() - 1];
        prop_assert_eq!(view["recording"]["pending"].as_u64(), Some(1));
        prop_assert_eq!(
            view["recording"]["late"].as_u64(),
            Some(witnessed.iter().filter(|lag| **lag > 3_600).count() as u64)
        );
        // A lag below −60 s is a clock conflict: counted apart, never on
        // time, and left out of the largest lag.
        let conflicts = witnessed.iter().filter(|lag| **lag < -60).count() as u64;
        prop_assert_eq!(view["recording"]["clockConflict"].as_u64(), Some(conflicts));
        prop_assert_eq!(
            view["recording"]["onTime"].as_u64(),
            Some(witnessed.iter().filter(|lag| (-60..=3_600).contains(*lag)).count() as u64)
        );
        prop_assert_eq!(
            view["recording"]["maxLagSeconds"].as_i64(),
            witnessed.iter().filter(|lag| **lag >= -60).max().copied()
        );
    }

    #[test]
    fn the_roll_up_view_equals_the_metrics_of_the_whole_series(series in series_strategy()) {
        let valuations: Vec<Valuation> = series
            .iter()
            .map(|s| Valuation { at: s.header.as_of.instant(), equity: s.equity, flow: s.flow_since_previous })
            .collect();
        let reference = analytics::metrics(&valuations);
        let latest = &series[series.len() - 1];
        let view = one_pass(&series).finish(series.len() as u64, latest, latest.header.as_of.instant(), &WitnessTable::unwitnessed()).view;
        prop_assert_eq!(view.metrics.twr, reference.twr);
        prop_assert_eq!(view.metrics.sharpe, reference.sharpe);
        prop_assert_eq!(view.metrics.longest_drawdown_days, reference.longest_drawdown_days);
        prop_assert_eq!(view.monthly.len(), reference.monthly.len());
        // Each charted point carries the index of its snapshot.
        for point in &view.series {
            let i = series.iter().position(|s| s.header.as_of.as_str() == point.as_of).unwrap();
            prop_assert_eq!(point.index, reference.index[i]);
        }
        prop_assert_eq!(view.flows.len(), series[1..].iter().filter(|s| !s.flow_since_previous.is_zero()).count());
    }
}

#[cfg(feature = "embedded")]
mod since_inception {
    use super::*;
    use crate::adapters::embedded::SqliteLedgerStore;
    use crate::ports::ledger_store::{AppendOutcome, Candidate};
    use crate::service::dashboard::{Dashboards, Period};

    async fn append(store: &SqliteLedgerStore, record: &Record) {
        let outcome = store.append(Candidate::new(record)).await.unwrap();
        assert!(
            matches!(outcome, AppendOutcome::Created { .. }),
            "{outcome:?}"
        );
    }

    async fn since_inception(store: &SqliteLedgerStore) -> bytes::Bytes {
        Dashboards::new(std::sync::Arc::new(store.clone()))
            .get(Period::All)
            .await
            .unwrap()
            .json
    }

    fn database(dir: &tempfile::TempDir) -> rusqlite::Connection {
        rusqlite::Connection::open(
            dir.path()
                .join(crate::adapters::embedded::ledger_store::DATABASE_FILE),
        )
        .unwrap()
    }

    fn rollups(dir: &tempfile::TempDir) -> Vec<(String, i64, i64)> {
        let db = database(dir);
        let mut statement = db
            .prepare("SELECT strategy_id, from_ns, through_seq FROM rollups ORDER BY strategy_id")
            .unwrap();
        statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// Three months of 6-hourly snapshots for two series, appended a week at
    /// a time: at every head, since inception from the stored roll-ups is
    /// byte for byte what a store without them (or with an unreadable one)
    /// computes from every snapshot.
    #[tokio::test]
    async fn since_inception_from_roll_ups_equals_a_full_recomputation_at_every_head() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteLedgerStore::open(dir.path()).unwrap();
        let begin: DateTime<Utc> = "2026-02-20T00:00:00Z".parse().unwrap();
        let mut equity = [Decimal::new(100_000, 2), Decimal::new(50_000, 2)];
        let mut step = 0i64;
        for week in 0..14 {
            for _ in 0..28 {
                let at = begin + Duration::hours(6 * step);
                for (i, strategy) in ["a", "b"].into_iter().enumerate() {
                    // A deterministic walk: ±3 %, and a deposit on day 10 of b.
                    let bp = ((step * 37 + i as i64 * 11) % 600) - 290;
                    let flow = if i == 1 && step == 40 {
                        Decimal::new(10_000, 2)
                    } else {
                        Decimal::ZERO
                    };
                    equity[i] =
                        (equity[i] * (Decimal::ONE + Decimal::new(bp, 4))).round_dp(2) + flow;
                    append(&store, &record(strategy, at, equity[i], flow)).await;
                }
                step += 1;
            }
            let first = since_inception(&store).await;
            let from_rollups = since_inception(&store).await;
            assert_eq!(
                from_rollups, first,
                "week {week}: a second reader uses the roll-ups"
            );
            let kept = rollups(&dir);
            database(&dir).execute("DELETE FROM rollups", []).unwrap();
            let recomputed = since_inception(&store).await;
            assert_eq!(
                recomputed, first,
                "week {week}: the same as from every snapshot"
            );
            assert_eq!(
                rollups(&dir),
                kept,
                "the recomputation stores the same roll-ups"
            );
            if !kept.is_empty() {
                database(&dir)
                    .execute("UPDATE rollups SET state = '{\"not\": 1}'", [])
                    .unwrap();
                assert_eq!(
                    since_inception(&store).await,
                    first,
                    "week {week}: unreadable state"
                );
                // The reader that could not read them replaced them.
                let db = database(&dir);
                let mut statement = db.prepare("SELECT state FROM rollups").unwrap();
                let states: Vec<String> = statement
                    .query_map([], |r| r.get(0))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                for state in states {
                    let readable = serde_json::from_str::<SeriesFold>(&state).is_ok();
                    assert!(readable, "week {week}: {state}");
                }
            }
        }
        // By the end, each series is rolled up through May: the open month
        // is all a request folds.
        let kept = rollups(&dir);
        assert_eq!(kept.len(), 2);
        let may: DateTime<Utc> = "2026-05-01T00:00:00Z".parse().unwrap();
        for (_, from, _) in &kept {
            assert_eq!(*from, may.timestamp_nanos_opt().unwrap());
        }
    }
}
