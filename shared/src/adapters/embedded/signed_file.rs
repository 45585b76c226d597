//! The file adapter of [`SignerMemory`], for freedom-local: the log's
//! largest signed checkpoint in a file beside the signing key
//! (`<key file>.signed`), outside the ledger's database, so a restored,
//! emptied or replaced ledger (or a flushed KV store) cannot make it
//! forget.
//!
//! Each update is written to a temporary file, flushed to disk, renamed
//! over the old one and the directory flushed, so the file always holds
//! one whole checkpoint, and holds the new one before it is served.
//! Updates take an exclusive lock on `<key file>.signed.lock`, so
//! processes sharing a data dir compare and swap one after the other.

use crate::ports::StoreError;
use crate::ports::signer_memory::SignerMemory;
use async_trait::async_trait;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

/// Most bytes the file may hold: a signed checkpoint is a few hundred.
const MAX_BYTES: u64 = 16 * 1024;

/// The signer's memory in a file.
#[derive(Debug, Clone)]
pub struct SignedFile {
    path: PathBuf,
}

impl SignedFile {
    /// The memory of the key kept at `key_file`: `<key_file>.signed`.
    pub fn beside(key_file: &Path) -> SignedFile {
        let mut path = key_file.as_os_str().to_owned();
        path.push(".signed");
        SignedFile { path: path.into() }
    }

    /// The memory in the file `path`.
    pub fn at(path: &Path) -> SignedFile {
        SignedFile {
            path: path.to_owned(),
        }
    }

    fn sibling(&self, suffix: &str) -> PathBuf {
        let mut path = self.path.as_os_str().to_owned();
        path.push(suffix);
        path.into()
    }

    fn failed(&self, action: &str, error: std::io::Error) -> StoreError {
        StoreError::unavailable(
            format!(
                "cannot {action} the signer's memory {}",
                self.path.display()
            ),
            error,
        )
    }

    /// A memory that is a FIFO, a device or a directory: reading it could
    /// block for ever or never end.
    fn not_a_file(&self) -> StoreError {
        StoreError::Corrupt(format!(
            "the signer's memory {} is not a regular file: move it away and restore the file from a backup",
            self.path.display()
        ))
    }

    fn read(&self) -> Result<Option<String>, StoreError> {
        match std::fs::metadata(&self.path) {
            Ok(metadata) if !metadata.is_file() => return Err(self.not_a_file()),
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(self.failed("read", error)),
        }
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(self.failed("read", error)),
        };
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Err(self.not_a_file());
        }
        let mut text = String::new();
        file.take(MAX_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| self.failed("read", e))?;
        if text.len() as u64 > MAX_BYTES {
            return Err(StoreError::Corrupt(format!(
                "the signer's memory {} is larger than a checkpoint",
                self.path.display()
            )));
        }
        Ok(Some(text))
    }

    fn compare_and_write(&self, previous: Option<&str>, next: &str) -> Result<bool, StoreError> {
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.sibling(".lock"))
            .map_err(|e| self.failed("lock", e))?;
        lock.lock().map_err(|e| self.failed("lock", e))?;
        if self.read()?.as_deref() != previous {
            return Ok(false);
        }
        let temporary = self.sibling(".tmp");
        let mut file = std::fs::File::create(&temporary).map_err(|e| self.failed("write", e))?;
        file.write_all(next.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| self.failed("write", e))?;
        std::fs::rename(&temporary, &self.path).map_err(|e| self.failed("write", e))?;
        if let Some(directory) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(directory)
                .and_then(|d| d.sync_all())
                .map_err(|e| self.failed("write", e))?;
        }
        Ok(true)
    }
}

#[async_trait]
impl SignerMemory for SignedFile {
    async fn recall(&self) -> Result<Option<String>, StoreError> {
        let memory = self.clone();
        tokio::task::spawn_blocking(move || memory.read())
            .await
            .map_err(|e| StoreError::unavailable("the signer's memory", e))?
    }

    async fn remember(&self, previous: Option<&str>, next: &str) -> Result<bool, StoreError> {
        let memory = self.clone();
        let (previous, next) = (previous.map(str::to_owned), next.to_owned());
        tokio::task::spawn_blocking(move || memory.compare_and_write(previous.as_deref(), &next))
            .await
            .map_err(|e| StoreError::unavailable("the signer's memory", e))?
    }

    fn describe(&self) -> String {
        format!("the file {}", self.path.display())
    }
}
