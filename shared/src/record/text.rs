//! What text fields may hold, as predicates the parser applies and from
//! which the JSON Schemas' patterns are generated (so the two cannot say
//! different things).

/// Characters of the Basic Multilingual Plane no text field may carry:
/// controls (C0, C1, DEL); the bidirectional embedding, override and
/// isolate controls and the directional marks (U+200E, U+200F, U+061C),
/// which can make the page show text in another order than the ledger
/// holds it; the line and paragraph separators (U+2028, U+2029), which
/// break lines where a reader expects none; the interlinear annotation
/// characters (U+FFF9–U+FFFB); and the noncharacters (U+FDD0–U+FDEF,
/// U+FFFE, U+FFFF).
pub(crate) fn is_forbidden_in_text(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{061C}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{FDD0}'..='\u{FDEF}'
                | '\u{FFFE}'
                | '\u{FFFF}'
        )
}

/// Characters beyond the Basic Multilingual Plane no text field may carry:
/// the tag characters (U+E0000–U+E007F, invisible) and each plane's
/// noncharacters (U+nFFFE, U+nFFFF). JSON Schema's regular expressions
/// cannot name characters beyond the BMP alike in every engine, so the
/// schemas leave these to the parser (rule `hidden_character`, listed as
/// not in the schema).
pub(crate) fn is_forbidden_beyond_bmp(c: char) -> bool {
    let code = c as u32;
    matches!(c, '\u{E0000}'..='\u{E007F}') || (code > 0xFFFF && code & 0xFFFE == 0xFFFE)
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
