//! # freedom-verify
//!
//! Checks Freedom Fund's public record the way a sceptical reader would,
//! trusting nothing but the log's verifier key (docs/log.md, "The log to
//! the C2SP standard", and its trust model).
//!
//! **Online** ([`verify_log`]): fetch the checkpoint and check its
//! signature; fetch every entry bundle and re-derive each leaf hash and the
//! root, which must be the signed one; fetch every hash tile and compare it
//! with the tree the leaves make; compare each record of the ledger view
//! with its leaf; and, given the checkpoint seen last (the state file),
//! check that the new tree extends it, with the log's consistency proof and
//! from the leaves themselves. Then the new checkpoint is the one to keep.
//!
//! **Offline** ([`verify_proof_file`]): one `.tlog-proof` (c2sp.org/tlog-proof)
//! and the record it proves.
//!
//! **Witnessed** (both, given a witness policy, c2sp.org/tlog-policy): the
//! checkpoint must also carry cosignatures meeting the policy's quorum
//! ([`check_witnesses`]): lines from keys the policy does not list are
//! ignored, a line from a listed key that does not verify is a failure, and
//! so is a cosignature dated more than ten minutes ahead of the clock.
//!
//! **Witnessed time** (given a policy): a proof's line says when the record
//! was in the log by, on whose word, and a snapshot's lag; `--timeline`
//! ([`verify_timeline`]) checks the time the service keeps for each
//! witnessed checkpoint (never earlier than its cosignatures allow, never
//! decreasing with size), recomputes every series' recording block from the
//! log and those times (clock conflicts apart) and compares it with the
//! dashboard's.
//!
//! **Monitor** ([`monitor`]): the same checks kept up pass after pass, on
//! the new entries only, with the ledger's rules on each new record, and
//! alarms with evidence that stands alone.
//!
//! A result is one [`Verified`] line, or the first [`Failure`].

pub mod monitor;
mod timeline;
pub use timeline::{
    CLOCK_TOLERANCE_SECONDS, RECORDING_WINDOW_SECONDS, quorum_time, verify_timeline,
};

use freedom_tlog::canonical::canonical_json;
use freedom_tlog::checkpoint::Checkpoint;
use freedom_tlog::merkle::{Digest, Frontier, Head, leaf_hash, root_of};
use freedom_tlog::note::{VerifierKey, split_note};
use freedom_tlog::policy::Policy;
use freedom_tlog::proof::{TlogProof, verify_consistency};
use freedom_tlog::tiles::{TILE_WIDTH, TileKind, TilePath, level_width, split_bundle, tiles_of};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// Why the record could not be verified.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The log says something it cannot prove, or contradicts itself or the
    /// checkpoint kept: the first discrepancy found.
    #[error("{0}")]
    Discrepancy(String),
    /// The check could not be made (the service unreachable, a file
    /// unreadable): nothing is known either way.
    #[error("{0}")]
    CannotCheck(String),
}

fn discrepancy(message: impl Into<String>) -> Failure {
    Failure::Discrepancy(message.into())
}

/// What was verified, as one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified(pub String);

/// The checkpoint a reader keeps between runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct State {
    /// The log's origin.
    pub origin: String,
    /// The tree size it signs.
    pub size: u64,
    /// Its root, hex.
    pub root_hash: Digest,
    /// The signed checkpoint itself (evidence, should the log ever fork).
    pub checkpoint: String,
}

impl State {
    /// Reads the state file; `None` when it does not exist yet.
    pub fn load(path: &Path) -> Result<Option<State>, Failure> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                Failure::CannotCheck(format!(
                    "the state file {} is not readable: {e}",
                    path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Failure::CannotCheck(format!(
                "cannot read the state file {}: {e}",
                path.display()
            ))),
        }
    }

    /// Writes the state file whole (a temporary file renamed over it).
    pub fn store(&self, path: &Path) -> Result<(), Failure> {
        let temporary = path.with_extension("tmp");
        let text = serde_json::to_string_pretty(self).expect("a state serialises");
        std::fs::write(&temporary, text + "\n")
            .and_then(|()| std::fs::rename(&temporary, path))
            .map_err(|e| {
                Failure::CannotCheck(format!(
                    "cannot write the state file {}: {e}",
                    path.display()
                ))
            })
    }
}

/// Reads the service over HTTP.
#[derive(Debug, Clone)]
pub struct Service {
    base: url::Url,
    http: reqwest::Client,
}

