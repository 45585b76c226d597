//! The log's cosigning round against witnesses that answer each way the
//! specification allows (a fake `WitnessClient`): only verifying
//! cosignatures count, a size hint is followed once, a fork claim or a bad
//! proof raises the `log.witness_alarm` event against that witness and
//! stops the log signing only when the witness shows a checkpoint of the
//! log's key that the ledger does not extend, a larger tree a witness
//! names without showing it is an alarm against it, and failures skip the
//! witness. Before its first signature the log asks the witness what it
//! holds (an `add-checkpoint` of the empty tree: `old 0`, size 0).

use async_trait::async_trait;
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::ports::Recorded;
use freedom_shared::ports::conformance::decision;
use freedom_shared::ports::{InProcessWitnesses, WitnessMemory};
use freedom_shared::ports::{LedgerAppend, LedgerStore};
use freedom_shared::ports::{WitnessClient, WitnessReply};
use freedom_shared::service::{Log, LogError, WITNESS_ALARM};
use freedom_shared::tlog::cosignature::CosignerKey;
use freedom_shared::tlog::note::SigningKey;
use freedom_shared::tlog::policy::Policy;
use freedom_shared::tlog::witness::AddCheckpoint;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ORIGIN: &str = "fund.example.com/log";

/// How the fake witness answers a request (old size, checkpoint size).
type Behaviour = Box<dyn Fn(&AddCheckpoint, &str) -> Result<WitnessReply, String> + Send + Sync>;

struct Fake {
    behaviour: Behaviour,
    seen: Mutex<Vec<u64>>,
    /// What its monitoring read serves (404 when nothing).
    latest: Mutex<Option<String>>,
}

#[async_trait]
impl WitnessClient for Fake {
    async fn add_checkpoint(
        &self,
        _prefix: &str,
        body: &str,
        _timeout: Duration,
    ) -> Result<WitnessReply, String> {
        let request = AddCheckpoint::parse(body).expect("the log sends well-formed requests");
        self.seen.lock().unwrap().push(request.old);
        let text = &request.checkpoint[..request.checkpoint.find("\n\n").unwrap() + 1];
        (self.behaviour)(&request, text)
    }

    async fn latest_checkpoint(
        &self,
        _prefix: &str,
        _origin_hash: &str,
        _timeout: Duration,
    ) -> Result<WitnessReply, String> {
        match self.latest.lock().unwrap().clone() {
            Some(note) => reply(200, Some("text/plain"), note),
            None => reply(404, Some("text/plain"), "not found\n"),
        }
    }
}

fn reply(
    status: u16,
    content_type: Option<&str>,
    body: impl Into<String>,
) -> Result<WitnessReply, String> {
    Ok(WitnessReply {
        status,
        content_type: content_type.map(str::to_owned),
        body: body.into(),
    })
}

fn witness_key() -> CosignerKey {
    CosignerKey::from_seed("w1.example", [1; 32]).unwrap()
}

struct Setup {
    log: Log,
    events: Arc<Recorded>,
    fake: Arc<Fake>,
    memory: Arc<InProcessWitnesses>,
    _dir: tempfile::TempDir,
}

async fn setup(behaviour: Behaviour) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteLedgerStore::open(dir.path()).unwrap());
    for i in 0..5 {
        store
            .append(decision(&format!("d{i}"), "s", 1))
            .await
            .unwrap();
    }
    let policy = Policy::parse(&format!(
        "witness W1 {} http://w1.invalid\nquorum W1\n",
        witness_key().witness_key().to_text()
    ))
    .unwrap();
    let events = Arc::new(Recorded::default());
    let fake = Arc::new(Fake {
        behaviour,
        seen: Mutex::new(Vec::new()),
        latest: Mutex::new(None),
    });
    let memory = Arc::new(InProcessWitnesses::default());
    let log = Log::new(
        store as Arc<dyn LedgerStore>,
        ORIGIN,
        Some(SigningKey::from_seed(ORIGIN, [9; 32]).unwrap()),
    )
    .unwrap()
    .with_events(Arc::clone(&events) as _)
    .with_witnesses(policy, Arc::clone(&memory) as _, Arc::clone(&fake) as _);
    Setup {
        log,
        events,
        fake,
        memory,
        _dir: dir,
    }
}

fn alarms(events: &Recorded) -> usize {
    events
        .events()
        .iter()
        .filter(|e| e.detail_type == WITNESS_ALARM)
        .count()
}

#[tokio::test]
async fn a_verifying_cosignature_meets_the_quorum_and_is_served() {
    let setup = setup(Box::new(|_, text| {
        reply(
            200,
            Some("text/plain"),
            witness_key().cosign(text, 1_700_000_000).unwrap(),
        )
    }))
    .await;
    let round = setup.log.cosign(false).await.unwrap();
    assert!(round.quorum_met);
    let served = setup.log.witnessed().await.unwrap().unwrap();
    assert_eq!(served.size, 5);
    assert_eq!(served.cosignatures[0].name, "W1");
    assert_eq!(served.cosignatures[0].time, 1_700_000_000);
    assert_eq!(
        setup
            .memory
            .read()
            .await
            .unwrap()
            .sizes
            .values()
            .copied()
            .collect::<Vec<_>>(),
        [5]
    );
}

#[tokio::test]
async fn a_line_by_another_key_or_dated_far_ahead_does_not_count() {
    let stranger = CosignerKey::from_seed("w1.example", [2; 32]).unwrap();
    let setup = setup(Box::new(move |_, text| {
        reply(200, None, stranger.cosign(text, 1_700_000_000).unwrap())
    }))
    .await;
    let round = setup.log.cosign(false).await.unwrap();
    assert!(!round.quorum_met);
    assert_eq!(round.witnesses[0].outcome, "skipped");
    assert!(setup.log.witnessed().await.unwrap().is_none());

    let ahead = setup_future().await;
    assert!(!ahead.log.cosign(false).await.unwrap().quorum_met);
}

