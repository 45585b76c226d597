//! Keys and wallets: PEM and signed-note private keys, Solana keypairs
//! (as bytes, base58, hex, base64, or split), labelled keys, WIF and
//! extended keys, and seed phrases.

use super::regex;
use regex::Regex;
use std::sync::LazyLock;

static PEM_PRIVATE_KEY: LazyLock<Regex> =
    LazyLock::new(|| regex(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"));
/// Sixty-four numbers from 0 to 999 in brackets, braces or parentheses,
/// separated by commas or semicolons: a keypair as a byte array (any such
/// array is refused, as wallets export keys so).
static KEYPAIR_BYTES: LazyLock<Regex> =
    LazyLock::new(|| regex(r"[\[\(\{]\s*(?:\d{1,3}\s*[,;]\s*){63}\d{1,3}\s*[\]\)\}]"));
/// A number that could be one byte of an array: decimal, or `0x` and one or
/// two hex digits.
static BYTE_NUMBER: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\b(?:0x[0-9a-f]{1,2}|[0-9]{1,3})\b"));
/// What labels a key or seed: `private key`, `seed`, `pk`, `keypair`,
/// `secret`…, then an optional qualifier in brackets (`(base58)`, `[hex]`)
/// and up to three punctuation characters.
const KEY_LABEL: &str = r"(?i)\b(?:(?:private|secret|priv|signing)[\s_-]?key|seed|pk|keypair|secret)\b(?:\s*[\(\[][A-Za-z0-9 _-]{1,20}[\)\]])?\W{0,3}\s*";
static LABELLED_HEX_KEY: LazyLock<Regex> =
    LazyLock::new(|| regex(&format!(r"{KEY_LABEL}(?:0x)?[0-9a-fA-F]{{64}}\b")));
/// A labelled base58 word the size of a 32-byte seed (32 to 44 characters).
static LABELLED_BASE58_KEY: LazyLock<Regex> =
    LazyLock::new(|| regex(&format!(r"{KEY_LABEL}([1-9A-HJ-NP-Za-km-z]{{32,44}})\b")));
/// A labelled base64 word the size of a 32-byte seed (43 characters and
/// its padding, standard or URL-safe).
static LABELLED_BASE64_KEY: LazyLock<Regex> = LazyLock::new(|| {
    regex(&format!(
        r"{KEY_LABEL}([A-Za-z0-9+/_-]{{43}}=?)(?:[^A-Za-z0-9+/_=-]|$)"
    ))
});
static BASE58_WORD: LazyLock<Regex> = LazyLock::new(|| regex(r"\b[1-9A-HJ-NP-Za-km-z]{50,120}\b"));
static HEX_128: LazyLock<Regex> = LazyLock::new(|| regex(r"\b(?:0x)?[0-9a-fA-F]{128}\b"));
/// A base64 word the size of 64 bytes (standard or URL-safe, padded or not).
static BASE64_64: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?:^|[^A-Za-z0-9+/_-])([A-Za-z0-9+/_-]{86}(?:==)?)(?:[^A-Za-z0-9+/_=-]|$)")
});

/// Whether `word`, in one of the encodings wallets export keys in (base58,
/// hex with or without `0x`, base64 standard or URL-safe), is the 64 bytes
/// of an Ed25519 keypair.
pub(super) fn is_encoded_keypair(word: &str) -> bool {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let hex_digits = word.strip_prefix("0x").unwrap_or(word);
    let unpadded = word.trim_end_matches('=');
    let decodings = [
        bs58::decode(word).into_vec().ok(),
        (hex_digits.len() == 128)
            .then(|| hex::decode(hex_digits).ok())
            .flatten(),
        STANDARD_NO_PAD.decode(unpadded).ok(),
        URL_SAFE_NO_PAD.decode(unpadded).ok(),
    ];
    decodings
        .into_iter()
        .flatten()
        .any(|bytes| is_ed25519_keypair(&bytes))
}

/// Whether a keypair sits in `text` split by white space into two or more
/// words (a line break or spaces pasted into it): every run of consecutive
/// words of key characters that joins to a keypair's length is tried.
pub(super) fn has_split_keypair(text: &str) -> bool {
    let key_word = |w: &&str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'-'))
    };
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| matches!(c, ',' | '.' | ';' | '(' | ')' | '"' | '\'')))
        .collect();
    (0..words.len()).any(|start| {
        let mut joined = String::new();
        for (count, word) in words[start..].iter().enumerate() {
            if !key_word(word) || joined.len() + word.len() > 130 {
                return false;
            }
            joined.push_str(word);
            if count > 0 && (86..=130).contains(&joined.len()) && is_encoded_keypair(&joined) {
                return true;
            }
        }
        false
    })
}

/// The signed-note encoding of a signer key (any log's, c2sp.org/signed-note).
const SIGNED_NOTE_PRIVATE_KEY: &str = "PRIVATE+KEY+";

/// Most numbers of one run a keypair is looked for in (each 64-window costs
/// an Ed25519 key derivation).
const MAX_RUN_NUMBERS: usize = 256;

