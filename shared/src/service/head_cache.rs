//! Answers computed once per ledger head, and computed once even when many
//! ask at the same moment ([`HeadCache`]).
//!
//! Everything a read view shows is a function of the head it was read at,
//! so an answer is kept with the root it was computed for and served again
//! until the head moves; a new head replaces every answer of the old one.
//! Concurrent requests for the same key at the same head share one
//! computation (single flight): the first computes while the others wait
//! for its turn to end, then find its answer. So eight readers arriving
//! together after an append cost about what one costs, instead of eight
//! computations holding eight copies of the same data.
//!
//! Nothing here needs an async runtime: waiting is a `futures` mutex per
//! key, and each answer is served only for the root it was computed at,
//! so no reader is ever given an answer mixed from two heads.

use crate::merkle::Digest;
use futures_util::lock::Mutex as Turn;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// Answers for the latest head, by key (at most `capacity` of them, the
/// oldest dropped first), each computed once.
#[derive(Debug)]
pub(crate) struct HeadCache<K, V> {
    capacity: usize,
    state: Mutex<State<K, V>>,
}

#[derive(Debug)]
struct State<K, V> {
    /// The head whose answers are kept, and the answers, oldest first.
    latest: Option<(Digest, HashMap<K, V>, VecDeque<K>)>,
    /// The turn of each computation under way, by head and key.
    turns: HashMap<(Digest, K), Arc<Turn<()>>>,
}

impl<K, V> HeadCache<K, V> {
    /// A cache keeping at most `capacity` answers of the latest head.
    pub(crate) fn new(capacity: usize) -> HeadCache<K, V> {
        HeadCache {
            capacity: capacity.max(1),
            state: Mutex::new(State {
                latest: None,
                turns: HashMap::new(),
            }),
        }
    }
}

impl<K, V> Default for HeadCache<K, V> {
    /// A cache of at most 16 answers per head (a view's periods, say).
    fn default() -> HeadCache<K, V> {
        HeadCache::new(16)
    }
}

impl<K: Eq + Hash + Clone, V: Clone> HeadCache<K, V> {
    fn state(&self) -> std::sync::MutexGuard<'_, State<K, V>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The answer kept for `key` at the head whose root is `root`.
    pub(crate) fn get(&self, root: &Digest, key: &K) -> Option<V> {
        let state = self.state();
        let (kept, values, _) = state.latest.as_ref()?;
        (kept == root).then(|| values.get(key).cloned()).flatten()
    }

    /// Keeps `value` for `key` at `root`, dropping other heads' answers.
    pub(crate) fn put(&self, root: Digest, key: K, value: V) {
        let capacity = self.capacity;
        let mut state = self.state();
        let latest = match &mut state.latest {
            Some(latest) if latest.0 == root => latest,
            slot => slot.insert((root, HashMap::new(), VecDeque::new())),
        };
        let (_, values, order) = latest;
        if values.insert(key.clone(), value).is_none() {
            order.push_back(key);
        }
        while values.len() > capacity {
            match order.pop_front() {
                Some(oldest) => values.remove(&oldest),
                None => break,
            };
        }
    }

    /// The answer for `key` at `root`: kept, or computed by `compute` once
    /// however many ask at the same time (the others wait for it). A
    /// failed computation keeps nothing; the next in turn tries again.
    pub(crate) async fn get_or_compute<E, Fut>(
        &self,
        root: Digest,
        key: K,
        compute: impl FnOnce() -> Fut,
    ) -> Result<V, E>
    where
        Fut: Future<Output = Result<V, E>>,
    {
        if let Some(value) = self.get(&root, &key) {
            return Ok(value);
        }
        let turn = Arc::clone(
            self.state()
                .turns
                .entry((root, key.clone()))
                .or_insert_with(|| Arc::new(Turn::new(()))),
        );
        let result = {
            let _mine = turn.lock().await;
            match self.get(&root, &key) {
                Some(value) => Ok(value),
                None => match compute().await {
                    Ok(value) => {
                        self.put(root, key.clone(), value.clone());
                        Ok(value)
                    }
                    Err(error) => Err(error),
                },
            }
        };
        // The last one out takes the turn away (others still waiting hold
        // their own handle on it).
        let mut state = self.state();
        if let Some(current) = state.turns.get(&(root, key.clone()))
            && Arc::ptr_eq(current, &turn)
            && Arc::strong_count(&turn) == 2
        {
            state.turns.remove(&(root, key));
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn root(n: u8) -> Digest {
        crate::merkle::leaf_hash(&[n])
    }

    #[test]
    fn answers_are_kept_for_their_head_only_and_bounded() {
        let cache = HeadCache::new(2);
        cache.put(root(1), "a", 1);
        cache.put(root(1), "b", 2);
        assert_eq!(cache.get(&root(1), &"a"), Some(1));
        assert_eq!(cache.get(&root(2), &"a"), None, "another head's answer");
        cache.put(root(1), "c", 3);
        assert_eq!(cache.get(&root(1), &"a"), None, "the oldest is dropped");
        assert_eq!(cache.get(&root(1), &"c"), Some(3));
        cache.put(root(2), "a", 4);
        assert_eq!(cache.get(&root(1), &"c"), None, "a new head replaces all");
    }

    #[tokio::test]
    async fn concurrent_askers_share_one_computation_and_failures_keep_nothing() {
        let cache: HeadCache<&str, usize> = HeadCache::new(4);
        let computed = AtomicUsize::new(0);
        let ask = || {
            cache.get_or_compute(root(1), "k", || async {
                computed.fetch_add(1, Ordering::SeqCst);
                // Let the other askers arrive while this one computes.
                for _ in 0..10 {
                    tokio::task::yield_now().await;
                }
                Ok::<_, ()>(7)
            })
        };
        let answers = futures_util::future::join_all((0..8).map(|_| ask())).await;
        assert!(answers.iter().all(|a| *a == Ok(7)));
        assert_eq!(computed.load(Ordering::SeqCst), 1);
        assert!(cache.state().turns.is_empty(), "no turn is left behind");

        let failed = cache
            .get_or_compute(root(2), "k", || async { Err::<usize, _>("down") })
            .await;
        assert_eq!(failed, Err("down"));
        assert_eq!(cache.get(&root(2), &"k"), None);
    }
}
