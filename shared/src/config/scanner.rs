//! The scanner's configuration from the environment (docs/operating.md,
//! "Configuration"): provider base URLs, the universe, the observed wallets,
//! and the run's time budget. Provider rates follow docs/providers.md.

use crate::scan::UniverseToken;
use std::time::Duration;

/// The universe when `FF_SCANNER_UNIVERSE` is not set: liquid, well-known
/// Solana tokens (public mint addresses).
pub(crate) const DEFAULT_UNIVERSE: [(&str, &str); 8] = [
    ("SOL", "So11111111111111111111111111111111111111112"),
    ("USDC", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
    ("JUP", "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"),
    ("BONK", "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263"),
    ("WIF", "EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm"),
    ("RAY", "4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R"),
    ("PYTH", "HZ1JovNiVvGrGNiiYvEozEVgZ58xaU3RKwX8eACQBCt3"),
    ("JTO", "jtojtomepa8beP8AuQc6eXt5FriJwfFMwQx2v2f9mCL"),
];

/// Most tokens a universe may hold.
pub(crate) const MAX_UNIVERSE: usize = 500;

/// How a provider is reached and paced.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// Base URL (no trailing slash).
    pub base_url: String,
    /// Timeout of one request.
    pub timeout: Duration,
    /// Retries after the first attempt (429, 5xx, timeouts, transport).
    pub retries: u32,
    /// First backoff; doubled each retry (a `Retry-After` is honoured up to 5 s).
    pub backoff: Duration,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Minimum time between two request starts (the documented rate).
    pub spacing: Duration,
    /// How long into a run this provider's requests may go on (within the
    /// run's collection budget): what has answered by then is kept, what
    /// has not is a failure of this provider alone.
    pub deadline: Duration,
}

/// Everything a run needs to know.
#[derive(Debug, Clone)]
pub struct ScannerConfig {
    /// The tokens to check.
    pub universe: Vec<UniverseToken>,
    /// Public accounts to observe (read-only).
    pub wallets: Vec<String>,
    /// DexScreener: 300 requests a minute.
    pub dexscreener: ProviderConfig,
    /// RugCheck: rate not documented; 4 a second, 4 at once.
    pub rugcheck: ProviderConfig,
    /// Solana RPC: 40 calls per 10 s for one method.
    pub solana: ProviderConfig,
    /// Fresh RugCheck reports fetched per run at most (the rest stay cached
    /// or unknown until a later run).
    pub max_risk_fetches: usize,
    /// Time allowed for collecting from the providers: no provider's
    /// deadline goes beyond it.
    pub collect_budget: Duration,
    /// The lock's expiry: longer than a run may last.
    pub lock_ttl: Duration,
}

/// A configuration mistake that stops start-up.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ScannerConfigError {
    /// An entry of a list is not a Solana address.
    #[error("{variable}: entry {index} is not a base58 Solana address")]
    NotAnAddress {
        /// The variable.
        variable: &'static str,
        /// The 1-based entry.
        index: usize,
    },
    /// A base URL is not http(s).
    #[error("{variable} must be an http(s) URL")]
    NotHttp {
        /// The variable.
        variable: &'static str,
    },
    /// The universe is empty or too large.
    #[error("FF_SCANNER_UNIVERSE must list between 1 and {MAX_UNIVERSE} tokens")]
    UniverseSize,
    /// The same mint is listed twice (the equal-weight book would count it
    /// twice and leave part of its capital in cash).
    #[error(
        "FF_SCANNER_UNIVERSE lists the same mint twice (entries {first} and {again}): list each token once"
    )]
    DuplicateMint {
        /// The 1-based entry of its first listing.
        first: usize,
        /// The 1-based entry that repeats it.
        again: usize,
    },
}

fn provider(
    base_url: String,
    concurrency: usize,
    spacing: Duration,
    deadline: Duration,
) -> ProviderConfig {
    ProviderConfig {
        base_url: base_url.trim_end_matches('/').to_owned(),
        timeout: Duration::from_secs(8),
        retries: 2,
        backoff: Duration::from_millis(500),
        concurrency,
        spacing,
        deadline,
    }
}

fn is_address(text: &str) -> bool {
    bs58::decode(text)
        .into_vec()
        .is_ok_and(|bytes| bytes.len() == 32)
}

fn url(
    lookup: &impl Fn(&str) -> Option<String>,
    variable: &'static str,
    default: &str,
) -> Result<String, ScannerConfigError> {
    let value = lookup(variable)
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| default.to_owned());
    if value.starts_with("https://") || value.starts_with("http://") {
        Ok(value)
    } else {
        Err(ScannerConfigError::NotHttp { variable })
    }
}

