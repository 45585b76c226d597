//! The log's signing key for freedom-local: `FF_LOG_SIGNING_KEY` when set,
//! else the key kept in the key file (`--key-file`, by default
//! `<data-dir>.key`, beside the data dir and never inside it), generated
//! (mode 0600) on first start. Readers verify checkpoints with its
//! verifier key, which freedom-local logs at start and the contract view
//! publishes.
//!
//! The key file lives outside the data dir because the signer's memory
//! lives beside it (`<key file>.signed`, also when the key comes from the
//! environment): a data dir restored from a backup, replaced or started
//! afresh must not bring back an older memory with it. A data dir from
//! before this rule, with `log-signing.key` (and its `.signed`) inside, is
//! moved out to the key file at start, once.

use freedom_shared::config::LogConfig;
use freedom_shared::merkle::Head;
use freedom_shared::tlog::checkpoint::CheckpointSigner;
use freedom_shared::tlog::note::SigningKey;
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The key file's name inside the data dir before the key moved out of it.
pub const LEGACY_KEY_FILE: &str = "log-signing.key";
/// The largest key file read (a signer key's text is about 100 bytes).
pub const MAX_KEY_FILE_BYTES: u64 = 4096;

/// Why the log's key could not be had.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// The file could not be read or written.
    #[error("cannot {action} the log's signing key file {}: {source}", path.display())]
    Io {
        /// Read or create.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The file does not hold a signer key (its content is never shown).
    #[error("{} does not hold a signed-note signer key ({reason}): restore it from a backup, or move it away to start a new log", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What is wrong, in words.
        reason: String,
    },
    /// The key file is not a small private regular file (a FIFO would hang
    /// start-up; a link to a device could be read without end).
    #[error("{} {problem}: the log's signing key file must be a regular file of at most {MAX_KEY_FILE_BYTES} bytes readable only by its owner", path.display())]
    NotAKeyFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it, in words.
        problem: &'static str,
    },
    /// The file's key names another log than `FF_LOG_ORIGIN`.
    #[error("{} holds the key of the log {key_name}, but FF_LOG_ORIGIN is {origin}: unset FF_LOG_ORIGIN, or move the file away to start a new log", path.display())]
    AnotherOrigin {
        /// The file.
        path: PathBuf,
        /// The key's name.
        key_name: String,
        /// The configured origin.
        origin: String,
    },
    /// The key file would be inside the data dir, where a restored or
    /// replaced data dir would bring back an older memory of what it signed.
    #[error("the key file {} is inside the data dir {}: a restored or replaced data dir would roll back what the key remembers signing; give --key-file a path outside it", key_file.display(), data_dir.display())]
    InsideDataDir {
        /// The key file.
        key_file: PathBuf,
        /// The data dir.
        data_dir: PathBuf,
    },
    /// The data dir has no name to put the key file beside.
    #[error("--data-dir {} has no name to put the key file beside (<data-dir>.key): give --key-file", data_dir.display())]
    NoDefaultKeyFile {
        /// The data dir.
        data_dir: PathBuf,
    },
    /// A memory of what a key signed is there, but not the key.
    #[error("{} remembers what a key signed, but the key file {} is missing: restore the key; to start a new log with a new key instead, move the memory away", memory.display(), key_file.display())]
    MemoryWithoutKey {
        /// The key file.
        key_file: PathBuf,
        /// The memory beside it.
        memory: PathBuf,
    },
    /// Both the data dir (from before the key moved out) and the key file's
    /// place hold a key or a memory: which is the log's is not known.
    #[error(
        "{legacy} is inside the data dir, and {key_file} exists too: keep the one of this log (the newer memory) at {key_file} and move the other away"
    )]
    TwoKeys {
        /// The file inside the data dir.
        legacy: String,
        /// The key file (or its memory).
        key_file: String,
    },
}

/// Where the key file goes by default: beside the data dir, `<data-dir>.key`.
pub fn default_key_file(data_dir: &Path) -> Result<PathBuf, KeyFileError> {
    let absolute = std::path::absolute(data_dir).unwrap_or_else(|_| data_dir.to_owned());
    let name = absolute
        .file_name()
        .filter(|_| !absolute.ends_with(".."))
        .ok_or_else(|| KeyFileError::NoDefaultKeyFile {
            data_dir: data_dir.to_owned(),
        })?;
    let mut file = name.to_owned();
    file.push(".key");
    Ok(absolute.with_file_name(file))
}

