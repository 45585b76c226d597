//! The log's memory of its witnesses: its cases.

use crate::ports::witness_memory::WitnessMemory;
use std::future::Future;

/// Runs the witness memory's cases; `make_memory` must give a fresh, empty
/// memory each call, as two handles on it. Sizes are kept per witness and
/// may move down (a witness that lost its state); the witnessed checkpoint
/// only moves up (one of the same size replaces it), atomically under
/// concurrent keepers; a second handle reads what the first wrote.
pub async fn run_witness_memory<M, F, Fut>(make_memory: F)
where
    M: WitnessMemory,
    F: Fn() -> Fut,
    Fut: Future<Output = (M, M)>,
{
    let (memory, other) = make_memory().await;
    let empty = memory.read().await.unwrap();
    assert!(
        empty.sizes.is_empty() && empty.witnessed.is_none(),
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
    assert!(memory.keep_witnessed(5, five).await.unwrap());
    assert!(!memory.keep_witnessed(4, four).await.unwrap(), "never back");
    assert!(
        other.keep_witnessed(5, five_more).await.unwrap(),
        "same size, more cosignatures"
    );
    assert_eq!(
        memory.read().await.unwrap().witnessed,
        Some((5, five_more.to_owned()))
    );
    let big = u64::MAX - 1;
    let racers = (1..=8u64).map(|i| {
        let note = format!("log\n{}\nAAAA\n\n\u{2014} log {i}\n", big - 8 + i);
        let memory = &memory;
        async move { memory.keep_witnessed(big - 8 + i, &note).await.unwrap() }
    });
    futures_util::future::join_all(racers).await;
    assert_eq!(
        other.read().await.unwrap().witnessed.map(|(size, _)| size),
        Some(big),
        "the largest of concurrent keepers stays, whatever their order"
    );
}