fn list(lookup: &impl Fn(&str) -> Option<String>, variable: &str) -> Vec<String> {
    lookup(variable)
        .unwrap_or_default()
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

impl ScannerConfig {
    /// Reads `FF_DEXSCREENER_URL`, `FF_RUGCHECK_URL`, `FF_SOLANA_RPC_URL`,
    /// `FF_SCANNER_UNIVERSE` (comma-separated `MINT` or `SYMBOL:MINT`) and
    /// `FF_SCANNER_WALLETS` (comma-separated addresses). (Long: one read
    /// per variable, each with its own refusal.)
    pub fn from_env(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<ScannerConfig, ScannerConfigError> {
        let entries = list(&lookup, "FF_SCANNER_UNIVERSE");
        let universe: Vec<UniverseToken> = if entries.is_empty() {
            DEFAULT_UNIVERSE
                .iter()
                .map(|(symbol, mint)| UniverseToken {
                    mint: (*mint).into(),
                    symbol: (*symbol).into(),
                })
                .collect()
        } else {
            entries
                .iter()
                .enumerate()
                .map(|(i, entry)| {
                    let (symbol, mint) = entry.split_once(':').unwrap_or(("", entry));
                    if !is_address(mint) {
                        return Err(ScannerConfigError::NotAnAddress {
                            variable: "FF_SCANNER_UNIVERSE",
                            index: i + 1,
                        });
                    }
                    let symbol = if symbol.is_empty() {
                        mint[..4].to_owned()
                    } else {
                        symbol.chars().take(16).collect()
                    };
                    Ok(UniverseToken {
                        mint: mint.to_owned(),
                        symbol,
                    })
                })
                .collect::<Result<_, _>>()?
        };
        if universe.is_empty() || universe.len() > MAX_UNIVERSE {
            return Err(ScannerConfigError::UniverseSize);
        }
        for (again, token) in universe.iter().enumerate() {
            if let Some(first) = universe[..again].iter().position(|t| t.mint == token.mint) {
                return Err(ScannerConfigError::DuplicateMint {
                    first: first + 1,
                    again: again + 1,
                });
            }
        }
        let wallets = list(&lookup, "FF_SCANNER_WALLETS");
        if let Some(index) = wallets.iter().position(|w| !is_address(w)) {
            return Err(ScannerConfigError::NotAnAddress {
                variable: "FF_SCANNER_WALLETS",
                index: index + 1,
            });
        }
        Ok(ScannerConfig {
            universe,
            wallets,
            dexscreener: provider(
                url(&lookup, "FF_DEXSCREENER_URL", "https://api.dexscreener.com")?,
                4,
                Duration::from_millis(200),
                Duration::from_secs(20),
            ),
            rugcheck: provider(
                url(&lookup, "FF_RUGCHECK_URL", "https://api.rugcheck.xyz")?,
                4,
                Duration::from_millis(250),
                Duration::from_secs(30),
            ),
            solana: provider(
                url(
                    &lookup,
                    "FF_SOLANA_RPC_URL",
                    "https://api.mainnet-beta.solana.com",
                )?,
                4,
                Duration::from_millis(250),
                Duration::from_secs(20),
            ),
            max_risk_fetches: 40,
            collect_budget: Duration::from_secs(40),
            lock_ttl: Duration::from_secs(300),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_default_universe_is_valid_addresses() {
        let config = ScannerConfig::from_env(env(&[])).unwrap();
        assert_eq!(config.universe.len(), DEFAULT_UNIVERSE.len());
        assert!(config.universe.iter().all(|t| is_address(&t.mint)));
        assert_eq!(config.dexscreener.base_url, "https://api.dexscreener.com");
    }

    #[test]
    fn a_configured_universe_and_bad_entries() {
        let config = ScannerConfig::from_env(env(&[(
            "FF_SCANNER_UNIVERSE",
            "FOO:So11111111111111111111111111111111111111112, JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN",
        )]))
        .unwrap();
        assert_eq!(config.universe[0].symbol, "FOO");
        assert_eq!(config.universe[1].symbol, "JUPy");
        let bad = ScannerConfig::from_env(env(&[(
            "FF_SCANNER_UNIVERSE",
            "So11111111111111111111111111111111111111112,nope",
        )]));
        assert_eq!(
            bad.unwrap_err(),
            ScannerConfigError::NotAnAddress {
                variable: "FF_SCANNER_UNIVERSE",
                index: 2
            }
        );
        let twice = ScannerConfig::from_env(env(&[(
            "FF_SCANNER_UNIVERSE",
            "So11111111111111111111111111111111111111112,JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN,SOL:So11111111111111111111111111111111111111112",
        )]))
        .unwrap_err();
        assert_eq!(
            twice,
            ScannerConfigError::DuplicateMint { first: 1, again: 3 }
        );
        assert_eq!(
            twice.to_string(),
            "FF_SCANNER_UNIVERSE lists the same mint twice (entries 1 and 3): list each token once"
        );
        let bad = ScannerConfig::from_env(env(&[("FF_RUGCHECK_URL", "ftp://x")]));
        assert_eq!(
            bad.unwrap_err(),
            ScannerConfigError::NotHttp {
                variable: "FF_RUGCHECK_URL"
            }
        );
    }
}
