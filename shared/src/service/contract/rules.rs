//! The contract view's rules, limits and scanner declaration, written from
//! the constants the code enforces: the domain states its own rules, so no
//! other crate needs those constants.

use crate::json::MAX_NESTING;
use crate::ports::ledger_store::MAX_PAGE_BYTES;
use crate::record::schema::{INEXPRESSIBLE, sensitive_rules};
use crate::record::{
    FUTURE_TOLERANCE_SECONDS, ID_PATTERN, MAX_ID_CHARS, MAX_NAME_CHARS, MAX_POSITIONS,
    MAX_REPORTED_ISSUES, MAX_TEXT_CHARS, MAX_URL_CHARS, RECONCILIATION_TOLERANCE, YEARS,
    decimal_json,
};
use crate::scan::{self, checks::CHECK_NAMES, experiments};
use crate::service::dashboard::{
    ALL, DEFAULT_PERIOD, MAX_CHART_POINTS, MAX_DECISION_TEXT_CHARS, MAX_DECISIONS, PERIODS, UNIT,
};
use crate::service::exports::{
    CSV_HEADER, FEED_ENTRIES, MAX_CONCURRENT_EXPORTS, MAX_EXPORT_PAGE_BYTES,
};
use crate::service::ledger::{DEFAULT_PAGE_LIMIT, MAX_BODY_BYTES, MAX_PAGE_LIMIT};
use crate::tlog::tiles::MAX_ENTRY_BYTES;
use crate::{SCANNER_MODE, SCANNER_VERSION};
use serde_json::{Value, json};

