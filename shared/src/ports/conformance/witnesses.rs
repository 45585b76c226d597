//! The log's memory of its witnesses: its cases.

use crate::ports::witness_memory::{KeptCheckpoint, WitnessMemory};
use std::future::Future;

/// Runs the witness memory's cases; `make_memory` must give a fresh, empty
/// memory each call, as two handles on it. Sizes are kept per witness and
/// may move down (a witness that lost its state); the witnessed checkpoint
/// only moves up (one of the same size replaces it), atomically under
/// concurrent keepers; a second handle reads what the first wrote. The
/// witnessed history gains a checkpoint only when it is larger than every
/// one there, never changes one, keeps its times from decreasing with size
/// (a time below the latest kept is kept as that one), and reads from any
/// size in one call.
pub async fn run_witness_memory<M, F, Fut>(make_memory: F)
where
    M: WitnessMemory,
    F: Fn() -> Fut,
    Fut: Future<Output = (M, M)>,
{
    let (memory, other) = make_memory().await;
    let empty = memory.read().await.unwrap();
    assert!(
        empty.sizes.is_empty() && empty.witnessed.is_none() && empty.history_top.is_none(),
        "a new memory is empty"
    );
    memory.set_size("w1+01020304+AAAA", 7).await.unwrap();
    memory.set_size("w2+05060708+BBBB", 3).await.unwrap();
    memory.set_size("w1+01020304+AAAA", 2).await.unwrap();
    let sizes = other.read().await.unwrap().sizes;
    assert_eq!(
        sizes.get("w1+01020304+AAAA"),
        Some(&2),
        "a size may move down"
    );
    assert_eq!(sizes.get("w2+05060708+BBBB"), Some(&3));
    let five = "log\n5\nAAAA\n\n\u{2014} log x\n\u{2014} w1 y\n";
    let five_more = "log\n5\nAAAA\n\n\u{2014} log x\n\u{2014} w1 y\n\u{2014} w2 z\n";
    let four = "log\n4\nCCCC\n\n\u{2014} log q\n";
    assert!(memory.history(0, 10).await.unwrap().is_empty());
    assert!(memory.keep_witnessed(5, five, Some(1_000)).await.unwrap());
    assert!(
        !memory.keep_witnessed(4, four, Some(900)).await.unwrap(),
        "never back"
    );
    assert!(
        other
            .keep_witnessed(5, five_more, Some(1_010))
            .await
            .unwrap(),
        "same size, more cosignatures"
    );
    let state = memory.read().await.unwrap();
    assert_eq!(state.witnessed, Some((5, five_more.to_owned())));
    assert_eq!(state.history_top, Some(5));
    let kept = other.history(1, 10).await.unwrap();
    assert_eq!(
        kept,
        vec![KeptCheckpoint {
            size: 5,
            quorum_time: 1_000,
            note: five.to_owned()
        }],
        "a history entry never changes, nor does a smaller one join"
    );
    let nine = "log\n9\nDDDD\n\n\u{2014} log r\n\u{2014} w1 s\n";
    let twelve = "log\n12\nEEEE\n\n\u{2014} log t\n\u{2014} w1 u\n";
    assert!(memory.keep_witnessed(9, nine, Some(1_100)).await.unwrap());
    assert!(other.keep_witnessed(12, twelve, Some(1_200)).await.unwrap());
    assert_eq!(
        memory.history_times(6, 10).await.unwrap(),
        vec![(9, 1_100), (12, 1_200)],
        "from the earliest of size at least 6"
    );
    assert_eq!(memory.history_times(9, 1).await.unwrap(), vec![(9, 1_100)]);
    assert_eq!(
        memory.history_times(10, 5).await.unwrap(),
        vec![(12, 1_200)]
    );
    assert!(memory.history(13, 5).await.unwrap().is_empty());
    assert_eq!(
        memory
            .history(0, 2)
            .await
            .unwrap()
            .iter()
            .map(|k| (k.size, k.quorum_time, k.note.as_str()))
            .collect::<Vec<_>>(),
        vec![(5, 1_000, five), (9, 1_100, nine)]
    );
    assert_eq!(memory.read().await.unwrap().history_top, Some(12));
    let untimed = "log\n13\nFFFF\n\n\u{2014} log v\n";
    assert!(memory.keep_witnessed(13, untimed, None).await.unwrap());
    assert_eq!(
        other.read().await.unwrap().history_top,
        Some(12),
        "a checkpoint without a quorum time is served, not added to the history"
    );
    let early = "log\n14\nGGGG\n\n\u{2014} log w\n\u{2014} w1 x\n";
    assert!(memory.keep_witnessed(14, early, Some(1_150)).await.unwrap());
    assert_eq!(
        other.history_times(14, 1).await.unwrap(),
        vec![(14, 1_200)],
        "a time below the latest kept is kept as that one: times never decrease with size"
    );
    assert_eq!(
        other.history(14, 1).await.unwrap()[0].quorum_time,
        1_200,
        "the history and its times agree"
    );
    let big = u64::MAX - 1;
    let racers = (1..=8u64).map(|i| {
        let note = format!("log\n{}\nAAAA\n\n\u{2014} log {i}\n", big - 8 + i);
        let memory = &memory;
        async move {
            memory
                .keep_witnessed(big - 8 + i, &note, Some(2_000 + i))
                .await
                .unwrap()
        }
    });
    futures_util::future::join_all(racers).await;
    assert_eq!(
        other.read().await.unwrap().witnessed.map(|(size, _)| size),
        Some(big),
        "the largest of concurrent keepers stays, whatever their order"
    );
    let top = other.history(big - 8, 100).await.unwrap();
    assert_eq!(
        top.last().map(|k| (k.size, k.quorum_time)),
        Some((big, 2_008)),
        "the history ends at the largest, sizes compared exactly"
    );
    assert!(
        top.windows(2).all(|w| w[0].size < w[1].size),
        "the history only grows"
    );
}