impl Service {
    /// The service at `base` (e.g. `https://fund.example.com/`).
    pub fn new(base: &str) -> Result<Service, Failure> {
        let mut base = url::Url::parse(base)
            .map_err(|e| Failure::CannotCheck(format!("{base} is not a URL: {e}")))?;
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| Failure::CannotCheck(format!("no HTTP client: {e}")))?;
        Ok(Service { base, http })
    }

    /// One GET: the answer (any status) and its body, or why there was
    /// none. A body past [`MAX_BODY_BYTES`] is no answer: nothing this
    /// crate reads is larger (an entry bundle is at most 256 entries of
    /// 64 KiB), so a log or witness that streams more is not read further.
    pub(crate) async fn fetch(&self, path: &str) -> Fetched {
        let Ok(url) = self.base.join(path.trim_start_matches('/')) else {
            return Fetched::Silent(format!("bad path {path}"));
        };
        let mut answer = match self.http.get(url.clone()).send().await {
            Ok(answer) => answer,
            Err(error) => return Fetched::Silent(format!("cannot fetch {url}: {error}")),
        };
        let status = answer.status().as_u16();
        let mut body = Vec::new();
        loop {
            match answer.chunk().await {
                Ok(Some(chunk)) if body.len() + chunk.len() <= MAX_BODY_BYTES => {
                    body.extend_from_slice(&chunk);
                }
                Ok(Some(_)) => {
                    return Fetched::Silent(format!(
                        "{url} answered more than {MAX_BODY_BYTES} bytes"
                    ));
                }
                Ok(None) => return Fetched::Answer(status, body),
                Err(error) => return Fetched::Silent(format!("cannot read {url}: {error}")),
            }
        }
    }

    /// The body at `path`, which must answer with success.
    async fn get(&self, path: &str) -> Result<Vec<u8>, Failure> {
        match self.fetch(path).await {
            Fetched::Answer(status, body) if (200..300).contains(&status) => Ok(body),
            Fetched::Answer(status, body) => Err(Failure::CannotCheck(format!(
                "{path} answered {status}: {}",
                String::from_utf8_lossy(&body).trim()
            ))),
            Fetched::Silent(why) => Err(Failure::CannotCheck(why)),
        }
    }
}

/// The most bytes one answer may have.
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// One answer of the service, or why there was none at all.
pub(crate) enum Fetched {
    /// An HTTP answer (any status) and its body.
    Answer(u16, Vec<u8>),
    /// No answer: the network, a timeout, a body past [`MAX_BODY_BYTES`].
    Silent(String),
}

/// One entry of the ledger view.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LedgerEntry {
    seq: u64,
    leaf_hash: Digest,
    record: serde_json::Value,
}

/// A page of the ledger view.
#[derive(Deserialize)]
struct LedgerPage {
    head: Head,
    entries: Vec<LedgerEntry>,
    next: Option<u64>,
}

/// The online check: see the crate's documentation. With `state`, the
/// checkpoint kept there must be a prefix of the new one, which then
/// replaces it.
pub async fn verify_log(
    service: &Service,
    key: &VerifierKey,
    state: Option<&Path>,
    policy: Option<&Policy>,
) -> Result<Verified, Failure> {
    check_policy_trusts(policy, key)?;
    let note = String::from_utf8(service.get("log/checkpoint").await?)
        .map_err(|_| discrepancy("the checkpoint is not UTF-8"))?;
    let checkpoint = Checkpoint::open(&note, key)
        .map_err(|e| discrepancy(format!("the checkpoint does not verify: {e}")))?;
    let witnessed = policy
        .map(|policy| check_witnesses(&note, policy, now()))
        .transpose()?
        .unwrap_or_default();
    let size = checkpoint.size;
    let leaves = fetch_leaves(service, &checkpoint).await?;
    let hashes: Vec<Digest> = leaves.iter().map(|leaf| leaf_hash(leaf)).collect();
    check_hash_tiles(service, size, &hashes).await?;
    check_ledger_view(service, size, &leaves).await?;

    // Consistency with the checkpoint kept.
    let mut consistent = String::new();
    if let Some(path) = state {
        if let Some(previous) = State::load(path)? {
            check_extends(service, &previous, &checkpoint, &hashes).await?;
            consistent = format!(
                ", consistent with the checkpoint kept (size {})",
                previous.size
            );
        }
        State {
            origin: checkpoint.origin.clone(),
            size,
            root_hash: checkpoint.root,
            checkpoint: note.clone(),
        }
        .store(path)?;
    }
    Ok(Verified(format!(
        "OK {} size {size} root {}: signature valid, {size} entries hash to the root, every tile and record matches{consistent}{witnessed}",
        checkpoint.origin, checkpoint.root
    )))
}