/// The rules a writer and a reader of the record rely on.
pub fn record_rules() -> Value {
    let tolerance = RECONCILIATION_TOLERANCE.normalize();
    let not_in_schema: serde_json::Map<String, Value> = INEXPRESSIBLE
        .iter()
        .map(|(rule, why)| ((*rule).to_owned(), json!(why)))
        .collect();
    json!({
        "identifiers": {"pattern": ID_PATTERN, "description": format!("id and strategyId: 1 to {MAX_ID_CHARS} characters of A-Z a-z 0-9 . _ : -")},
        "unknownFields": "refused: a public record carries nothing the contract does not name; duplicate keys are refused too",
        "numbers": "JSON numbers only (never strings, NaN or Infinity), exact decimals; a number must keep its exact value as an IEEE double (at most 15 significant digits) and stay below 1e15 in magnitude. equity, cash, cost, mark >= 0; quantity > 0 (long-only); flowSincePrevious any sign",
        "timestamps": format!("asOf is RFC 3339 with an explicit offset (Z or ±HH:MM), written in the years {} to {}, seconds 00 to 59 (a leap second :60 is refused); kept as written, compared as an instant. It may be at most {} minutes later than the service's clock (422 validation_failed, rule future_timestamp), so one mistyped year can never freeze a strategy or move the dashboard's window", YEARS.start(), YEARS.end(), FUTURE_TOLERANCE_SECONDS / 60),
        "reconciliation": {
            "tolerance": decimal_json(tolerance),
            "formula": format!("when positions is present, cash is required and |equity - (cash + sum(quantity * mark))| <= {tolerance}, computed in exact decimals; without positions, cash (when given) is part of equity: cash <= equity + {tolerance} (rule cash_exceeds_equity)")
        },
        "text": "text fields carry no control characters (C0, C1; prose may hold line breaks and tabs), no bidirectional embedding, override or isolate controls (U+202A-U+202E, U+2066-U+2069) or directional marks (U+200E, U+200F, U+061C), no line or paragraph separators (U+2028, U+2029), no interlinear annotation characters (U+FFF9-U+FFFB) and no noncharacters (U+FDD0-U+FDEF, U+FFFE, U+FFFF), rule control_character; nor tag characters (U+E0000-U+E007F) or noncharacters beyond the BMP, rule hidden_character; source.url is an absolute http(s) URL of printable ASCII (no spaces or controls; percent-encode anything else), stored exactly as sent",
        "json": format!("bodies are RFC 8259 JSON in UTF-8, nested at most {MAX_NESTING} levels deep (400 malformed_json beyond)"),
        "refusals": format!("a refused record lists each broken rule with its field path, at most {MAX_REPORTED_ISSUES}; a last more_issues entry counts the rest; a value sent is never echoed (a reconciliation refusal gives the computed cash + sum(quantity * mark), an out_of_order refusal the latest stored snapshot's asOf, both to name the fix)"),
        "notInSchema": {
            "note": "the record schemas state every rule of a new record except these, which JSON Schema cannot express; the service applies them too",
            "rules": not_in_schema
        },
        "crossField": {
            "note": "rules that relate one field or parameter to another, which JSON Schema cannot state: a request that is valid against the schemas alone may still be refused for them",
            "record": {
                "reconciliation": "with positions: |equity - (cash + sum(quantity * mark))| <= the tolerance (422)",
                "cash_exceeds_equity": "without positions: cash <= equity + the tolerance (422)",
                "entry_size": format!("the canonical form of the whole record is at most {MAX_ENTRY_BYTES} bytes (422)"),
                "body": format!("the body is at most {MAX_BODY_BYTES} bytes (413): up to {MAX_POSITIONS} positions are allowed, but not every schema-valid record of that many fits")
            },
            "query": {
                "proof": "seq <= size (400 invalid_query); size <= the head's size (404)",
                "consistency": "from <= to (400 invalid_query); to <= the head's size (404)"
            }
        },
        "baseline": "the first snapshot of a strategy establishes its baseline; it cannot establish a return",
        "ordering": "snapshots of one (strategyId, mode) are appended in increasing asOf: the same instant is duplicate_snapshot, an older one out_of_order; the id is checked first, so replaying an old record answers 200 unchanged; decisions may come in any order",
        "idempotency": "the same id with identical content (equal after RFC 8785 canonicalisation: key order, white space and number spelling such as 100 vs 100.00 do not matter) answers 200 unchanged and stores nothing; different content is 409 id_conflict",
        "comparisons": "use the same valuation timestamps across strategies for fair comparisons",
        "sensitiveContent": {"status": 422, "code": "sensitive_content", "rules": sensitive_rules(),
                             "note": "credentials, keys, seed phrases, the write token, URLs with credentials or secret parameters, card and bank account numbers and e-mail addresses are refused; the error names the field and rule, never the value"},
        "merkleLog": {
            "standard": "RFC 9162 section 2.1 (Certificate Transparency v2) Merkle Tree Hash",
            "leaf": "leaf bytes = RFC 8785 canonical JSON of the record as returned in `record`; leaf hash = SHA-256(0x00 || leaf bytes)",
            "node": "SHA-256(0x01 || left || right), the left subtree holding the largest power of two below n leaves",
            "emptyRoot": "SHA-256(\"\")",
            "seq": "records are numbered 1, 2, 3, ...; leaf index = seq - 1",
            "head": "{size, rootHash}: the Merkle Tree Hash of all size leaves; lowercase hex",
            "etag": "the page, the dashboard, the ledger, the series export and the feed carry ETag: \"<rootHash>\" and answer 304 to a matching If-None-Match; proofs (view=proof, view=consistency, format=tlog-proof) carry the hash of their bytes as ETag and answer 304 to it; only quoted entity tags match"
        },
        "periods": {"allowed": PERIODS, "sinceInception": ALL, "default": DEFAULT_PERIOD, "unit": UNIT, "tradingDay": "Monday to Friday by UTC date; holidays are not removed"},
        "exports": {
            "series": format!("GET /api/freedom-fund?view=series&strategyId=S&mode=M&format=csv|json[&after=SEQ]: every snapshot of one series in time order, in pages of at most {MAX_EXPORT_PAGE_BYTES} bytes; while more remain the answer carries Link: <url>; rel=\"next\" (and JSON's next), whose after is the page's last seq. CSV is RFC 4180 (CRLF) with the header {CSV_HEADER}; index is the growth index since the series' first snapshot and drawdown = index / running peak - 1, the same figures as period=all, bit for bit from any cursor; an empty field (JSON null) where returns are undefined; cash empty when the record has none. A page costs the same wherever its cursor is (it reads its rows, the snapshots of its first row's month before it, and the series' monthly roll-up); at most {MAX_CONCURRENT_EXPORTS} pages are computed at once, beyond that 503 busy with Retry-After: 1. A series nobody has written is an empty export"),
            "feed": format!("GET /feed.atom: Atom 1.0 (RFC 4287), the latest {FEED_ENTRIES} decisions newest first; entry id urn:freedom-fund:leaf:<leafHash>, updated = the decision's asOf, links to the page and to the record's inclusion proof")
        },
        "dashboard": dashboard_formulas(),
        "errors": "500 internal_error is a fault of the service's own (no Retry-After: retrying meets the same fault); 503 storage_unavailable is a store that is down, slow or busy (Retry-After: try again)",
        "never": "the service executes no orders, approves nothing, signs nothing, copies no wallet, and holds no broker credentials"
    })
}

