use super::*;

fn guard() -> Guard {
    Guard::new(Some("ff-write-token-for-tests-0123456789"))
}

fn rule(text: &str) -> Option<&'static str> {
    guard().scan(text).map(SensitiveRule::as_str)
}

#[test]
fn refuses_each_kind_of_secret() {
    let cases: &[(&str, &str)] = &[
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=",
            "private_key",
        ),
        ("-----BEGIN EC PRIVATE KEY-----", "private_key"),
        (
            &format!("keypair [{}]", vec!["174"; 64].join(",")),
            "private_key",
        ),
        (
            "wallet 5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ",
            "private_key",
        ),
        (
            "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi",
            "private_key",
        ),
        (
            "private key: 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
            "private_key",
        ),
        (
            "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about",
            "seed_phrase",
        ),
        (
            "my words: legal winner thank year wave sausage worth useful legal winner thank yellow, keep safe",
            "seed_phrase",
        ),
        ("key AKIAIOSFODNN7EXAMPLE in use", "aws_key"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_key",
        ),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "jwt",
        ),
        ("Bearer abc123def456ghi789", "bearer_token"),
        ("Authorization: Basic dXNlcjpwYXNz", "bearer_token"),
        ("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "api_key"),
        ("sk_live_0123456789abcdefABCDEF", "api_key"),
        ("password: hunter22!", "api_key"),
        ("see https://alice:s3cret@example.com/x", "url_credentials"),
        (
            "https://example.com/data?api_key=abcdef123",
            "url_secret_parameter",
        ),
        (
            "https://example.com/cb#access_token=abcdef123&x=1",
            "url_secret_parameter",
        ),
        (
            "https://bucket.s3.amazonaws.com/f?X-Amz-Signature=abc&X-Amz-Credential=def",
            "url_secret_parameter",
        ),
        ("card 4111 1111 1111 1111 exp 12/29", "card_number"),
        ("5500-0000-0000-0004", "card_number"),
        ("pay to GB82 WEST 1234 5698 7654 32 today", "iban"),
        ("DE89370400440532013000", "iban"),
        ("IBAN DE89370400440532013000 OK", "iban"),
        ("contact alice.smith@example.org", "email"),
        (
            "embeds ff-write-token-for-tests-0123456789 here",
            "write_token",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(rule(text), Some(*want), "{text}");
    }
}

#[test]
fn passes_look_alikes_that_records_legitimately_carry() {
    let clean = [
        "leaf 6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d verified",
        "0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b",
        "bought FakeA1phaMintTestTestTestTestTestTestTespump on pumpswap",
        "So11111111111111111111111111111111111111112 and TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
        "tx 5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW landed",
        "run 123e4567-e89b-12d3-a456-426614174000 done",
        "observed at 1777896000000 ms",
        "price 4111.11, 1,234,567 shares",
        "https://dexscreener.com/solana/fakepair?chain=solana&ref=feed",
        "bearer bonds are not in scope",
        "token: FakeBravoMintTestTestTestTestTestTestTestTes looks risky",
        "Abandon the thesis: liquidity fell, volume dried up and the spread widened.",
        "next check 2026-05-04T12:00:00Z",
        "hold: wait for the weekly close above the range before adding",
        "seededSo11111111111111111111111111111111111111112 pool",
    ];
    for text in clean {
        assert_eq!(rule(text), None, "{text}");
    }
}

/// A Solana keypair as wallets export it: 32-byte seed, then the
/// Ed25519 public key of that seed.
fn keypair_bytes(seed: u8) -> Vec<u8> {
    let signing = ed25519_dalek::SigningKey::from_bytes(&[seed; 32]);
    let mut bytes = signing.to_bytes().to_vec();
    bytes.extend_from_slice(signing.verifying_key().as_bytes());
    bytes
}