/// Whether a keypair sits in `text` as a run of 64 or more byte values
/// (decimal or `0x` hex) separated by commas, semicolons, colons, bars or
/// white space, bracketed or not: each window of 64 is tried as a seed and
/// its public key (a structural check, so prose with numbers passes).
pub(super) fn has_keypair_byte_run(text: &str) -> bool {
    let separator = |gap: &str| {
        gap.len() <= 4
            && gap
                .chars()
                .all(|c| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '|'))
    };
    let mut run: Vec<u8> = Vec::new();
    let mut end = 0usize;
    let check = |run: &[u8]| {
        run.len() >= 64
            && run[..run.len().min(MAX_RUN_NUMBERS)]
                .windows(64)
                .any(is_ed25519_keypair)
    };
    for number in BYTE_NUMBER.find_iter(text) {
        let digits = number.as_str();
        let value = match digits.get(..2) {
            Some("0x" | "0X") => u8::from_str_radix(&digits[2..], 16).ok(),
            _ => digits.parse::<u8>().ok(),
        };
        let joined = !run.is_empty() && separator(&text[end..number.start()]);
        if !joined {
            if check(&run) {
                return true;
            }
            run.clear();
        }
        match value {
            Some(byte) => run.push(byte),
            None => {
                if check(&run) {
                    return true;
                }
                run.clear();
            }
        }
        end = number.end();
    }
    check(&run)
}

pub(super) fn has_private_key(text: &str) -> bool {
    text.contains(SIGNED_NOTE_PRIVATE_KEY)
        || PEM_PRIVATE_KEY.is_match(text)
        || KEYPAIR_BYTES.is_match(text)
        || has_keypair_byte_run(text)
        || LABELLED_HEX_KEY.is_match(text)
        || LABELLED_BASE64_KEY.captures_iter(text).any(|c| {
            use base64::Engine as _;
            use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
            let unpadded = c[1].trim_end_matches('=');
            [
                STANDARD_NO_PAD.decode(unpadded),
                URL_SAFE_NO_PAD.decode(unpadded),
            ]
            .into_iter()
            .any(|bytes| bytes.is_ok_and(|b| b.len() == 32))
        })
        || LABELLED_BASE58_KEY.captures_iter(text).any(|c| {
            bs58::decode(&c[1])
                .into_vec()
                .is_ok_and(|bytes| bytes.len() == 32)
        })
        || BASE58_WORD.find_iter(text).any(|m| {
            is_wif_or_extended_key(m.as_str())
                || bs58::decode(m.as_str())
                    .into_vec()
                    .is_ok_and(|bytes| is_ed25519_keypair(&bytes))
        })
        || HEX_128.find_iter(text).any(|m| {
            hex::decode(m.as_str().trim_start_matches("0x"))
                .is_ok_and(|bytes| is_ed25519_keypair(&bytes))
        })
        || BASE64_64
            .captures_iter(text)
            .any(|c| is_encoded_keypair(&c[1]))
        || has_split_keypair(text)
}

/// A Solana keypair as `solana-keygen` and wallets (Phantom) export it: a
/// 32-byte Ed25519 seed followed by its public key. A transaction signature
/// is 64 bytes too, but its second half is not the first half's public key.
pub(super) fn is_ed25519_keypair(bytes: &[u8]) -> bool {
    let Ok(keypair) = <&[u8; 64]>::try_from(bytes) else {
        return false;
    };
    let (seed, public) = keypair.split_at(32);
    let Ok(seed) = <[u8; 32]>::try_from(seed) else {
        return false;
    };
    let derived = ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key();
    subtle::ConstantTimeEq::ct_eq(derived.as_bytes().as_slice(), public).into()
}

/// Bitcoin WIF private keys (`5…`, `K…`, `L…`, testnet `9…`, `c…`) and BIP32
/// extended private keys (`xprv`, `tprv`, `yprv`, `zprv`), both base58check.
/// A Solana signature is plain base58 with no checksum, so it does not match.
pub(super) fn is_wif_or_extended_key(word: &str) -> bool {
    let Ok(payload) = bs58::decode(word).with_check(None).into_vec() else {
        return false;
    };
    let wif = matches!(payload.first(), Some(0x80 | 0xef)) && matches!(payload.len(), 33 | 34);
    let extended = payload.len() == 78
        && ["xprv", "tprv", "yprv", "zprv"]
            .iter()
            .any(|p| word.starts_with(p));
    wif || extended
}

static WORD: LazyLock<Regex> = LazyLock::new(|| regex(r"[A-Za-z]+"));
const SEED_LENGTHS: [usize; 5] = [24, 21, 18, 15, 12];

/// Runs of consecutive BIP39 English words, checked in every window of a
/// seed length for a valid checksum. Ordinary prose breaks such runs quickly
/// ("the", "and", "of" are not BIP39 words).
pub(super) fn has_seed_phrase(text: &str) -> bool {
    let language = bip39::Language::English;
    let mut run: Vec<String> = Vec::new();
    let check_run = |run: &[String]| {
        SEED_LENGTHS
            .iter()
            .filter(|&&len| run.len() >= len)
            .any(|&len| {
                run.windows(len)
                    .any(|w| bip39::Mnemonic::parse_in_normalized(language, &w.join(" ")).is_ok())
            })
    };
    for word in WORD.find_iter(text) {
        let lower = word.as_str().to_ascii_lowercase();
        if language.find_word(&lower).is_some() {
            run.push(lower);
        } else {
            if check_run(&run) {
                return true;
            }
            run.clear();
        }
    }
    check_run(&run)
}
