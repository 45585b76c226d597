//! What a witness holds of this log, and what its answer proves. A witness
//! counts as having answered a consultation only when it shows what it
//! holds: a checkpoint of this log's key at its monitoring read, which it
//! cosigns again when brought back to it from its own size (so it is its
//! latest, not a cached or stale one); a
//! cosignature of the empty tree (it holds nothing of this log); or, when
//! it names only a size, a cosignature of the checkpoint the log's memory
//! holds, brought from that size with the consistency proof (so its tree
//! at that size is proved a prefix of one the log signed, and nothing new
//! is signed to ask). Anything else (a `403`, a `404`, a `200` without its
//! cosignature, a `409` naming size 0 to the empty tree) says nothing of
//! what it holds: the witness counts as silent.

use super::custody::Remembered;
use super::prove::ConsistencyOf;
use super::witnessing::Deadline;
use super::{Log, LogError};
use crate::merkle::Head;
use crate::ports::witness_client::WitnessReply;
use crate::tlog::checkpoint::Checkpoint;
use crate::tlog::note::VerifierKey;
use crate::tlog::policy::Witness;
use crate::tlog::witness::{AddCheckpoint, SIZE_HINT_TYPE, origin_hash, parse_size_hint};

/// What one witness holds of this log.
#[derive(Debug)]
pub(super) enum Holds {
    /// A checkpoint this log's key signed, as its monitoring read serves it.
    Checkpoint(Remembered),
    /// A tree of this size, as a `409` names it (its root unshown).
    Size(u64),
    /// Nothing: it cosigned the empty tree's checkpoint.
    Nothing,
}

/// What a size a witness named (without its root) proves.
#[derive(Debug)]
pub(super) enum SizeNamed {
    /// Its tree at that size is a prefix of a checkpoint the log signed:
    /// it cosigned that checkpoint from its size.
    Prefix,
    /// Nothing either way (why): the witness counts as silent.
    Unproven(String),
    /// It contradicts the memories (why): an alarm against the witness,
    /// which counts as silent.
    Contradicts(String),
}

impl Log {
    /// What `witness` holds of this log (see the module's doc), asked
    /// within `deadline`. `Err` (a sentence) when its answer shows nothing.
    pub(super) async fn held_by(
        &self,
        witness: &Witness,
        verifier: &VerifierKey,
        deadline: Deadline,
    ) -> Result<Holds, String> {
        if let Some(kept) = self.monitoring_read(witness, verifier, deadline).await {
            return Ok(Holds::Checkpoint(kept));
        }
        let empty = self
            .signer()
            .map_err(|e| e.to_string())?
            .sign(Head::empty());
        let reply = self.ask(witness, 0, Vec::new(), &empty, deadline).await?;
        match reply.status {
            200 if cosigned(witness, &empty, &reply) => Ok(Holds::Nothing),
            200 => Err("answered 200 without its cosignature of the empty tree".into()),
            409 if reply.content_type.as_deref() == Some(SIZE_HINT_TYPE) => {
                match parse_size_hint(&reply.body) {
                    Some(size) if size > 0 => Ok(Holds::Size(size)),
                    _ => Err("a 409 that names no tree it could hold".into()),
                }
            }
            status => Err(format!(
                "answered {status}: it does not say what it holds of this log"
            )),
        }
    }

    /// What a witness's `size` (a `409` to the empty tree) proves, the
    /// store's head being `stored`: a size larger than the memories hold
    /// contradicts them (either the witness is wrong or the memories went
    /// back with the store; without its checkpoint nothing shows which);
    /// one within them is proved a prefix by bringing the witness the
    /// largest checkpoint the memories hold, from that size.
    pub(super) async fn size_named(
        &self,
        witness: &Witness,
        size: u64,
        stored: Head,
        deadline: Deadline,
    ) -> Result<SizeNamed, LogError> {
        let verifier = self.signer()?.verifier();
        self.custody.forget();
        let remembered = match self.custody.recollect(&verifier, stored).await? {
            Ok(recollection) => recollection.largest().cloned(),
            Err(refusal) => return Ok(SizeNamed::Contradicts(refusal.reason)),
        };
        let held = remembered.as_ref().map_or(0, |r| r.head.size);
        if size > held {
            if self.custody.new_log() && size <= stored.size {
                return Ok(SizeNamed::Unproven(format!(
                    "it names a tree of {size} records; --new-log says this key signed nothing the ledger does not extend"
                )));
            }
            return Ok(SizeNamed::Contradicts(format!(
                "the witness {} says it cosigned a tree of {size} records of this log, more than its memories hold ({held}), and does not serve that checkpoint to compare: the memories went back with the store, or the witness misbehaves; it is not counted as having answered",
                witness.name
            )));
        }
        let Some(kept) = remembered else {
            return Ok(SizeNamed::Unproven("nothing to compare it with".into()));
        };
        if kept.head.size > stored.size {
            return Ok(SizeNamed::Unproven(
                "the store holds less than the memories".into(),
            ));
        }
        let proof = match self
            .prove(
                &stored,
                ConsistencyOf {
                    from: size,
                    to: kept.head.size,
                },
                None,
            )
            .await
        {
            Ok((proof, _)) if proof.to_root == kept.head.root_hash => proof,
            _ => {
                return Ok(SizeNamed::Unproven(
                    "the store does not extend the memories".into(),
                ));
            }
        };
        let reply = match self
            .ask(witness, size, proof.path, &kept.note, deadline)
            .await
        {
            Ok(reply) => reply,
            Err(detail) => return Ok(SizeNamed::Unproven(detail)),
        };
        Ok(match reply.status {
            200 if cosigned(witness, &kept.note, &reply) => SizeNamed::Prefix,
            409 | 422 if reply.content_type.as_deref() != Some(SIZE_HINT_TYPE) => {
                SizeNamed::Contradicts(format!(
                    "the witness {} says it holds a tree of {size} records of this log, yet refused ({}) the checkpoint of {} records the log signed, from that size: its tree is not a prefix of what the log signed",
                    witness.name, reply.status, kept.head.size
                ))
            }
            status => SizeNamed::Unproven(format!(
                "answered {status} to the log's own checkpoint of {} records from its size",
                kept.head.size
            )),
        })
    }