async fn setup_future() -> Setup {
    setup(Box::new(|_, text| {
        let far = chrono::Utc::now().timestamp() as u64 + 3_600;
        reply(200, None, witness_key().cosign(text, far).unwrap())
    }))
    .await
}

#[tokio::test]
async fn a_size_hint_is_followed_once_from_the_size_named() {
    let setup = setup(Box::new(|request, text| {
        if request.old == 3 {
            reply(
                200,
                None,
                witness_key().cosign(text, 1_700_000_000).unwrap(),
            )
        } else {
            reply(409, Some("text/x.tlog.size"), "3\n")
        }
    }))
    .await;
    let round = setup.log.cosign(false).await.unwrap();
    assert!(round.quorum_met, "{round:?}");
    assert_eq!(
        *setup.fake.seen.lock().unwrap(),
        [0, 0, 3],
        "the question of what it holds, then the round"
    );
    assert_eq!(alarms(&setup.events), 0);
}

/// Whether `request` is the log asking what the witness holds (the empty
/// tree from size 0), which a witness holding nothing cosigns.
fn asks_what_it_holds(request: &AddCheckpoint) -> bool {
    request.old == 0 && request.checkpoint.split('\n').nth(1) == Some("0")
}

fn refusals() -> [Behaviour; 2] {
    [
        Box::new(|_: &AddCheckpoint, _: &str| reply(422, Some("text/plain"), "inconsistent\n")),
        Box::new(|_: &AddCheckpoint, _: &str| reply(409, Some("text/plain"), "conflict\n")),
    ]
}

/// One witness cannot stop the log: a `422` or an unhinted `409` it does
/// not back with a checkpoint is an alarm against it, and the log goes on
/// signing (a k-of-n policy tolerates n − k bad witnesses).
#[tokio::test]
async fn a_fork_claim_without_evidence_is_an_alarm_against_the_witness() {
    for behaviour in refusals() {
        let setup = setup(behaviour).await;
        let round = setup.log.cosign(false).await.unwrap();
        assert_eq!(round.witnesses[0].outcome, "alarm", "{round:?}");
        assert!(
            round.witnesses[0]
                .detail
                .as_deref()
                .is_some_and(|d| d.contains("goes on signing")),
            "{round:?}"
        );
        assert!(!round.quorum_met);
        assert_eq!(alarms(&setup.events), 1);
        let event = &setup.events.events()[0];
        assert_eq!(event.detail["witness"], "W1");
        assert_eq!(event.detail["head"]["size"], 5);
        assert_eq!(
            setup.log.checkpoint().await.unwrap().head.size,
            5,
            "the log goes on signing"
        );
    }
}

/// Signing stops on evidence: the refusing witness serves, at its
/// monitoring read, a checkpoint signed by the log's key that the ledger
/// does not extend.
#[tokio::test]
async fn a_fork_claim_the_witness_shows_stops_the_log_signing() {
    for behaviour in refusals() {
        let setup = setup(behaviour).await;
        let other = freedom_shared::tlog::checkpoint::CheckpointSigner::new(
            SigningKey::from_seed(ORIGIN, [9; 32]).unwrap(),
        )
        .sign(freedom_shared::merkle::Head {
            size: 5,
            root_hash: freedom_shared::merkle::Digest([7; 32]),
        });
        *setup.fake.latest.lock().unwrap() = Some(other.to_string());
        let round = setup.log.cosign(false).await;
        assert!(
            matches!(&round, Err(LogError::RefusedToSign(reason)) if reason.contains("does not extend")),
            "the consultation before the first signature finds it: {round:?}"
        );
        assert!(
            matches!(
                setup.log.checkpoint().await,
                Err(LogError::RefusedToSign(_))
            ),
            "the log signs nothing more"
        );
        assert!(alarms(&setup.events) >= 1);
    }
}

/// A witness that names a larger tree than the log remembers, without
/// showing it, is an alarm against that witness: with `--new-log` the log
/// signs (the operator's word); it is never a reason to stop.
#[tokio::test]
async fn a_larger_tree_a_witness_names_but_does_not_show_is_an_alarm_against_it() {
    let setup = setup(Box::new(|request, text| {
        if asks_what_it_holds(request) {
            reply(409, Some("text/x.tlog.size"), "9\n")
        } else {
            reply(
                200,
                None,
                witness_key().cosign(text, 1_700_000_000).unwrap(),
            )
        }
    }))
    .await;
    assert_eq!(setup.log.checkpoint().await.unwrap().head.size, 5);
    assert_eq!(alarms(&setup.events), 1, "one alarm, against W1");
    let event = &setup.events.events()[0];
    assert_eq!(event.detail["witness"], "W1");
    assert!(
        event.detail["reason"]
            .as_str()
            .is_some_and(|r| r.contains("9 records")),
        "{event:?}"
    );
}

#[tokio::test]
async fn failures_skip_the_witness_without_an_alarm() {
    for behaviour in [
        Box::new(|_: &AddCheckpoint, _: &str| Err("no answer within 5s".to_owned())) as Behaviour,
        Box::new(|_: &AddCheckpoint, _: &str| reply(503, None, "")),
        Box::new(|_: &AddCheckpoint, _: &str| reply(429, None, "")),
        Box::new(|_: &AddCheckpoint, _: &str| reply(403, None, "")),
    ] {
        let setup = setup(behaviour).await;
        let round = setup.log.cosign(false).await.unwrap();
        assert_eq!(round.witnesses[0].outcome, "skipped");
        assert_eq!(alarms(&setup.events), 0);
    }
}
