//! The log's signing key for freedom-local: `FF_LOG_SIGNING_KEY` when set,
//! else the key kept in `<data-dir>/log-signing.key`, generated (mode 0600)
//! on first start. Readers verify checkpoints with its verifier key, which
//! freedom-local logs at start and the contract view publishes.

use freedom_shared::config::LogConfig;
use freedom_shared::tlog::Log;
use freedom_shared::tlog::note::SigningKey;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The key file's name in the data dir.
pub const KEY_FILE: &str = "log-signing.key";

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

/// The log `config` describes, with the key from the environment or from
/// (or newly in) `data_dir`.
pub fn local_log(config: LogConfig, data_dir: &Path) -> Result<Log, KeyFileError> {
    let key = match config.signing_key {
        Some(key) => key,
        None => key_from_file(&config.origin, config.origin_configured, data_dir)?,
    };
    let origin = key.name().to_owned();
    Ok(Log::new(&origin, Some(key)).expect("the key names the origin"))
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
    match std::fs::read_to_string(&path) {
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
            if let Ok(metadata) = std::fs::metadata(&path)
                && metadata.permissions().mode() & 0o077 != 0
            {
                tracing::warn!(file = %path.display(), "the log's signing key file is readable by others: chmod 600 it");
            }
            Ok(key)
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
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
        Err(error) => Err(io("read", error)),
    }
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
        let first = local_log(config(None), dir.path()).unwrap();
        let path = dir.path().join(KEY_FILE);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = local_log(config(None), dir.path()).unwrap();
        assert_eq!(first.verifier_key(), again.verifier_key());
        assert_eq!(again.origin(), freedom_shared::tlog::DEFAULT_ORIGIN);
        let error = local_log(config(Some("other.example/log")), dir.path()).unwrap_err();
        assert!(matches!(error, KeyFileError::AnotherOrigin { .. }));
        std::fs::write(&path, "PRIVATE+KEY+broken-secret-text").unwrap();
        let error = local_log(config(None), dir.path()).unwrap_err().to_string();
        assert!(!error.contains("broken-secret-text"), "{error}");
    }
}