/// The dashboard's formulas, one per metric (the page links every metric
/// to its entry here).
pub fn dashboard_formulas() -> Value {
    json!({
        "window": "ends at the fund's latest snapshot (end); its start steps back from end one calendar day at a time, counting steps that land on a weekday, until period are counted; with period=all it starts at the fund's first snapshot and each series' baseline is its own first snapshot",
        "inception": "the asOf of the ledger's first record (seq 1); ageDays = calendar days (UTC dates) from it to end",
        "baseline": "per (strategyId, mode): the last snapshot at or before the start, or its first snapshot if it began inside the window; the window's snapshots are those after the baseline up to end",
        "intervalReturn": "r_i = (E_i - F_i) / E_(i-1) - 1, with F_i = flowSincePrevious (flows land at interval end); from zero equity: 0 if nothing was gained, else undefined (return metrics null)",
        "twr": "prod(1 + r_i) - 1",
        "pnl": "E_end - E_baseline - sum(F), exact decimals",
        "netFlows": "sum(F) over the window",
        "maxDrawdown": "most negative growthIndex / runningPeak - 1, the index being 1 at the baseline (a first-interval fall counts); 0 if it never fell",
        "dailyReturns": "interval returns chained within each UTC date (the date of the interval's ending snapshot)",
        "volatility": "sample standard deviation (n - 1) of daily returns * sqrt(252); null with fewer than 2 days",
        "sharpe": "mean(daily) / sampleStd(daily) * sqrt(252), risk-free 0; null while withheld",
        "sortino": "mean(daily) / sqrt(mean over all days of min(r, 0)^2) * sqrt(252); null while withheld or with no downside",
        "withheld": "below 20 daily returns the sharpe, sortino, calmar and sharpeStats are null with withheld \"fewer than 20 daily returns\"; with zero deviation \"no variation\"; when 1 - g3*SR + (g4 - 1)/4*SR^2 <= 0 \"no standard error\" (never 0, NaN or a ratio of a flat series); dailyReturns counts the days with a return",
        "sharpeStats": "Bailey & Lopez de Prado on the n daily returns: SR = mean / sampleStd (perDay); g3 = skewness, the bias-adjusted estimator (pandas' skew); g4 = kurtosis, the bias-adjusted excess kurtosis + 3 (pandas' kurt + 3); standardError = sqrt((1 - g3*SR + (g4 - 1)/4*SR^2) / (n - 1)); interval95 = (SR -/+ 1.96*standardError) * sqrt(252); psr = Phi(SR / standardError), the probability that the true Sharpe is above 0 (quantstats' probabilistic_sharpe_ratio); minTrackRecord = 1 + (1 - g3*SR + (g4 - 1)/4*SR^2) * (1.6449 / SR)^2 daily returns for 95 % confidence, null when SR <= 0; enough = n >= minTrackRecord; moreTradingDays = ceil((minTrackRecord - n) / (n / trading days from the baseline to the latest snapshot)) when not enough. Every figure here and in benchmark can be recomputed from the series exports (view=series: each row's equity and flowSincePrevious give the interval returns, chained within each UTC date)",
        "deflatedSharpe": "trials N = the distinct strategies of the series' mode that have a snapshot in the ledger at the head (every series the dashboard lists in that mode, the scanner's experiments and retired ones included; a reader counts them from the ledger view); V = the sample variance (n - 1) of perDay among those of them with sharpeStats in the period; SR0 = sqrt(V) * ((1 - 0.5772156649) * InvPhi(1 - 1/N) + 0.5772156649 * InvPhi(1 - 1/(N e))); deflated = Phi((SR - SR0) * sqrt(n - 1) / sqrt(1 - g3*SR + (g4 - 1)/4*SR^2)); null when N < 2 or fewer than two series of the mode have sharpeStats",
        "benchmark": "against the mode's benchmark (the contract's benchmarks), over the UTC days on which both have a daily return (shared): excessReturn = prod(1 + r) - prod(1 + b); trackingError = sampleStd(r - b) * sqrt(252); informationRatio = mean(r - b) / sampleStd(r - b) * sqrt(252) (quantstats' information_ratio times sqrt(252)); beta = cov(r, b) / var(b); alpha = (mean(r) - beta * mean(b)) * 252 (quantstats' greeks); correlation = Pearson's; upCapture = mean(r) / mean(b) over the shared days with b > 0, downCapture the same over b < 0; all null with withheld \"fewer than 20 shared daily returns\"; null for the benchmark itself and in a mode without one",
        "annualizedReturn": "(1 + twr)^(252 / d) - 1 where d is the trading days from the baseline to the latest snapshot, only when d >= 252 (never annualised before a year of record); otherwise null",
        "calmar": "annualizedReturn / |maxDrawdown|; null unless both are defined and maxDrawdown < 0, and while withheld",
        "bestDay": "the largest daily return",
        "worstDay": "the smallest daily return",
        "currentDrawdown": "growthIndex / runningPeak - 1 at the latest snapshot",
        "longestDrawdownDays": "calendar days (UTC dates) from the snapshot where the growth index set a peak to the first snapshot at or above it again, or to the latest snapshot if it has not recovered; the longest such; 0 if it never fell",
        "monthly": "per UTC calendar month holding an interval: prod(1 + r_i) - 1 over the intervals whose ending snapshot falls in it (the first month from the baseline), as {month: YYYY-MM, return}",
        "yearly": "the same per UTC calendar year, as {year, return}",
        "underwater": "{asOf, drawdown} at each charted snapshot: growthIndex / runningPeak - 1",
        "flows": "{asOf, amount}: the non-zero flowSincePrevious after the baseline",
        "series": format!("the growth index at each snapshot from the baseline; beyond {MAX_CHART_POINTS} snapshots only the baseline and the last snapshot of each UTC day; beyond {MAX_CHART_POINTS} days, of each ISO week; beyond {MAX_CHART_POINTS} weeks, of each calendar month (underwater likewise); metrics are always computed from every snapshot"),
        "sinceInception": "period=all folds every snapshot of every series, as the windowed periods fold theirs; the fold through each series' last closed month (every month before its latest snapshot's: the ledger refuses older snapshots) is kept by the service and resumed, so a request reads only the open month, and the figures are bit for bit those of one pass over everything",
        "nulls": "a metric that cannot be computed is null, never 0 or NaN; a baseline-only strategy has baselineOnly true and null returns",
        "stale": "the strategy's latest snapshot is more than one trading day older than the fund's latest",
        "comparison": "a series is one (strategyId, mode). sharedTimestamps counts the instants in the window every series has; the reference times are the instants in the window used by at least half of the series; misaligned lists the series ({strategyId, mode}) that miss more than half of the reference times within their own span (baseline to latest snapshot); disjoint lists the series whose instants in the window all precede another series' first one there, or that have none in the window: while any is listed sharedTimestamps is 0, and disjoint names why; comparison.strategies[].twr is measured between the first and last shared instants. With period=all the instants are each series' charted points (see series)",
        "positions": "latest positions with value = quantity * mark and weight = value / equity (cashWeight = cash / equity)",
        "decisions": format!("decisions with asOf after the window's start, including those after the latest snapshot, newest first, at most {MAX_DECISIONS}; a summary, thesis, counterEvidence or nextCheck longer than {MAX_DECISION_TEXT_CHARS} characters is cut to its first {} and \"…\" with truncated: true (the ledger view at before = seq + 1 has the record whole)", MAX_DECISION_TEXT_CHARS - 1),
        "caching": "the same head always gives byte-identical JSON; ETag is the root hash (with -br or -gz appended inside the quotes for a compressed answer; If-None-Match matches any of them, and a matching conditional request reads nothing but the head)",
        "bound": "an answer stops adding strategies before 4 MiB of JSON: strategies with a live series first, then paper-only ones, each by id; next names the last strategy held (null when complete) and after=<it> continues; comparison covers the answer's series; strategyId (repeatable) answers only those strategies and their decisions"
    })
}