/// The memory file beside `key_file`.
pub fn memory_file(key_file: &Path) -> PathBuf {
    let mut path = key_file.as_os_str().to_owned();
    path.push(".signed");
    path.into()
}

/// Refuses a key file inside the data dir, and moves a key (and its
/// memory) kept inside the data dir by earlier versions out to `key_file`.
pub fn place_key_file(data_dir: &Path, key_file: &Path) -> Result<(), KeyFileError> {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    if absolute(key_file).starts_with(absolute(data_dir)) {
        return Err(KeyFileError::InsideDataDir {
            key_file: key_file.to_owned(),
            data_dir: data_dir.to_owned(),
        });
    }
    let legacy_key = data_dir.join(LEGACY_KEY_FILE);
    let moves = [
        (legacy_key.clone(), key_file.to_owned()),
        (memory_file(&legacy_key), memory_file(key_file)),
    ];
    for (from, to) in &moves {
        if from.symlink_metadata().is_ok() && to.symlink_metadata().is_ok() {
            return Err(KeyFileError::TwoKeys {
                legacy: from.display().to_string(),
                key_file: to.display().to_string(),
            });
        }
    }
    for (from, to) in &moves {
        if from.symlink_metadata().is_err() {
            continue;
        }
        if let Some(parent) = to.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| KeyFileError::Io {
                action: "create the directory of",
                path: to.clone(),
                source,
            })?;
        }
        std::fs::rename(from, to).map_err(|source| KeyFileError::Io {
            action: "move (out of the data dir, to)",
            path: to.clone(),
            source,
        })?;
        tracing::warn!(from = %from.display(), to = %to.display(), "moved the log's key file out of the data dir: a restored data dir must not roll back what the key remembers signing");
    }
    Ok(())
}

/// The signing key of the log `config` describes: from the environment,
/// or from (or newly in) `key_file`. Its name is the log's origin. A key
/// generated here is a new log: its memory beside it starts with the empty
/// tree's checkpoint, so it signs its ledger from the first request.
pub fn local_key(config: &LogConfig, key_file: &Path) -> Result<SigningKey, KeyFileError> {
    match &config.signing_key {
        Some(key) => Ok(key.clone()),
        None => key_from_file(&config.origin, config.origin_configured, key_file),
    }
}

fn key_from_file(
    origin: &str,
    origin_configured: bool,
    path: &Path,
) -> Result<SigningKey, KeyFileError> {
    let io = |action, source| KeyFileError::Io {
        action,
        path: path.to_owned(),
        source,
    };
    match read_key_file(path) {
        Ok(text) => {
            let key = SigningKey::parse(&text).map_err(|error| KeyFileError::Unreadable {
                path: path.to_owned(),
                reason: error.to_string(),
            })?;
            if origin_configured && key.name() != origin {
                return Err(KeyFileError::AnotherOrigin {
                    path: path.to_owned(),
                    key_name: key.name().to_owned(),
                    origin: origin.to_owned(),
                });
            }
            Ok(key)
        }
        Err(KeyFileError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            let key = SigningKey::generate(origin).map_err(|error| KeyFileError::Unreadable {
                path: path.to_owned(),
                reason: error.to_string(),
            })?;
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| io("create", e))?;
            }
            let memory = memory_file(path);
            if memory.symlink_metadata().is_ok() {
                return Err(KeyFileError::MemoryWithoutKey {
                    key_file: path.to_owned(),
                    memory,
                });
            }
            let mut pending = memory.clone().into_os_string();
            pending.push(".new");
            let pending = PathBuf::from(pending);
            let _ = std::fs::remove_file(&pending);
            let empty = CheckpointSigner::new(key.clone()).sign(Head::empty());
            write_private(&pending, empty.as_bytes())
                .map_err(|e| io("write the memory beside", e))?;
            write_private(path, format!("{}\n", key.to_private_text()).as_bytes())
                .map_err(|e| io("create", e))?;
            std::fs::rename(&pending, &memory).map_err(|e| io("write the memory beside", e))?;
            tracing::info!(file = %path.display(), "generated the log's signing key; keep it (and back it up) outside the data dir: a new key is a new log");
            Ok(key)
        }
        Err(error) => Err(error),
    }
}

