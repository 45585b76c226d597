//! Where the fund answers and the media types it answers with: the one
//! place the routes, the page and the contract take them from.

use freedom_shared::tlog::LOG_PREFIX;

/// The fund API's path.
pub const FUND_PATH: &str = "/api/freedom-fund";

/// The Atom feed of the latest decisions.
pub(crate) const FEED_PATH: &str = "/feed.atom";

/// The feed's media type.
pub(crate) const ATOM: &str = "application/atom+xml; charset=utf-8";

/// The media type of the log's text resources (checkpoints, proofs).
pub(crate) const TEXT_PLAIN: &str = "text/plain; charset=utf-8";

/// The media type of JSON answers.
pub(crate) const JSON: &str = "application/json";

/// The media type of the page.
pub(crate) const HTML: &str = "text/html; charset=utf-8";

/// The log's checkpoint, `<prefix>/checkpoint`.
pub(crate) fn checkpoint_path() -> String {
    format!("{LOG_PREFIX}/checkpoint")
}

/// The route of the log's tiles, `<prefix>/tile/<path>`.
pub(crate) fn tile_route() -> String {
    format!("{LOG_PREFIX}/tile/{{*path}}")
}

/// The log's witness policy, `<prefix>/policy`.
pub(crate) fn policy_path() -> String {
    format!("{LOG_PREFIX}/policy")
}

/// Where the write token runs a cosigning round, `<prefix>/cosign`.
pub(crate) fn cosign_path() -> String {
    format!("{LOG_PREFIX}/cosign")
}

/// The route of the witnessed checkpoints, `<prefix>/witnessed/<n>`.
pub(crate) fn witnessed_route() -> String {
    format!("{LOG_PREFIX}/witnessed/{{size}}")
}