/// The limits a client meets; `local_listener` is the local HTTP
/// listener's (its timeouts and sizes), which the edge knows.
pub fn contract_limits(local_listener: Value) -> Value {
    json!({
        "maxBodyBytes": MAX_BODY_BYTES,
        "maxJsonNesting": MAX_NESTING,
        "futureTimestampToleranceSeconds": FUTURE_TOLERANCE_SECONDS,
        "ledgerPage": {"default": DEFAULT_PAGE_LIMIT, "max": MAX_PAGE_LIMIT, "maxBytes": MAX_PAGE_BYTES},
        "localListener": local_listener,
        "idLength": MAX_ID_CHARS,
        "nameLength": MAX_NAME_CHARS,
        "textLength": MAX_TEXT_CHARS,
        "urlLength": MAX_URL_CHARS,
        "positions": MAX_POSITIONS,
        "reconciliationTolerance": decimal_json(RECONCILIATION_TOLERANCE),
        "dashboardPeriods": PERIODS,
        "scannerScheduleMinutes": scan::LEDGER_GRID.num_minutes(),
        "scannerConcurrency": "one run at a time (lock); others answer 409 scanner_busy",
        "observationDedupMinutes": scan::DEDUP_WINDOW.num_minutes()
    })
}

/// Each check: what it reads and when it fails.
fn check_rules() -> Value {
    use scan::checks::*;
    let harmless = scan::mint::HARMLESS_EXTENSIONS.join(", ");
    json!({
        INDEXED_AND_PRICED: "DexScreener indexes a pool for the token with a USD price",
        LIQUIDITY: format!("its deepest pool holds at least ${} of liquidity", scan::MIN_LIQUIDITY_USD),
        MINT_AUTHORITY_REVOKED: "the mint's mintAuthority is null",
        FREEZE_AUTHORITY_REVOKED: "the mint's freezeAuthority is null",
        NO_DANGER_RISK: "RugCheck's report lists no danger-level risk",
        TOKEN_PROGRAM_KNOWN: format!("the mint account's owner is SPL Token ({}) or Token-2022 ({})", scan::mint::SPL_TOKEN_PROGRAM, scan::mint::TOKEN_2022_PROGRAM),
        NO_PERMANENT_DELEGATE: "no permanentDelegate extension with a delegate (it can move or burn anyone's tokens)",
        NO_TRANSFER_HOOK: "no transferHook extension with a programId (it can refuse sells)",
        TRANSFER_FEE_LOW: format!("the transferFeeConfig fee in force is at most {} basis points; any fee is charged on every paper fill, capped at maximumFee", scan::mint::MAX_TRANSFER_FEE_BPS),
        TRANSFERABLE: "not nonTransferable, defaultAccountState not frozen, pausableConfig not paused; a held token that turns so is valued at 0 and never sold",
        NO_MINT_CLOSE_AUTHORITY: "no mintCloseAuthority extension with a closeAuthority",
        EXTENSIONS_UNDERSTOOD: format!("every extension is one of the checked ones or known harmless ({harmless})"),
        HOLDERS_SPREAD: format!("the {} largest holders have at most this share of the supply: {}", scan::holders::TOP_HOLDERS, decimal_json(scan::holders::MAX_TOP_HOLDERS_SHARE)),
        LIQUIDITY_LOCKED: format!("RugCheck's lpLockedPct is at least {MIN_LP_LOCKED_PCT}; unknown where it gives none"),
    })
}

