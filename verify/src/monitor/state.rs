//! What the monitor keeps between passes, written whole and atomically.

use super::PATIENCE_SECONDS;
use super::rules::Rules;
use crate::Failure;
use freedom_tlog::checkpoint::Checkpoint;
use freedom_tlog::merkle::Frontier;
use freedom_tlog::note::VerifierKey;
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::Path;

/// The state file's name in the state folder.
const STATE_FILE: &str = "state.json";

/// The monitor's memory.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct MonitorState {
    /// The log's verifier key the state is for.
    pub verifier_key: String,
    /// The last checkpoint verified (the signed note), if any.
    pub checkpoint: Option<String>,
    /// Its size: the entries verified.
    pub size: u64,
    /// The tree's right edge at that size (hex subtree roots), to extend.
    pub edge: Vec<String>,
    /// The file in the state folder holding what the ledger's rules
    /// remember at `size` (read only by a pass with new entries, so a pass
    /// with nothing new reads and writes a few hundred bytes).
    #[serde(default)]
    pub rules_file: Option<String>,
    /// What the rules remember, once read (and whether it changed).
    #[serde(skip)]
    rules: Option<(Rules, bool)>,
    /// When the log last answered (seconds since the epoch).
    pub answered_at: Option<u64>,
    /// Since when it has not answered, and whether that was raised.
    pub silent_since: Option<(u64, bool)>,
    /// The head size seen ahead of the served checkpoint, since when, and
    /// whether that was raised.
    pub behind: Option<(u64, u64, bool)>,
}

fn cannot(message: String) -> Failure {
    Failure::CannotCheck(message)
}

impl MonitorState {
    /// The state in `dir` (a fresh one when there is none), which must be
    /// for `key`'s log.
    pub fn load(dir: &Path, key: &VerifierKey) -> Result<MonitorState, Failure> {
        let path = dir.join(STATE_FILE);
        let state = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice::<MonitorState>(&bytes).map_err(|e| {
                cannot(format!("the state {} is not readable: {e}", path.display()))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => MonitorState {
                verifier_key: key.to_text(),
                ..MonitorState::default()
            },
            Err(e) => return Err(cannot(format!("cannot read {}: {e}", path.display()))),
        };
        if state.verifier_key != key.to_text() {
            return Err(cannot(format!(
                "the state {} is for the log {}, not {}",
                path.display(),
                state.verifier_key,
                key.to_text()
            )));
        }
        if state.frontier_checked().is_none() {
            return Err(cannot(format!(
                "the state {} holds a tree edge that does not fit its size",
                path.display()
            )));
        }
        Ok(state)
    }

    /// What the rules remember, read from their file on first use; marked
    /// changed (the caller is about to check new records).
    pub fn rules(&mut self, dir: &Path) -> Result<&mut Rules, Failure> {
        if self.rules.is_none() {
            let rules = match &self.rules_file {
                Some(name) => {
                    let path = dir.join(name);
                    let bytes = std::fs::read(&path)
                        .map_err(|e| cannot(format!("cannot read {}: {e}", path.display())))?;
                    serde_json::from_slice(&bytes)
                        .map_err(|e| cannot(format!("{} is not readable: {e}", path.display())))?
                }
                None => Rules::default(),
            };
            self.rules = Some((rules, false));
        }
        let (rules, changed) = self.rules.as_mut().expect("just read");
        *changed = true;
        Ok(rules)
    }

    /// Writes the state whole: the rules' file first when they changed
    /// (named by the size it covers), then the state naming it (a
    /// temporary file, fsync, rename over the old one, fsync of the
    /// folder), then the rules' files no state names any more.
    pub fn store(&mut self, dir: &Path) -> Result<(), Failure> {
        if let Some((rules, true)) = &self.rules {
            let name = format!("rules-{}.json", self.size);
            let text = serde_json::to_vec(rules).expect("the rules serialise");
            write_atomically(dir, &name, &text)?;
            self.rules_file = Some(name);
        }
        let text = serde_json::to_vec(self).expect("the state serialises");
        write_atomically(dir, STATE_FILE, &text)?;
        for file in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            if name.starts_with("rules-") && Some(&name) != self.rules_file.as_ref() {
                std::fs::remove_file(file.path()).ok();
            }
        }
        Ok(())
    }

    fn frontier_checked(&self) -> Option<Frontier> {
        let bytes: Vec<u8> = self
            .edge
            .iter()
            .map(|h| hex::decode(h).ok())
            .collect::<Option<Vec<_>>>()?
            .concat();
        Frontier::from_bytes(self.size, &bytes).ok()
    }

    /// The tree's right edge at the kept size.
    pub fn frontier(&self) -> Frontier {
        self.frontier_checked()
            .expect("checked when the state was loaded, kept whole since")
    }

    /// The checkpoint kept: its signed note and what it says.
    pub fn kept(&self) -> Option<(String, Checkpoint)> {
        let note = self.checkpoint.clone()?;
        let text_end = note.find("\n\n").map_or(note.len(), |i| i + 1);
        let checkpoint = Checkpoint::parse(&note[..text_end]).ok()?;
        Some((note, checkpoint))
    }

    /// Keeps `checkpoint` (its signed `note`), verified up to `frontier`.
    pub fn keep(&mut self, note: &str, checkpoint: &Checkpoint, frontier: &Frontier) {
        self.checkpoint = Some(note.to_owned());
        self.size = checkpoint.size;
        self.edge = frontier.to_bytes().chunks(32).map(hex::encode).collect();
    }

    /// The log answered at `now`.
    pub fn answered(&mut self, now: u64) {
        self.answered_at = Some(now);
        self.silent_since = None;
    }

    /// The log did not answer at `now`: since when, when that is past
    /// [`PATIENCE_SECONDS`] and not raised yet (then it is raised).
    pub fn unanswered(&mut self, now: u64) -> Option<u64> {
        let (since, raised) = self.silent_since.get_or_insert((now, false));
        if *raised || now.saturating_sub(*since) < PATIENCE_SECONDS {
            return None;
        }
        *raised = true;
        Some(*since)
    }

    /// The served checkpoint is at `served`, the head at `head`: since
    /// when the head has been ahead of what is served, when that is past
    /// [`PATIENCE_SECONDS`] and not raised yet (then it is raised).
    pub fn behind(&mut self, served: u64, head: u64, now: u64) -> Option<u64> {
        match &mut self.behind {
            Some((size, _, _)) if served >= *size => self.behind = None,
            _ => {}
        }
        if head <= served {
            return None;
        }
        let (_, since, raised) = self.behind.get_or_insert((head, now, false));
        if *raised || now.saturating_sub(*since) < PATIENCE_SECONDS {
            return None;
        }
        *raised = true;
        Some(*since)
    }
}

/// Writes `bytes` as `dir/name` whole: a temporary file beside it, fsync,
/// rename, fsync of the folder (so the rename itself is durable).
pub(super) fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), Failure> {
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let temporary = dir.join(format!(".{name}.tmp"));
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, dir.join(name))?;
        std::fs::File::open(dir)?.sync_all()
    };
    write().map_err(|e| cannot(format!("cannot write {}: {e}", dir.join(name).display())))
}
