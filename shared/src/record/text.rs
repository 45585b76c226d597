//! What text fields may hold, as predicates the parser applies and from
//! which the JSON Schemas' patterns are generated (so the two cannot say
//! different things).

/// Whether a script or an emoji sequence needs an invisible character: such
/// characters are allowed in a record's text, and removed from provider
/// text all the same.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Needed {
    /// Nothing legitimate needs it.
    No,
    /// Joiners (Persian and Indic text, emoji sequences) and variation
    /// selectors (emoji presentation, ideographic variants).
    ByScripts,
}

/// The one table of characters that do not show as themselves, besides the
/// controls (C0, C1, DEL) and the noncharacters: default-ignorable and
/// format characters (zero-width spaces, soft hyphen, word joiner and the
/// invisible operators, fillers, the byte-order mark, tags), the
/// bidirectional embedding, override and isolate controls and the
/// directional marks, which can make the page show text in another order
/// than the ledger holds it, the line and paragraph separators, which
/// break lines where a reader expects none, and the interlinear annotation
/// characters. Records refuse each (rule `hidden_character`) but those
/// [`Needed::ByScripts`]; the guard and the scanner's provider text remove
/// every one.
const HIDDEN: [(char, char, Needed); 21] = [
    ('\u{00AD}', '\u{00AD}', Needed::No),
    ('\u{034F}', '\u{034F}', Needed::No),
    ('\u{061C}', '\u{061C}', Needed::No),
    ('\u{115F}', '\u{1160}', Needed::No),
    ('\u{17B4}', '\u{17B5}', Needed::No),
    ('\u{180B}', '\u{180F}', Needed::No),
    ('\u{200B}', '\u{200B}', Needed::No),
    ('\u{200C}', '\u{200D}', Needed::ByScripts),
    ('\u{200E}', '\u{200F}', Needed::No),
    ('\u{2028}', '\u{202E}', Needed::No),
    ('\u{2060}', '\u{206F}', Needed::No),
    ('\u{3164}', '\u{3164}', Needed::No),
    ('\u{FE00}', '\u{FE0F}', Needed::ByScripts),
    ('\u{FEFF}', '\u{FEFF}', Needed::No),
    ('\u{FFA0}', '\u{FFA0}', Needed::No),
    ('\u{FFF0}', '\u{FFFB}', Needed::No),
    ('\u{1BCA0}', '\u{1BCA3}', Needed::No),
    ('\u{1D173}', '\u{1D17A}', Needed::No),
    ('\u{E0000}', '\u{E00FF}', Needed::No),
    ('\u{E0100}', '\u{E01EF}', Needed::ByScripts),
    ('\u{E01F0}', '\u{E0FFF}', Needed::No),
];

/// What [`HIDDEN`] says of `c`, when it lists it.
fn listed(c: char) -> Option<Needed> {
    HIDDEN
        .iter()
        .find(|(first, last, _)| (*first..=*last).contains(&c))
        .map(|(_, _, needed)| *needed)
}

/// Whether `c` is a noncharacter (U+FDD0–U+FDEF, and U+nFFFE, U+nFFFF of
/// every plane).
fn is_noncharacter(c: char) -> bool {
    matches!(c, '\u{FDD0}'..='\u{FDEF}') || (c as u32) & 0xFFFE == 0xFFFE
}

/// Whether `c` renders as nothing: a character of this module's one table
/// of them (`HIDDEN`: default-ignorable, format, bidirectional and
/// separator characters) or a noncharacter. The guard reads text without
/// these, so a secret split by them is still seen.
pub(crate) fn is_invisible(c: char) -> bool {
    is_noncharacter(c) || listed(c).is_some()
}

/// Whether `c` does not show as itself: a control or an invisible
/// character. Provider text is stripped of these.
pub(crate) fn is_hidden(c: char) -> bool {
    c.is_control() || is_invisible(c)
}

/// Whether a record's text may not carry `c`: a hidden character that no
/// script needs.
fn is_refused(c: char) -> bool {
    c.is_control() || is_noncharacter(c) || listed(c) == Some(Needed::No)
}