/// The scanner's declaration: version, checks, bounds and the fixed paper
/// experiments.
pub fn scanner_rules() -> Value {
    json!({
        "version": SCANNER_VERSION, "mode": SCANNER_MODE, "path": "/api/freedom-scanner",
        "checks": CHECK_NAMES,
        "checkRules": check_rules(),
        "minLiquidityUsd": decimal_json(scan::MIN_LIQUIDITY_USD),
        "eligible": "true exactly when every check passes; a check is unknown when its provider did not answer (by its own deadline in the run) or its answer does not say, and unknown is never pass; a mint or freeze authority, a delegate, a hook program or a close authority is unset only when the mint says null (absent or another type is unknown)",
        "provenance": format!("the report's provenance lists every provider answer the run used: {{provider, request, status, receivedAt, bodySha256, bytes, slot}}, request without secrets (an HTTP request as its method, the provider's origin and the path the scanner built; an RPC call as its method and params); each check names the entries it rests on by index (evidence), each paper fill by bodySha256. Each body, and each run's report as stored, is kept for {} days under the SHA-256 of its exact bytes: GET /api/freedom-scanner?view=evidence&sha256=<hex> answers them (404 once expired or unknown, 400 for a malformed hash); each paper snapshot's source.url ends with #report=sha256:<hex> of the run's report", scan::provenance::EVIDENCE_TTL.as_secs() / 86_400),
        "holders": format!("getTokenLargestAccounts (the top 20) and their owners by getMultipleAccounts, at most {} tokens a run, cached {} hours; the {} largest holders leaving out the burn address ({}) and accounts owned by a pool DexScreener lists for the token", scan::holders::MAX_HOLDER_FETCHES, scan::RISK_CACHE_TTL.num_hours(), scan::holders::TOP_HOLDERS, scan::holders::BURN_ADDRESS),
        "epoch": format!("the transfer fee in force is the newer one from its epoch on; the epoch is the RPC answer's slot / {} (mainnet's schedule); when no slot is known the higher of the two fees", scan::mint::SLOTS_PER_EPOCH),
        "providerText": format!("a symbol is kept only as 1 to {} characters of A-Z a-z 0-9 . _ : - $ that the sensitive-content guard passes, once control, bidirectional and format characters are removed; any other is shown as the mint's first {} characters with an event; a pool URL only as a printable http(s) URL of at most {} bytes", scan::text::MAX_SYMBOL_CHARS, scan::text::FALLBACK_SYMBOL_CHARS, scan::text::MAX_URL_BYTES),
        "riskCache": format!("per token of the universe, only the danger-level risks, names cut to {} characters, at most {} bytes of them", scan::MAX_RISK_NAME_CHARS, scan::MAX_RISK_BYTES),
        "dedup": format!("a token's observations closer than {} minutes are one; experiments advance at most once per {} minutes and once per {}-minute slot", scan::DEDUP_WINDOW.num_minutes(), scan::DEDUP_WINDOW.num_minutes(), scan::LEDGER_GRID.num_minutes()),
        "bounds": {"historyPerToken": scan::HISTORY_PER_TOKEN, "events": scan::MAX_EVENTS, "tradesPerBook": scan::TRADES_PER_BOOK},
        "riskCacheHours": scan::RISK_CACHE_TTL.num_hours(),
        "ledgerWrites": "a run writes only what it observed: when no token of the universe has a price (the market could not be read) it appends no registration and no paper snapshot, and an experiment whose book holds a token without a price this run is neither advanced nor recorded; the report's market event says why and what to check",
        "paper": experiments::declaration()
    })
}