/// Every leaf of the checkpoint's tree, from the entry bundles, checked to
/// hash to its root.
async fn fetch_leaves(service: &Service, checkpoint: &Checkpoint) -> Result<Vec<Vec<u8>>, Failure> {
    let size = checkpoint.size;
    let leaves = fetch_entries(service, 0, size).await?;
    let mut frontier = Frontier::empty();
    leaves
        .iter()
        .for_each(|leaf| frontier.push(leaf_hash(leaf)));
    if frontier.root() != checkpoint.root {
        return Err(discrepancy(format!(
            "the {size} entries do not hash to the checkpoint's root: an entry was changed, added or removed"
        )));
    }
    Ok(leaves)
}

/// The entries from `start` to `end` (0-based, exclusive) from the entry
/// bundles of a tree of at least `end` leaves (eight requests at a time),
/// each bundle checked to hold the entries its width says.
pub(crate) async fn fetch_entries(
    service: &Service,
    start: u64,
    end: u64,
) -> Result<Vec<Vec<u8>>, Failure> {
    use futures_util::StreamExt as _;
    let bundles = (start / TILE_WIDTH..end.div_ceil(TILE_WIDTH)).map(|index| async move {
        let width = (end - index * TILE_WIDTH).min(TILE_WIDTH);
        let path = tile_path(TileKind::Entries, index, width);
        let body = service.get(&format!("log/tile/{path}")).await?;
        let bundle = split_bundle(&body)
            .ok_or_else(|| discrepancy(format!("entry bundle {path} is not a bundle")))?;
        if bundle.len() as u64 != width {
            return Err(discrepancy(format!(
                "entry bundle {path} holds {} entries, not {width}",
                bundle.len()
            )));
        }
        let skip = start.saturating_sub(index * TILE_WIDTH) as usize;
        Ok(bundle
            .into_iter()
            .skip(skip)
            .map(<[u8]>::to_vec)
            .collect::<Vec<_>>())
    });
    let mut entries = Vec::with_capacity(usize::try_from(end - start).unwrap_or(0));
    let mut answers = futures_util::stream::iter(bundles).buffered(8);
    while let Some(bundle) = answers.next().await {
        entries.extend(bundle?);
    }
    Ok(entries)
}

/// Every hash tile of a tree of `size`, against the tree the leaf `hashes`
/// make.
async fn check_hash_tiles(service: &Service, size: u64, hashes: &[Digest]) -> Result<(), Failure> {
    for (tile, hashes_expected) in &tiles_of(hashes) {
        let width = level_width(size, u32::from(tile.level)) - tile.index * TILE_WIDTH;
        let width = width.min(TILE_WIDTH);
        let path = tile_path(TileKind::Hashes(tile.level), tile.index, width);
        let served = service.get(&format!("log/tile/{path}")).await?;
        let expected_bytes: Vec<u8> = hashes_expected[..width as usize]
            .iter()
            .flat_map(|h| h.0)
            .collect();
        if served != expected_bytes {
            return Err(discrepancy(format!(
                "hash tile {path} differs from the tree the entries make"
            )));
        }
    }
    Ok(())
}

/// Each record of the ledger view, page by page, against its leaf: every
/// one of the `size` leaves shown once, in its canonical form and hash.
async fn check_ledger_view(
    service: &Service,
    size: u64,
    leaves: &[Vec<u8>],
) -> Result<(), Failure> {
    let mut before = size.checked_add(1);
    let mut seen = 0u64;
    while let Some(cursor) = before {
        let page = service
            .get(&format!(
                "api/freedom-fund?view=ledger&limit=1000&before={cursor}"
            ))
            .await?;
        let page: LedgerPage = serde_json::from_slice(&page)
            .map_err(|e| discrepancy(format!("a ledger page is not the documented shape: {e}")))?;
        if page.head.size < size {
            return Err(discrepancy(format!(
                "the ledger view's head ({}) is behind the checkpoint ({size})",
                page.head.size
            )));
        }
        for entry in &page.entries {
            check_entry(entry, leaves)?;
            seen += 1;
        }
        before = page.next;
    }
    if seen != size {
        return Err(discrepancy(format!(
            "the ledger view shows {seen} records, the checkpoint {size}"
        )));
    }
    Ok(())
}

