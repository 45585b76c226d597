//! Provider text made fit for a paper book, a public record and the report.
//!
//! What DexScreener and RugCheck send is anyone's text: a token can be
//! named `ceo@example.com`, `=HYPERLINK(…)` or `<script>`, or carry
//! invisible characters that reorder what a reader sees. Before such text
//! enters a book or the report it is cleaned here:
//!
//! - control, bidirectional and format characters are removed
//!   (`is_hidden`, the record rules' one table of them);
//! - a symbol is kept only as 1 to [`MAX_SYMBOL_CHARS`] characters of the
//!   identifier alphabet (`A-Z a-z 0-9 . _ : -`) and `$`, and only if the
//!   sensitive-content guard passes it; otherwise the caller shows the
//!   first 8 characters of the mint and says so in an event
//!   (`fallback_symbol`);
//! - a URL is kept only as an http(s) URL of printable ASCII of at most
//!   [`MAX_URL_BYTES`];
//! - other text (a risk's name) is cut to a given number of characters.

use crate::record::guard::Guard;

/// Longest symbol kept.
pub(crate) const MAX_SYMBOL_CHARS: usize = 32;
/// Longest URL kept, in bytes.
pub(crate) const MAX_URL_BYTES: usize = 2048;
/// How many characters of the mint stand in for a symbol that is not kept.
pub(crate) const FALLBACK_SYMBOL_CHARS: usize = 8;

pub(crate) use crate::record::text::is_hidden;

/// `text` without hidden characters, cut to `max` characters.
pub(crate) fn visible(text: &str, max: usize) -> String {
    text.chars().filter(|c| !is_hidden(*c)).take(max).collect()
}

/// Whether `c` may appear in a kept symbol.
fn symbol_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-' | '$')
}

/// The symbol a provider gave, cleaned, if it may stand in a public record:
/// `None` when the caller must fall back to the mint.
pub(crate) fn symbol(raw: &str, guard: &Guard) -> Option<String> {
    let cleaned = visible(raw, usize::MAX);
    let cleaned = cleaned.trim();
    let length = cleaned.chars().count();
    ((1..=MAX_SYMBOL_CHARS).contains(&length)
        && cleaned.chars().all(symbol_char)
        && guard.scan(cleaned).is_none())
    .then(|| cleaned.to_owned())
}

/// What stands in for a symbol that is not kept: the mint's first
/// [`FALLBACK_SYMBOL_CHARS`] characters (a base58 address, always fit).
pub(crate) fn fallback_symbol(mint: &str) -> String {
    mint.chars().take(FALLBACK_SYMBOL_CHARS).collect()
}

/// A URL a provider gave, if it is an http(s) URL of printable ASCII of at
/// most [`MAX_URL_BYTES`].
pub(crate) fn url(raw: &str) -> Option<&str> {
    let lower = raw.get(..8).unwrap_or(raw).to_ascii_lowercase();
    (raw.len() <= MAX_URL_BYTES
        && (lower.starts_with("https://") || lower.starts_with("http://"))
        && raw.bytes().all(|b| b.is_ascii_graphic()))
    .then_some(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_kept_only_when_fit_for_a_public_record() {
        let guard = Guard::new(Some("the-write-token-0123456789"));
        for kept in ["SOL", "USDC", "$WIF", "JitoSOL", "a.b_c:d-e", "X"] {
            assert_eq!(symbol(kept, &guard).as_deref(), Some(kept), "{kept}");
        }
        // Hidden characters go; what is left may be kept.
        assert_eq!(
            symbol("\u{202E}BO\u{200B}NK\u{2066}", &guard).as_deref(),
            Some("BONK")
        );
        assert_eq!(symbol(" SOL\n", &guard).as_deref(), Some("SOL"));
        for refused in [
            "ceo@example.com",
            "=HYPERLINK(\"https://x.example\")",
            "<script>alert(1)</script>",
            "+1-555",
            "two words",
            "",
            "\u{200B}",
            "ÉTOILE",
            "the-write-token-0123456789",
        ] {
            assert_eq!(symbol(refused, &guard), None, "{refused}");
        }
        assert_eq!(symbol(&"A".repeat(32), &guard).map(|s| s.len()), Some(32));
        assert_eq!(symbol(&"A".repeat(33), &guard), None);
        assert_eq!(
            fallback_symbol("DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263"),
            "DezXAZ8z"
        );
    }

    #[test]
    fn urls_are_kept_only_as_short_printable_http_urls() {
        assert!(url("https://dexscreener.com/solana/abc").is_some());
        assert!(url("HTTP://example.com/x?y=1").is_some());
        for refused in [
            "javascript:alert(1)",
            "https://example.com/a b",
            "https://example.com/\u{202E}x",
            "ftp://example.com",
            "",
        ] {
            assert!(url(refused).is_none(), "{refused}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert!(url(&long).is_none());
    }

    #[test]
    fn visible_text_drops_hidden_characters_and_is_cut() {
        assert_eq!(visible("a\u{0}b\u{200F}c\u{E0041}d", 10), "abcd");
        assert_eq!(visible("abcdef", 3), "abc");
    }
}
