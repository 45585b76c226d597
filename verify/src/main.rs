//! `freedom-verify`: checks Freedom Fund's public record as a transparency
//! log, trusting only the log's verifier key.
//!
//! ```text
//! freedom-verify <base-url> --key <verifier-key> [--state <file>] [--policy <file> [--timeline]]
//! freedom-verify proof <file.tlog-proof> --key <verifier-key> --record <record.json> [--policy <file>]
//! freedom-verify monitor <base-url> --key <verifier-key> --state <dir> [--policy <file>]
//!                [--once | --every <duration>] [--feed <file.atom>]
//! ```
//!
//! With `--policy` (a c2sp.org/tlog-policy file), the checkpoint must carry
//! cosignatures meeting its quorum: the line names the witnesses that
//! verified, and on failure the groups short of their threshold. A proof's
//! line then also says when the record was in the log by (its checkpoint's
//! quorum time, from the cosignatures alone), on whose word, and a
//! snapshot's lag. `--timeline` checks the time the service keeps for each
//! witnessed checkpoint (never earlier than its cosignatures allow, never
//! decreasing with size), recomputes every series' recording block from
//! the log and those times, and fails where the dashboard differs.
//!
//! Prints one line. Exit 0: verified. Exit 1: a discrepancy (the line names
//! the first one). Exit 2: the check could not be made (unreachable
//! service, unreadable file, bad arguments).
//!
//! `monitor` keeps watching (freedom_verify::monitor): `--once` runs one
//! pass and exits 0 when all holds, 1 on an alarm (each printed with its
//! evidence file), 2 when the log could not be reached; otherwise it runs a
//! pass every `--every` (`s`, `m`, `h` or `d`; an hour by default) until
//! stopped.