/// One entry of the ledger view against its leaf.
fn check_entry(entry: &LedgerEntry, leaves: &[Vec<u8>]) -> Result<(), Failure> {
    let leaf = entry
        .seq
        .checked_sub(1)
        .and_then(|i| leaves.get(i as usize))
        .ok_or_else(|| {
            discrepancy(format!(
                "the ledger view shows seq {}, outside the checkpoint's tree",
                entry.seq
            ))
        })?;
    if canonical_json(&entry.record).as_bytes() != leaf.as_slice() {
        return Err(discrepancy(format!(
            "record {} in the ledger view is not the logged entry",
            entry.seq
        )));
    }
    if entry.leaf_hash != leaf_hash(leaf) {
        return Err(discrepancy(format!(
            "record {}'s leafHash in the ledger view is not its entry's hash",
            entry.seq
        )));
    }
    Ok(())
}

pub(crate) fn tile_path(kind: TileKind, index: u64, width: u64) -> String {
    TilePath {
        kind,
        index,
        partial: (width < TILE_WIDTH).then_some(width as u16),
    }
    .to_path()
}

/// Checks that `checkpoint` (whose leaves are `hashes`) extends `previous`:
/// with the log's consistency proof, and from the leaves themselves.
async fn check_extends(
    service: &Service,
    previous: &State,
    checkpoint: &Checkpoint,
    hashes: &[Digest],
) -> Result<(), Failure> {
    if previous.origin != checkpoint.origin {
        return Err(Failure::CannotCheck(format!(
            "the state file is for the log {}, not {}",
            previous.origin, checkpoint.origin
        )));
    }
    if previous.size > checkpoint.size {
        return Err(discrepancy(format!(
            "the log was rolled back: it now signs size {}, but signed size {} before",
            checkpoint.size, previous.size
        )));
    }
    let prefix_root = root_of(&hashes[..previous.size as usize]);
    if prefix_root != previous.root_hash {
        return Err(discrepancy(format!(
            "the log forked: its first {} entries no longer hash to the root signed before ({})",
            previous.size, previous.root_hash
        )));
    }
    #[derive(Deserialize)]
    struct ConsistencyView {
        consistency: Vec<Digest>,
    }
    let body = service
        .get(&format!(
            "api/freedom-fund?view=consistency&from={}&to={}",
            previous.size, checkpoint.size
        ))
        .await?;
    let view: ConsistencyView = serde_json::from_slice(&body).map_err(|e| {
        discrepancy(format!(
            "the consistency view is not the documented shape: {e}"
        ))
    })?;
    if !verify_consistency(
        previous.size,
        checkpoint.size,
        &previous.root_hash,
        &checkpoint.root,
        &view.consistency,
    ) {
        return Err(discrepancy(format!(
            "the log's consistency proof from size {} to {} does not verify",
            previous.size, checkpoint.size
        )));
    }
    Ok(())
}

/// The first member name that some object of `value` holds twice.
fn duplicate_member(value: &freedom_tlog::json::ExactJson) -> Option<&str> {
    use freedom_tlog::json::ExactJson;
    match value {
        ExactJson::Object(members) => members
            .iter()
            .enumerate()
            .find(|(i, (name, _))| members[..*i].iter().any(|(seen, _)| seen == name))
            .map(|(_, (name, _))| name.as_str())
            .or_else(|| {
                members
                    .iter()
                    .find_map(|(_, child)| duplicate_member(child))
            }),
        ExactJson::Array(items) => items.iter().find_map(duplicate_member),
        _ => None,
    }
}

/// The offline check: the `.tlog-proof` text `proof` proves that the record
/// `record` (JSON, in any key order and spacing: it is canonicalised) is in
/// the tree its checkpoint, signed by `key`, names.
pub fn verify_proof_file(
    proof: &str,
    key: &VerifierKey,
    record: &[u8],
    policy: Option<&Policy>,
) -> Result<Verified, Failure> {
    check_policy_trusts(policy, key)?;
    // Another kind of file is not a failing proof: it cannot be checked.
    if proof.trim_start().starts_with('{') {
        return Err(Failure::CannotCheck(
            "the proof file is a JSON document, not a .tlog-proof: fetch the proof with ?view=proof&seq=N&format=tlog-proof".into(),
        ));
    }
    let proof = TlogProof::parse(proof).map_err(|e| discrepancy(e.to_string()))?;
    // A member named twice is two readings of one file (a reader sees the
    // first value, a JSON library keeps the last): not one record.
    let exact = freedom_tlog::json::parse_exact(record)
        .map_err(|e| Failure::CannotCheck(format!("the record file is not JSON: {e}")))?;
    if let Some(name) = duplicate_member(&exact) {
        return Err(Failure::CannotCheck(format!(
            "the record file names the member {name:?} twice: it is not one record"
        )));
    }
    let value: serde_json::Value = serde_json::from_slice(record)
        .map_err(|e| Failure::CannotCheck(format!("the record file is not JSON: {e}")))?;
    if value.get("record").is_some() && value.get("leafHash").is_some() {
        return Err(Failure::CannotCheck(
            "the record file is a ledger entry ({seq, leafHash, record}), not the record: save its record member alone".into(),
        ));
    }
    let leaf = canonical_json(&value);
    let checkpoint = proof
        .verify(key, leaf.as_bytes())
        .map_err(|e| discrepancy(e.to_string()))?;
    let witnessed = policy
        .map(|policy| check_witnesses(&proof.checkpoint, policy, now()))
        .transpose()?
        .unwrap_or_default();
    let when = policy
        .map(|policy| timeline::proof_time_words(&proof.checkpoint, policy, &value))
        .transpose()?
        .unwrap_or_default();
    Ok(Verified(format!(
        "OK record seq {} is in {} at size {} (root {}), signature valid{witnessed}{when}",
        proof.index + 1,
        checkpoint.origin,
        checkpoint.size,
        checkpoint.root
    )))
}

