//! The witness protocol's messages (c2sp.org/tlog-witness): the body of
//! `POST <prefix>/add-checkpoint` and the size hint of a `409`.
//!
//! ```text
//! old <size>\n
//! <base64 hash>\n          (the consistency proof, at most 63 lines)
//! \n
//! <signed checkpoint>
//! ```

use crate::merkle::{Digest, Head};
use crate::proof::verify_consistency;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest as _, Sha256};

/// The content type of a `409`'s body: the size the witness last cosigned.
pub const SIZE_HINT_TYPE: &str = "text/x.tlog.size";
/// Most bytes a witness reads of a request body.
pub const MAX_BODY_BYTES: usize = 16 * 1024;
/// Most consistency proof lines a request may carry.
pub const MAX_PROOF_LINES: usize = 63;

/// Why a request body is not an add-checkpoint request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed add-checkpoint request: {0}")]
pub struct RequestError(pub &'static str);

/// An add-checkpoint request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddCheckpoint {
    /// The size of the checkpoint the client believes the witness last
    /// cosigned (0: none).
    pub old: u64,
    /// The consistency proof from `old` to the checkpoint's size.
    pub proof: Vec<Digest>,
    /// The signed checkpoint (note text, blank line and signatures).
    pub checkpoint: String,
}

impl AddCheckpoint {
    /// The request body.
    pub fn to_body(&self) -> String {
        let mut body = format!("old {}\n", self.old);
        for hash in &self.proof {
            body.push_str(&BASE64.encode(hash.0));
            body.push('\n');
        }
        body.push('\n');
        body.push_str(&self.checkpoint);
        body
    }

    /// Reads a request body.
    pub fn parse(body: &str) -> Result<AddCheckpoint, RequestError> {
        let (head, checkpoint) = body
            .split_once("\n\n")
            .ok_or(RequestError("no empty line before the checkpoint"))?;
        let mut lines = head.split('\n');
        let old = lines
            .next()
            .and_then(|l| l.strip_prefix("old "))
            .filter(|n| *n == "0" || !n.starts_with('0'))
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or(RequestError(
                "the first line is not old <size> in decimal without leading zeroes",
            ))?;
        let proof = lines
            .map(|line| {
                BASE64
                    .decode(line)
                    .ok()
                    .and_then(|b| <[u8; 32]>::try_from(b).ok())
                    .map(Digest)
                    .ok_or(RequestError("a proof line is not a base64 SHA-256 hash"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if proof.len() > MAX_PROOF_LINES {
            return Err(RequestError("more than 63 proof lines"));
        }
        Ok(AddCheckpoint {
            old,
            proof,
            checkpoint: checkpoint.to_owned(),
        })
    }
}

/// What a witness makes of an add-checkpoint request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cosigned {
    /// Consistent: recorded, and cosigned.
    Yes,
    /// `old` is not the size last cosigned (which is given).
    Conflict(u64),
    /// Inconsistent (a bad proof, or another root for the same size).
    Refused(&'static str),
}

/// The specification's checks of `request`, whose checkpoint is `new`,
/// against `latest`, the head the witness last cosigned for the origin
/// (`None`: none): the decision `freedom-witness` makes inside its state's
/// transaction, and the custody simulator's witnesses with it.
pub fn judge(request: &AddCheckpoint, latest: Option<Head>, new: Head) -> Cosigned {
    let latest = latest.unwrap_or_else(Head::empty);
    if request.old != latest.size {
        return Cosigned::Conflict(latest.size);
    }
    if new.size == 0 && new.root_hash != Head::empty().root_hash {
        return Cosigned::Refused("a size-0 checkpoint whose root is not the empty tree's");
    }
    if request.old == 0 || request.old == new.size {
        if !request.proof.is_empty() {
            return Cosigned::Refused("a consistency proof where none is due");
        }
        if request.old == new.size && latest.root_hash != new.root_hash {
            return Cosigned::Refused("the same size as the last cosigned, with another root");
        }
        return Cosigned::Yes;
    }
    if verify_consistency(
        request.old,
        new.size,
        &latest.root_hash,
        &new.root_hash,
        &request.proof,
    ) {
        Cosigned::Yes
    } else {
        Cosigned::Refused("the consistency proof does not verify")
    }
}

/// The size in a `409`'s `text/x.tlog.size` body (`<size>\n`).
pub fn parse_size_hint(body: &str) -> Option<u64> {
    let digits = body.strip_suffix('\n').unwrap_or(body);
    (digits == "0" || !digits.starts_with('0'))
        .then(|| digits.parse().ok())
        .flatten()
}

/// The hex SHA-256 of a log's origin: its path in a witness's monitoring
/// read, `GET <prefix>/<origin hash>/checkpoint`.
pub fn origin_hash(origin: &str) -> String {
    hex::encode(Sha256::digest(origin.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips_and_bad_ones_are_refused() {
        let request = AddCheckpoint {
            old: 5,
            proof: vec![Digest([1; 32]), Digest([2; 32])],
            checkpoint: "log\n8\nAAAA\n\n\u{2014} log abc\n".into(),
        };
        assert_eq!(AddCheckpoint::parse(&request.to_body()), Ok(request));
        for bad in [
            "old 05\n\nx",
            "old 5\nnotbase64\n\nx",
            "old 5\nx",
            "new 5\n\nx",
        ] {
            assert!(AddCheckpoint::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_size_hint("42\n"), Some(42));
        assert_eq!(parse_size_hint("042\n"), None);
    }
}