/// Writes `bytes` to a new file at `path`, readable by its owner only, and
/// flushes it to disk.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// The key file's text, once it is known to be a regular file of at most
/// [`MAX_KEY_FILE_BYTES`] that only its owner can read (checked before it
/// is opened, so a FIFO never blocks start-up, and on the opened file).
fn read_key_file(path: &Path) -> Result<String, KeyFileError> {
    let io = |action, source| KeyFileError::Io {
        action,
        path: path.to_owned(),
        source,
    };
    let refuse = |problem| KeyFileError::NotAKeyFile {
        path: path.to_owned(),
        problem,
    };
    let check = |metadata: &std::fs::Metadata| {
        if !metadata.is_file() {
            Err(refuse("is not a regular file"))
        } else if metadata.len() > MAX_KEY_FILE_BYTES {
            Err(refuse("is larger than a key"))
        } else if metadata.permissions().mode() & 0o077 != 0 {
            Err(refuse("is readable by group or others (chmod 600 it)"))
        } else {
            Ok(())
        }
    };
    check(&std::fs::metadata(path).map_err(|e| io("read", e))?)?;
    let file = std::fs::File::open(path).map_err(|e| io("read", e))?;
    check(&file.metadata().map_err(|e| io("read", e))?)?;
    let mut text = String::new();
    std::io::Read::take(file, MAX_KEY_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| io("read", e))?;
    if text.len() as u64 > MAX_KEY_FILE_BYTES {
        return Err(refuse("is larger than a key"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(origin: Option<&str>) -> LogConfig {
        LogConfig {
            origin: origin
                .unwrap_or(freedom_shared::tlog::DEFAULT_ORIGIN)
                .to_owned(),
            origin_configured: origin.is_some(),
            signing_key: None,
            new_log: false,
        }
    }

    #[test]
    fn the_key_is_generated_once_private_and_then_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.key");
        let first = local_key(&config(None), &path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(
            std::fs::read_to_string(memory_file(&path))
                .unwrap()
                .contains("\n0\n"),
            "a new key's memory starts at the empty tree"
        );
        let again = local_key(&config(None), &path).unwrap();
        assert_eq!(first.verifier(), again.verifier());
        assert_eq!(again.name(), freedom_shared::tlog::DEFAULT_ORIGIN);
        let error = local_key(&config(Some("other.example/log")), &path).unwrap_err();
        assert!(matches!(error, KeyFileError::AnotherOrigin { .. }));
        std::fs::write(&path, "PRIVATE+KEY+broken-secret-text").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let error = local_key(&config(None), &path).unwrap_err().to_string();
        assert!(!error.contains("broken-secret-text"), "{error}");
    }

    #[test]
    fn the_key_file_goes_beside_the_data_dir_never_inside_it() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        assert_eq!(
            default_key_file(&data).unwrap(),
            dir.path().join("data.key")
        );
        assert_eq!(
            default_key_file(&dir.path().join("data/")).unwrap(),
            dir.path().join("data.key")
        );
        assert!(matches!(
            default_key_file(Path::new("/")),
            Err(KeyFileError::NoDefaultKeyFile { .. })
        ));
        assert!(matches!(
            place_key_file(&data, &data.join("inside.key")),
            Err(KeyFileError::InsideDataDir { .. })
        ));
    }

    #[test]
    fn a_key_kept_inside_the_data_dir_moves_out_once_with_its_memory() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(data.join(LEGACY_KEY_FILE), "key").unwrap();
        std::fs::write(memory_file(&data.join(LEGACY_KEY_FILE)), "memory").unwrap();
        let key_file = default_key_file(&data).unwrap();
        place_key_file(&data, &key_file).unwrap();
        assert_eq!(std::fs::read_to_string(&key_file).unwrap(), "key");
        assert_eq!(
            std::fs::read_to_string(memory_file(&key_file)).unwrap(),
            "memory"
        );
        assert!(!data.join(LEGACY_KEY_FILE).exists());
        std::fs::write(data.join(LEGACY_KEY_FILE), "an older backup's key").unwrap();
        assert!(matches!(
            place_key_file(&data, &key_file),
            Err(KeyFileError::TwoKeys { .. })
        ));
    }
}