/// Characters of the Basic Multilingual Plane no text field may carry (the
/// refused characters there; the JSON Schemas' patterns are generated from
/// this).
pub(crate) fn is_forbidden_in_text(c: char) -> bool {
    (c as u32) <= 0xFFFF && is_refused(c)
}

/// Characters beyond the Basic Multilingual Plane no text field may carry:
/// the refused characters there (tags, format characters, each plane's
/// noncharacters). JSON Schema's regular expressions cannot name
/// characters beyond the BMP alike in every engine, so the schemas leave
/// these to the parser (rule `hidden_character`, listed as not in the
/// schema).
pub(crate) fn is_forbidden_beyond_bmp(c: char) -> bool {
    (c as u32) > 0xFFFF && is_refused(c)
}

/// The controls prose (summaries, theses) may still carry: line breaks and
/// tabs.
pub(crate) fn is_prose_break(c: char) -> bool {
    matches!(c, '\n' | '\t' | '\r')
}

/// Characters that do not make a text non-blank (Unicode `White_Space`, as
/// `str::trim` reads it).
pub(crate) fn is_blank(c: char) -> bool {
    c.is_whitespace()
}

/// A URL a new record may cite: `http://` or `https://` (the scheme in any
/// case) and printable ASCII (the record keeps the text exactly as sent, and
/// a URL parser would silently drop or convert anything else). The parser
/// also requires it to parse as a URL with a host (WHATWG URL Standard).
pub(crate) const URL_PATTERN: &str = "^[Hh][Tt][Tt][Pp][Ss]?://[!-~]+$";

/// A regular-expression character class, in the syntax ECMA-262, Python and
/// Rust's `regex` share (`\uXXXX` escapes), of every character for which
/// `test` holds. Every such set here lies in the Basic Multilingual Plane.
pub(crate) fn char_class(test: impl Fn(char) -> bool) -> String {
    let mut class = String::from("[");
    let mut run: Option<(u32, u32)> = None;
    let close = |class: &mut String, (first, last): (u32, u32)| {
        debug_assert!(last <= 0xFFFF, "a class beyond the BMP needs other escapes");
        if first == last {
            class.push_str(&format!("\\u{first:04x}"));
        } else {
            class.push_str(&format!("\\u{first:04x}-\\u{last:04x}"));
        }
    };
    for code in 0..=0xFFFFu32 {
        let holds = char::from_u32(code).is_some_and(&test);
        run = match (run, holds) {
            (Some((first, last)), true) if last + 1 == code => Some((first, code)),
            (Some(done), true) => {
                close(&mut class, done);
                Some((code, code))
            }
            (None, true) => Some((code, code)),
            (Some(done), false) => {
                close(&mut class, done);
                None
            }
            (None, false) => None,
        };
    }
    if let Some(done) = run {
        close(&mut class, done);
    }
    class.push(']');
    class
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    #[test]
    fn a_generated_class_matches_exactly_the_characters_of_its_predicate() {
        for test in [is_forbidden_in_text as fn(char) -> bool, is_blank] {
            let class = Regex::new(&format!("^{}$", char_class(test))).unwrap();
            for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
                assert_eq!(class.is_match(&c.to_string()), test(c), "{:04x}", c as u32);
            }
        }
        assert!(
            (0x10000..=0x10FFFFu32)
                .filter_map(char::from_u32)
                .all(|c| !is_forbidden_in_text(c) && !is_blank(c)),
            "both sets lie in the BMP"
        );
        assert!(
            (0..=0xFFFFu32)
                .filter_map(char::from_u32)
                .all(|c| !is_forbidden_beyond_bmp(c)),
            "the other set lies beyond it"
        );
        for c in ['\u{E0041}', '\u{E007F}', '\u{1FFFE}', '\u{10FFFF}'] {
            assert!(is_forbidden_beyond_bmp(c), "{:x}", c as u32);
        }
        for c in ['\u{1F600}', '\u{E0100}', '\u{1FFFD}'] {
            assert!(!is_forbidden_beyond_bmp(c), "{:x}", c as u32);
        }
        assert_eq!(char_class(|c| c == 'a' || c == 'b'), "[\\u0061-\\u0062]");
    }
}
