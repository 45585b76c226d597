//! The log signer's memory's cases.

use crate::ports::signer_memory::SignerMemory;
use std::future::Future;

/// Runs the signer memory's cases; `make_memory` must give a fresh, empty
/// memory each call. A memory starts empty, is set only from what it holds
/// (compare-and-swap, never moved by a stale writer), keeps the exact text,
/// and a second handle on the same memory sees what the first wrote.
pub async fn run_signer_memory<M, F, Fut>(make_memory: F)
where
    M: SignerMemory,
    F: Fn() -> Fut,
    Fut: Future<Output = (M, M)>,
{
    let (memory, other_handle) = make_memory().await;
    assert_eq!(
        memory.recall().await.unwrap(),
        None,
        "a new memory is empty"
    );
    let first = "log.example/x\n3\nAAAA\n\n\u{2014} log.example/x abc\n";
    let second = "log.example/x\n5\nBBBB\n\n\u{2014} log.example/x def\n";
    assert!(memory.remember(None, first).await.unwrap());
    assert_eq!(memory.recall().await.unwrap().as_deref(), Some(first));
    assert!(
        !memory.remember(None, second).await.unwrap(),
        "a writer that read nothing cannot overwrite a remembered checkpoint"
    );
    assert!(
        !memory.remember(Some(second), first).await.unwrap(),
        "a writer that read another checkpoint cannot overwrite"
    );
    assert!(memory.remember(Some(first), second).await.unwrap());
    assert_eq!(
        other_handle.recall().await.unwrap().as_deref(),
        Some(second),
        "another handle on the same memory reads it"
    );
    assert!(!other_handle.remember(Some(first), first).await.unwrap());
    assert!(!memory.describe().is_empty());
}