#[test]
fn solana_keypairs_in_their_exported_forms_are_refused() {
    for seed in [1u8, 7, 200] {
        let keypair = keypair_bytes(seed);
        let base58 = bs58::encode(&keypair).into_string();
        for text in [
            base58.clone(),
            format!("private key: {base58}"),
            format!("exported from Phantom ({base58}), keep it"),
            hex::encode(&keypair),
        ] {
            assert_eq!(rule(&text), Some("private_key"), "{text}");
        }
    }
    let seed = bs58::encode([9u8; 32]).into_string();
    assert_eq!(rule(&format!("private key: {seed}")), Some("private_key"));
    assert_eq!(rule(&format!("seed = {seed}")), Some("private_key"));
}

/// The forms a careless writer pastes that the first guard missed: a
/// keypair in base64 (standard or URL-safe, padded or not), a keypair
/// split by white space, a seed labelled `pk:`, `keypair:` or
/// `secret:`, and the write token in base64, hex or another case.
#[test]
fn keypairs_seeds_and_the_token_in_other_encodings_are_refused() {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    for seed in [2u8, 77] {
        let keypair = keypair_bytes(seed);
        let base58 = bs58::encode(&keypair).into_string();
        let hex = hex::encode(&keypair);
        let (b1, b2) = base58.split_at(40);
        let (h1, h2) = hex.split_at(64);
        for text in [
            STANDARD.encode(&keypair),
            format!("backup: {} ok", URL_SAFE_NO_PAD.encode(&keypair)),
            format!("{b1} {b2}"),
            format!("key is {b1}\n{b2} keep it"),
            format!("{h1} {h2}"),
            format!("{} {} {}", &base58[..30], &base58[30..60], &base58[60..]),
        ] {
            assert_eq!(rule(&text), Some("private_key"), "{text}");
        }
    }
    let seed58 = bs58::encode([9u8; 32]).into_string();
    let seed_hex = hex::encode([9u8; 32]);
    for label in ["pk", "PK", "keypair", "secret", "Secret"] {
        for seed in [&seed58, &seed_hex] {
            let text = format!("{label}: {seed}");
            assert_eq!(rule(&text), Some("private_key"), "{text}");
        }
    }
    let token = "ff-write-token-for-tests-0123456789";
    for text in [
        token.to_uppercase(),
        format!("it was {}", "Ff-Write-Token-For-Tests-0123456789"),
        STANDARD.encode(token),
        format!("b64 {}", URL_SAFE_NO_PAD.encode(token)),
        hex::encode(token),
        hex::encode_upper(token),
    ] {
        assert_eq!(rule(&text), Some("write_token"), "{text}");
    }
    // Two words that happen to sit together stay words.
    assert_eq!(rule("Strategy momentum rebalanced into SOL and JUP"), None);
    assert_eq!(rule(&format!("pk: {}", "short")), None);
}

#[test]
fn base58_of_64_bytes_that_is_not_a_keypair_passes() {
    // A transaction signature is 64 bytes too, but its halves are not a
    // seed and its public key.
    let mut signature = keypair_bytes(3);
    signature[40] ^= 1;
    let text = bs58::encode(&signature).into_string();
    assert_eq!(rule(&format!("signature {text}")), None);
    assert_eq!(rule(&format!("private key: {text}")), None);
    // A public key (32 bytes) with no secret label passes too.
    let public = bs58::encode(&keypair_bytes(3)[32..]).into_string();
    assert_eq!(rule(&format!("wallet {public}")), None);
}

#[test]
fn card_numbers_with_dots_or_slashes_and_lowercase_ibans_are_refused() {
    for text in [
        "card 4111.1111.1111.1111",
        "card 4111/1111/1111/1111",
        "5500.0000.0000.0004 exp 12/29",
    ] {
        assert_eq!(rule(text), Some("card_number"), "{text}");
    }
    for text in ["iban gb82west12345698765432", "de89 3704 0044 0532 0130 00"] {
        assert_eq!(rule(text), Some("iban"), "{text}");
    }
    // Mixed separators are not how a card is written: version numbers,
    // dates and prices pass.
    for text in [
        "v4.111.1111/1111-1111",
        "price 4111.11",
        "on 2026/05/04 at 12.30",
    ] {
        assert_eq!(rule(text), None, "{text}");
    }
}

