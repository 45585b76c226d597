//! `freedom-witness`: a minimal c2sp.org/tlog-witness in one command.
//!
//! ```text
//! freedom-witness --config witness.conf [--data-dir ./witness-data]
//!                 [--addr 127.0.0.1:7380] [--name witness.example/w1]
//!                 [--algorithm ed25519|ml-dsa-44] [--print-key]
//! ```
//!
//! The configuration lists the logs it trusts, one `log <vkey> [<url>]`
//! line each. Its key is kept in `<data-dir>/witness.key` (mode 0600),
//! made on first start with the name `--name` and the algorithm
//! `--algorithm` (Ed25519 unless `ml-dsa-44` is asked for: c2sp.org/tlog-
//! cosignature v1.1's post-quantum type 0x06); its verifier key (for a
//! policy's `witness` line) is logged at start, or printed alone with
//! `--print-key`. Its state is `<data-dir>/witness.sqlite3`.

use clap::Parser;
use freedom_tlog::cosignature::{Algorithm, CosignerKey};
use freedom_witness::{TrustedLogs, Witness, WitnessState, app};
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "freedom-witness",
    about = "A minimal c2sp.org/tlog-witness: cosigns the checkpoints of the logs it trusts once each is consistent with the last it cosigned"
)]
struct Options {
    /// The logs it trusts: `log <vkey> [<url>]` lines.
    #[arg(long)]
    config: PathBuf,
    /// Where its key and state are kept.
    #[arg(long, default_value = "./witness-data")]
    data_dir: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:7380")]
    addr: SocketAddr,
    /// The witness's name, used when its key is first made.
    #[arg(long, default_value = "freedom-witness.local")]
    name: String,
    /// The algorithm of the key made on first start (an existing key
    /// keeps its own; asking for another one is an error).
    #[arg(long, value_enum, default_value = "ed25519")]
    algorithm: AlgorithmOption,
    /// Print the witness's verifier key and exit.
    #[arg(long)]
    print_key: bool,
}

/// `--algorithm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AlgorithmOption {
    /// Ed25519 (type 0x04).
    Ed25519,
    /// ML-DSA-44 (type 0x06, FIPS 204).
    #[value(name = "ml-dsa-44")]
    MlDsa44,
}

impl AlgorithmOption {
    fn algorithm(self) -> Algorithm {
        match self {
            AlgorithmOption::Ed25519 => Algorithm::Ed25519,
            AlgorithmOption::MlDsa44 => Algorithm::MlDsa44,
        }
    }
}

/// The key in `<data_dir>/witness.key`, made (mode 0600) with `algorithm`
/// if missing; an existing key of another algorithm is an error.
fn key(
    data_dir: &Path,
    name: &str,
    algorithm: Algorithm,
) -> Result<CosignerKey, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(data_dir)?;
    let path = data_dir.join("witness.key");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let key = CosignerKey::parse(&text)
                .map_err(|e| format!("{} is not a witness key: {e}", path.display()))?;
            if key.algorithm() != algorithm {
                return Err(format!(
                    "{} holds a {:?} key, not the {algorithm:?} key --algorithm asks for: move it away to make a new one",
                    path.display(),
                    key.algorithm()
                )
                .into());
            }
            Ok(key)
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let key = CosignerKey::generate_of(algorithm, name)?;
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(&path)?;
            file.write_all(format!("{}\n", key.to_private_text()).as_bytes())?;
            file.sync_all()?;
            Ok(key)
        }
        Err(error) => Err(format!("cannot read {}: {error}", path.display()).into()),
    }
}

async fn run(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let config = std::fs::read_to_string(&options.config)
        .map_err(|e| format!("cannot read {}: {e}", options.config.display()))?;
    let logs =
        TrustedLogs::parse(&config).map_err(|e| format!("{} {e}", options.config.display()))?;
    let key = key(
        &options.data_dir,
        &options.name,
        options.algorithm.algorithm(),
    )?;
    if options.print_key {
        println!("{}", key.witness_key().to_text());
        return Ok(());
    }
    let state = WitnessState::open(&options.data_dir.join("witness.sqlite3"))?;
    let witness = Witness::new(key, logs.clone(), state);
    let socket = tokio::net::TcpListener::bind(options.addr).await?;
    tracing::info!(
        addr = %socket.local_addr()?,
        verifier_key = %witness.verifier_key(),
        logs = ?logs.origins().collect::<Vec<_>>(),
        "freedom-witness listening"
    );
    axum::serve(socket, app(witness))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        // Plain text when the log goes to a file or a pipe.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    if let Err(error) = run(Options::parse()).await {
        eprintln!("freedom-witness: {error}");
        std::process::exit(1);
    }
}