/// How far ahead of the clock a cosignature may be dated.
const MAX_FUTURE_SECONDS: u64 = 600;

/// A policy that lists logs must list the log being checked (`key`): its
/// witnesses were chosen for those logs, and a policy for another log says
/// nothing of this one. Cannot check otherwise (exit 2).
pub fn check_policy_trusts(policy: Option<&Policy>, key: &VerifierKey) -> Result<(), Failure> {
    match policy {
        Some(policy) if !policy.logs().is_empty() && !policy.logs().contains(key) => {
            Err(Failure::CannotCheck(format!(
                "the policy lists logs, but not {}: it is another log's policy (add a line log {}, or use this log's policy)",
                key.to_text(),
                key.to_text()
            )))
        }
        _ => Ok(()),
    }
}

/// The clock, in seconds since the epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Whether `note` (a checkpoint the log's key already verified) carries
/// cosignatures meeting `policy`'s quorum at `now` (seconds since the
/// epoch): the words to add to the summary line, naming the witnesses that
/// verified; a discrepancy naming them and the groups short of their
/// threshold; a discrepancy for a listed key's line that does not verify
/// or is dated more than ten minutes ahead.
pub fn check_witnesses(note: &str, policy: &Policy, now: u64) -> Result<String, Failure> {
    witness_verdict(note, policy, now).map_err(|fault| match fault {
        WitnessFault::Bad(why) | WitnessFault::Short(why) => discrepancy(why),
    })
}

/// Why a checkpoint's cosignatures do not satisfy a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WitnessFault {
    /// A line from a listed key that does not verify, or is dated ahead;
    /// or a note that is not one.
    Bad(String),
    /// Every listed line verifies, but too few for the quorum.
    Short(String),
}

/// [`check_witnesses`], its failures told apart.
pub(crate) fn witness_verdict(
    note: &str,
    policy: &Policy,
    now: u64,
) -> Result<String, WitnessFault> {
    let bad = WitnessFault::Bad;
    let (text, lines) = split_note(note).map_err(|e| bad(format!("the checkpoint: {e}")))?;
    let mut verified = std::collections::BTreeSet::new();
    for (index, witness) in policy.witnesses().iter().enumerate() {
        for (name, encoded) in &lines {
            match witness.key.verify_line(text, name, encoded) {
                Ok(None) => {}
                Ok(Some(cosignature))
                    if cosignature.time > now.saturating_add(MAX_FUTURE_SECONDS) =>
                {
                    return Err(bad(format!(
                        "witness {}'s cosignature is dated {} s ahead of this clock",
                        witness.name,
                        cosignature.time - now
                    )));
                }
                Ok(Some(_)) => {
                    verified.insert(index);
                }
                Err(_) => {
                    return Err(bad(format!(
                        "witness {}'s cosignature does not verify (a forged or altered line)",
                        witness.name
                    )));
                }
            }
        }
    }
    let names: Vec<&str> = verified
        .iter()
        .map(|i| policy.witnesses()[*i].name.as_str())
        .collect();
    let names = if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    };
    let check = policy.check(&verified);
    if check.met {
        Ok(format!(", witnessed by {names} (quorum met)"))
    } else {
        Err(WitnessFault::Short(format!(
            "the checkpoint is short of the witness quorum: verified by {names}; short: {}",
            check.short.join(", ")
        )))
    }
}
