//! The log's signing key for freedom-local: `FF_LOG_SIGNING_KEY` when set,
//! else the key kept in `<data-dir>/log-signing.key`, generated (mode 0600)
//! on first start. Readers verify checkpoints with its verifier key, which
//! freedom-local logs at start and the contract view publishes.

use freedom_shared::config::LogConfig;
use freedom_shared::tlog::note::SigningKey;
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The key file's name in the data dir.
pub const KEY_FILE: &str = "log-signing.key";
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
}

/// The signing key of the log `config` describes: from the environment,
/// or from (or newly in) `data_dir`. Its name is the log's origin.
pub fn local_key(config: LogConfig, data_dir: &Path) -> Result<SigningKey, KeyFileError> {
    match config.signing_key {
        Some(key) => Ok(key),
        None => key_from_file(&config.origin, config.origin_configured, data_dir),
    }
}

fn key_from_file(
    origin: &str,
    origin_configured: bool,
    data_dir: &Path,
) -> Result<SigningKey, KeyFileError> {
    let path = data_dir.join(KEY_FILE);
    let io = |action, source| KeyFileError::Io {
        action,
        path: path.clone(),
        source,
    };
    match read_key_file(&path) {
        Ok(text) => {
            let key = SigningKey::parse(&text).map_err(|error| KeyFileError::Unreadable {
                path: path.clone(),
                reason: error.to_string(),
            })?;
            if origin_configured && key.name() != origin {
                return Err(KeyFileError::AnotherOrigin {
                    path,
                    key_name: key.name().to_owned(),
                    origin: origin.to_owned(),
                });
            }
            Ok(key)
        }
        Err(KeyFileError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            let key = SigningKey::generate(origin).map_err(|error| KeyFileError::Unreadable {
                path: path.clone(),
                reason: error.to_string(),
            })?;
            std::fs::create_dir_all(data_dir).map_err(|e| io("create", e))?;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .map_err(|e| io("create", e))?;
            file.write_all(format!("{}\n", key.to_private_text()).as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(|e| io("write", e))?;
            tracing::info!(file = %path.display(), "generated the log's signing key; keep it (and back it up): a new key is a new log");
            Ok(key)
        }
        Err(error) => Err(error),
    }
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
        }
    }

    #[test]
    fn the_key_is_generated_once_private_and_then_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = local_key(config(None), dir.path()).unwrap();
        let path = dir.path().join(KEY_FILE);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = local_key(config(None), dir.path()).unwrap();
        assert_eq!(first.verifier(), again.verifier());
        assert_eq!(again.name(), freedom_shared::tlog::DEFAULT_ORIGIN);
        let error = local_key(config(Some("other.example/log")), dir.path()).unwrap_err();
        assert!(matches!(error, KeyFileError::AnotherOrigin { .. }));
        std::fs::write(&path, "PRIVATE+KEY+broken-secret-text").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let error = local_key(config(None), dir.path()).unwrap_err().to_string();
        assert!(!error.contains("broken-secret-text"), "{error}");
    }
}
