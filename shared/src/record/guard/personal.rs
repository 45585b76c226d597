//! Private identifiers: email addresses, card numbers (Luhn-valid) and
//! IBANs (mod-97-valid, of their country's length).

use super::regex;
use regex::Regex;
use std::sync::LazyLock;

static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
});

pub(super) fn has_email(text: &str) -> bool {
    EMAIL.is_match(text)
}

static CARD_CANDIDATE: LazyLock<Regex> = LazyLock::new(|| regex(r"\b\d(?:[ ./-]?\d){11,18}\b"));

/// 13–19 digits, written together or with one separator throughout (space,
/// dash, dot or slash, as card numbers are grouped), starting like a card
/// network's numbers (2–6) and passing the Luhn check. Epoch timestamps
/// start with 1; dates, versions and prices mix separators or are short.
pub(super) fn has_card_number(text: &str) -> bool {
    CARD_CANDIDATE.find_iter(text).any(|m| {
        let mut separators = m.as_str().chars().filter(|c| !c.is_ascii_digit());
        let one_separator = match separators.next() {
            None => true,
            Some(first) => separators.all(|c| c == first),
        };
        let digits: Vec<u32> = m.as_str().chars().filter_map(|c| c.to_digit(10)).collect();
        one_separator
            && (13..=19).contains(&digits.len())
            && digits.first().is_some_and(|d| (2..=6).contains(d))
            && luhn_valid(&digits)
    })
}

fn luhn_valid(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                if d * 2 > 9 { d * 2 - 9 } else { d * 2 }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Upper or lower case: banks print IBANs in capitals, people type them
/// either way.
static IBAN_CANDIDATE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b"));

/// IBAN lengths by country (ISO 13616 registry).
const IBAN_LENGTHS: &[(&str, usize)] = &[
    ("AD", 24),
    ("AE", 23),
    ("AL", 28),
    ("AT", 20),
    ("AZ", 28),
    ("BA", 20),
    ("BE", 16),
    ("BG", 22),
    ("BH", 22),
    ("BI", 27),
    ("BR", 29),
    ("BY", 28),
    ("CH", 21),
    ("CR", 22),
    ("CY", 28),
    ("CZ", 24),
    ("DE", 22),
    ("DJ", 27),
    ("DK", 18),
    ("DO", 28),
    ("EE", 20),
    ("EG", 29),
    ("ES", 24),
    ("FI", 18),
    ("FK", 18),
    ("FO", 18),
    ("FR", 27),
    ("GB", 22),
    ("GE", 22),
    ("GI", 23),
    ("GL", 18),
    ("GR", 27),
    ("GT", 28),
    ("HR", 21),
    ("HU", 28),
    ("IE", 22),
    ("IL", 23),
    ("IQ", 23),
    ("IS", 26),
    ("IT", 27),
    ("JO", 30),
    ("KW", 30),
    ("KZ", 20),
    ("LB", 28),
    ("LC", 32),
    ("LI", 21),
    ("LT", 20),
    ("LU", 20),
    ("LV", 21),
    ("LY", 25),
    ("MC", 27),
    ("MD", 24),
    ("ME", 22),
    ("MK", 19),
    ("MN", 20),
    ("MR", 27),
    ("MT", 31),
    ("MU", 30),
    ("NI", 28),
    ("NL", 18),
    ("NO", 15),
    ("OM", 23),
    ("PK", 24),
    ("PL", 28),
    ("PS", 29),
    ("PT", 25),
    ("QA", 29),
    ("RO", 24),
    ("RS", 22),
    ("RU", 33),
    ("SA", 24),
    ("SC", 31),
    ("SD", 18),
    ("SE", 24),
    ("SI", 19),
    ("SK", 24),
    ("SM", 27),
    ("SO", 23),
    ("ST", 25),
    ("SV", 28),
    ("TL", 23),
    ("TN", 24),
    ("TR", 26),
    ("UA", 29),
    ("VA", 22),
    ("VG", 24),
    ("XK", 20),
    ("YE", 30),
];

pub(super) fn has_iban(text: &str) -> bool {
    IBAN_CANDIDATE.find_iter(text).any(|m| {
        let compact: String = m
            .as_str()
            .chars()
            .filter(|c| *c != ' ')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let expected = IBAN_LENGTHS
            .iter()
            .find(|(country, _)| compact.starts_with(country))
            .map(|(_, len)| *len);
        // The pattern is greedy and may run into a following capitalised word:
        // check the country's length from the start.
        expected.is_some_and(|len| compact.len() >= len && iban_mod97_valid(&compact[..len]))
    })
}

fn iban_mod97_valid(iban: &str) -> bool {
    let rearranged = iban[4..].chars().chain(iban[..4].chars());
    let mut remainder: u32 = 0;
    for c in rearranged {
        let value = match c.to_digit(36) {
            Some(v) => v,
            None => return false,
        };
        remainder = if value < 10 {
            (remainder * 10 + value) % 97
        } else {
            (remainder * 100 + value) % 97
        };
    }
    remainder == 1
}