use clap::{Parser, Subcommand};
use freedom_tlog::note::VerifierKey;
use freedom_tlog::policy::Policy;
use freedom_verify::monitor::{Monitor, Pass};
use freedom_verify::{Failure, Service, Verified, verify_log, verify_proof_file, verify_timeline};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(
    name = "freedom-verify",
    about = "Verify Freedom Fund's record: the signed checkpoint, every entry and tile, each record, and consistency with the checkpoint kept; or one .tlog-proof offline",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Options {
    #[command(subcommand)]
    offline: Option<Offline>,
    /// The service's base URL, e.g. https://fund.example.com/
    #[arg(required = true)]
    base_url: Option<String>,
    /// The log's verifier key (<name>+<key id>+<base64>), from a source you trust.
    #[arg(long, required = true)]
    key: Option<String>,
    /// Where to keep the last checkpoint seen; each run checks the log still extends it.
    #[arg(long)]
    state: Option<PathBuf>,
    /// A witness policy (c2sp.org/tlog-policy) whose quorum the checkpoint must meet.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Also check each witnessed checkpoint's kept time against its
    /// cosignatures and recompute every series' recording block (on time,
    /// late, clock conflicts, lags) from the log and its witnessed
    /// checkpoints; needs --policy.
    #[arg(long, requires = "policy")]
    timeline: bool,
}

#[derive(Debug, Subcommand)]
enum Offline {
    /// Check one .tlog-proof and the record it proves, without the network.
    Proof {
        /// The .tlog-proof file (`?view=proof&seq=N&format=tlog-proof`).
        file: PathBuf,
        /// The log's verifier key.
        #[arg(long)]
        key: String,
        /// The record as JSON (any key order or spacing).
        #[arg(long)]
        record: PathBuf,
        /// A witness policy whose quorum the proof's checkpoint must meet.
        #[arg(long)]
        policy: Option<PathBuf>,
    },
    /// Keep watching the log: each pass verifies the new entries and the
    /// ledger's rules on them, and raises alarms with evidence.
    Monitor {
        /// The service's base URL.
        base_url: String,
        /// The log's verifier key.
        #[arg(long)]
        key: String,
        /// Where the monitor keeps its state and its alarms' evidence.
        #[arg(long)]
        state: PathBuf,
        /// A witness policy whose quorum every checkpoint must meet.
        #[arg(long)]
        policy: Option<PathBuf>,
        /// One pass, then exit: 0 all holds, 1 an alarm, 2 unreachable.
        #[arg(long, conflicts_with = "every")]
        once: bool,
        /// A pass every this long (e.g. 15m, 1h), until stopped.
        #[arg(long, value_parser = duration)]
        every: Option<Duration>,
        /// An Atom feed of the alarms to keep (the newest 100).
        #[arg(long)]
        feed: Option<PathBuf>,
    },
}

/// A duration: a whole number and `s`, `m`, `h` or `d`.
fn duration(text: &str) -> Result<Duration, String> {
    const UNITS: [(&str, u64); 4] = [("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)];
    UNITS
        .iter()
        .find_map(|(unit, seconds)| Some((text.strip_suffix(unit)?, *seconds)))
        .and_then(|(number, seconds)| number.parse::<u64>().ok()?.checked_mul(seconds))
        .filter(|seconds| *seconds > 0)
        .map(Duration::from_secs)
        .ok_or_else(|| "a positive whole number and s, m, h or d (e.g. 15m, 1h)".into())
}

/// A pass's lines and exit code.
fn report(pass: &Pass) -> ExitCode {
    for (kind, file) in &pass.alarms {
        println!("ALARM {}: evidence {}", kind.as_str(), file.display());
    }
    if !pass.alarms.is_empty() {
        return ExitCode::from(1);
    }
    match &pass.unreachable {
        Some(why) => {
            eprintln!("CANNOT CHECK: {why}");
            ExitCode::from(2)
        }
        None => {
            println!(
                "OK size {}: {} new entries verified, every rule holds",
                pass.size, pass.verified
            );
            ExitCode::SUCCESS
        }
    }
}

fn read(path: &PathBuf) -> Result<Vec<u8>, Failure> {
    std::fs::read(path)
        .map_err(|e| Failure::CannotCheck(format!("cannot read {}: {e}", path.display())))
}

fn verifier(text: &str) -> Result<VerifierKey, Failure> {
    VerifierKey::parse(text).map_err(|e| Failure::CannotCheck(format!("--key: {e}")))
}

/// The policy in `path`, when given, and its text.
fn policy_with_text(path: Option<&PathBuf>) -> Result<Option<(Policy, String)>, Failure> {
    path.map(|path| {
        let text = String::from_utf8(read(path)?)
            .map_err(|_| Failure::CannotCheck(format!("{} is not text", path.display())))?;
        let policy = Policy::parse(&text)
            .map_err(|e| Failure::CannotCheck(format!("--policy {}: {e}", path.display())))?;
        Ok((policy, text))
    })
    .transpose()
}

/// The policy in `path`, when given.
fn policy(path: Option<&PathBuf>) -> Result<Option<Policy>, Failure> {
    Ok(policy_with_text(path)?.map(|(policy, _)| policy))
}

/// The monitor's passes: one with `once`, else one every `every` (an hour
/// by default) until stopped.
async fn monitor(monitor: Monitor, every: Option<Duration>, once: bool) -> ExitCode {
    loop {
        let code = match monitor.pass().await {
            Ok(pass) => report(&pass),
            Err(failure) => {
                eprintln!("CANNOT CHECK: {failure}");
                return ExitCode::from(2);
            }
        };
        if once {
            return code;
        }
        tokio::time::sleep(every.unwrap_or(Duration::from_secs(3600))).await;
    }
}

async fn run(options: Options) -> Result<Verified, Failure> {
    match options.offline {
        Some(Offline::Monitor { .. }) => Err(Failure::CannotCheck(
            "the monitor runs on its own (see main)".into(),
        )),
        Some(Offline::Proof {
            file,
            key,
            record,
            policy: policy_file,
        }) => {
            let proof = String::from_utf8(read(&file)?)
                .map_err(|_| Failure::CannotCheck(format!("{} is not text", file.display())))?;
            let policy = policy(policy_file.as_ref())?;
            verify_proof_file(&proof, &verifier(&key)?, &read(&record)?, policy.as_ref())
        }
        None => {
            let key = verifier(options.key.as_deref().unwrap_or_default())?;
            let policy = policy(options.policy.as_ref())?;
            let service = Service::new(options.base_url.as_deref().unwrap_or_default())?;
            let verified =
                verify_log(&service, &key, options.state.as_deref(), policy.as_ref()).await?;
            match (options.timeline, policy.as_ref()) {
                (true, Some(policy)) => {
                    let timeline = verify_timeline(&service, &key, policy).await?;
                    Ok(Verified(format!("{}\n{}", verified.0, timeline.0)))
                }
                _ => Ok(verified),
            }
        }
    }
}

fn main() -> ExitCode {
    let options = Options::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("CANNOT CHECK: no async runtime: {error}");
            return ExitCode::from(2);
        }
    };
    if let Some(Offline::Monitor {
        base_url,
        key,
        state,
        policy: policy_file,
        once,
        every,
        feed,
    }) = options.offline
    {
        let built = (|| -> Result<Monitor, Failure> {
            Ok(Monitor {
                service: Service::new(&base_url)?,
                key: verifier(&key)?,
                policy: policy_with_text(policy_file.as_ref())?,
                state,
                feed,
            })
        })();
        return match built {
            Ok(built) => runtime.block_on(monitor(built, every, once)),
            Err(failure) => {
                eprintln!("CANNOT CHECK: {failure}");
                ExitCode::from(2)
            }
        };
    }
    match runtime.block_on(run(options)) {
        Ok(Verified(line)) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(Failure::Discrepancy(line)) => {
            eprintln!("FAILED: {line}");
            ExitCode::from(1)
        }
        Err(Failure::CannotCheck(line)) => {
            eprintln!("CANNOT CHECK: {line}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_is_a_whole_number_and_a_unit_and_nothing_else() {
        assert_eq!(duration("15m"), Ok(Duration::from_secs(900)));
        assert_eq!(duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(duration("2d"), Ok(Duration::from_secs(172_800)));
        for refused in [
            "",
            "h",
            "0h",
            "-1h",
            "1.5h",
            "15",
            "15 m",
            "5\u{e9}",
            "\u{e9}",
            "99999999999999999999d",
            "18446744073709551615d",
        ] {
            assert!(duration(refused).is_err(), "{refused:?}");
        }
    }
}
