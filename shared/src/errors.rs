//! An error's cause chain as one line: how the log shows a failure (every
//! cause kept as a `#[source]`, none flattened into a string) and how a
//! binary that cannot start says why.

use std::error::Error;
use std::fmt;

/// Displays an error followed by each of its causes, `": "`-separated:
/// `the store is unavailable: KV REST store: the connection failed: …`.
/// For the log only: clients see a stable code and a plain message.
pub(crate) struct ErrorChain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

/// Prints why a binary could not start, as sentences (the error and its
/// causes, never a `Debug` form), and gives the exit code for it.
pub fn fatal(program: &str, error: &(dyn Error + 'static)) -> std::process::ExitCode {
    // Logging may not be set up (or may be filtered): this line must show.
    eprintln!("{program}: {}", ErrorChain(error));
    std::process::ExitCode::FAILURE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("inner")]
    struct Inner;

    #[test]
    fn the_chain_names_every_cause_in_order() {
        assert_eq!(ErrorChain(&Outer(Inner)).to_string(), "outer: inner");
        assert_eq!(ErrorChain(&Inner).to_string(), "inner");
    }
}