#[test]
fn invisible_characters_do_not_hide_a_secret() {
    let token = "ff-write-token-for-tests-0123456789";
    for invisible in ['\u{200B}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{00AD}'] {
        let (a, b) = token.split_at(10);
        let split = format!("look: {a}{invisible}{b}");
        assert_eq!(rule(&split), Some("write_token"), "{split:?}");
        let aws = format!("key AKIA{invisible}IOSFODNN7EXAMPLE");
        assert_eq!(rule(&aws), Some("aws_key"), "{aws:?}");
    }
}

#[test]
fn seed_words_with_a_bad_checksum_pass() {
    // Twelve BIP39 words, but the last word's checksum bits are wrong.
    let text = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon";
    assert_eq!(rule(text), None);
}

#[test]
fn a_guard_without_a_token_still_checks_formats() {
    let guard = Guard::new(None);
    assert_eq!(guard.scan("ff-write-token-for-tests-0123456789"), None);
    assert_eq!(
        guard.scan("AKIAIOSFODNN7EXAMPLE"),
        Some(SensitiveRule::AwsKey)
    );
}

#[test]
fn debug_never_shows_the_token() {
    assert!(!format!("{:?}", guard()).contains("ff-write-token"));
}

/// Round 4: the forms the guard still missed, one example each of the
/// finding and its neighbours: a keypair as a `;`-separated, a
/// percent-encoded or a hex-byte array; a seed labelled with its encoding
/// in parentheses, or in base64; the write token reversed, split by a
/// no-break space, or with a character percent-encoded.
#[test]
fn keypair_arrays_qualified_seeds_and_a_mangled_token_are_refused() {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    let keypair = keypair_bytes(5);
    let decimal: Vec<String> = keypair.iter().map(u8::to_string).collect();
    let hex_bytes: Vec<String> = keypair.iter().map(|b| format!("0x{b:02x}")).collect();
    let json = format!("[{}]", decimal.join(","));
    let percent: String = json
        .bytes()
        .map(|b| match b {
            b'[' => "%5B".to_owned(),
            b']' => "%5D".to_owned(),
            b',' => "%2C".to_owned(),
            other => (other as char).to_string(),
        })
        .collect();
    for text in [
        format!("[{}]", decimal.join(";")),
        format!("keypair {}", decimal.join("; ")),
        decimal.join(" "),
        percent,
        format!("[{}]", hex_bytes.join(", ")),
        hex_bytes.join(","),
        format!(
            "{{{}}}",
            hex_bytes.join(", ").to_uppercase().replace("0X", "0x")
        ),
    ] {
        assert_eq!(rule(&text), Some("private_key"), "{text}");
    }
    let seed = [9u8; 32];
    for text in [
        format!("private key (base58): {}", bs58::encode(seed).into_string()),
        format!("secret key [hex]: {}", hex::encode(seed)),
        format!("seed: {}", STANDARD.encode(seed)),
        format!("private key (base64) = {}", URL_SAFE_NO_PAD.encode(seed)),
    ] {
        assert_eq!(rule(&text), Some("private_key"), "{text}");
    }
    let token = "ff-write-token-for-tests-0123456789";
    let reversed: String = token.chars().rev().collect();
    for text in [
        reversed.clone(),
        reversed.to_uppercase(),
        "ff-write-token\u{a0}-for-tests-0123456789".to_owned(),
        "ff-write-token-for- tests-0123 456789".to_owned(),
        "ff-write-token-for-tests-01234%356789".to_owned(),
        "ff%2Dwrite-token-for-tests-0123456789".to_owned(),
    ] {
        assert_eq!(rule(&text), Some("write_token"), "{text}");
    }
    // Prose with numbers and percentages stays prose.
    for text in [
        "returns 1, 2, 3 and 4 % over 5; 6; 7 weeks",
        "price 12.5% up; 3.2% down; 100% in cash",
        "seed: 42 trees planted",
        "private key (rotated): not stored here",
    ] {
        assert_eq!(rule(text), None, "{text}");
    }
}