    /// Whether the checkpoint `witness` served at its monitoring read is
    /// its latest (a cache in front of it, or a witness that lies, may
    /// serve an older one): it is brought back to it from its own size.
    /// `Ok(None)`: cosigned again, it is the latest; `Ok(Some(size))`: the
    /// witness holds a larger tree (what that size proves is
    /// [`Log::size_named`]'s); `Err`: its answer shows nothing.
    pub(super) async fn latest_confirmed(
        &self,
        witness: &Witness,
        kept: &Remembered,
        deadline: Deadline,
    ) -> Result<Option<u64>, String> {
        let reply = self
            .ask(witness, kept.head.size, Vec::new(), &kept.note, deadline)
            .await?;
        match reply.status {
            200 if cosigned(witness, &kept.note, &reply) => Ok(None),
            409 if reply.content_type.as_deref() == Some(SIZE_HINT_TYPE) => {
                match parse_size_hint(&reply.body) {
                    Some(size) if size > kept.head.size => Ok(Some(size)),
                    _ => Err("a 409 naming no larger tree than the one it served".into()),
                }
            }
            status => Err(format!(
                "answered {status} to the checkpoint it served as its latest"
            )),
        }
    }

    /// `POST <url>/add-checkpoint` from `old` with `proof` and `note`, in
    /// the time left before `deadline`.
    async fn ask(
        &self,
        witness: &Witness,
        old: u64,
        proof: Vec<crate::merkle::Digest>,
        note: &str,
        deadline: Deadline,
    ) -> Result<WitnessReply, String> {
        let witnessing = self.witnessing.as_ref().ok_or("the log is not witnessed")?;
        let url = witness.url.as_ref().ok_or("the policy gives no URL")?;
        let timeout = self.time_left(deadline).ok_or("no time left to ask")?;
        let body = AddCheckpoint {
            old,
            proof,
            checkpoint: note.to_owned(),
        }
        .to_body();
        witnessing.client.add_checkpoint(url, &body, timeout).await
    }

    /// The latest checkpoint of this log `witness` serves at its monitoring
    /// read, when it serves one this log's key signed.
    pub(super) async fn monitoring_read(
        &self,
        witness: &Witness,
        verifier: &VerifierKey,
        deadline: Deadline,
    ) -> Option<Remembered> {
        let witnessing = self.witnessing.as_ref()?;
        let url = witness.url.as_ref()?;
        let timeout = self.time_left(deadline)?;
        let reply: WitnessReply = witnessing
            .client
            .latest_checkpoint(url, &origin_hash(&self.origin), timeout)
            .await
            .ok()
            .filter(|reply| reply.status == 200)?;
        let checkpoint = Checkpoint::open(&reply.body, verifier).ok()?;
        (checkpoint.origin == self.origin).then_some(Remembered {
            head: Head {
                size: checkpoint.size,
                root_hash: checkpoint.root,
            },
            note: reply.body,
        })
    }
}

/// Whether `reply` carries `witness`'s verifying cosignature of the
/// checkpoint `note` signs.
fn cosigned(witness: &Witness, note: &str, reply: &WitnessReply) -> bool {
    let text = &note[..note.find("\n\n").map_or(note.len(), |i| i + 1)];
    witness
        .key
        .cosignatures_in(text, &reply.body)
        .is_ok_and(|found| !found.is_empty())
}
