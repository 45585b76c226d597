//! A read is one call: each read use case takes what the client already
//! holds ([`ClientTags`], its `If-None-Match`) and its query, and answers
//! [`Read::NotModified`] from the head alone or [`Read::Fresh`] with the
//! bytes, kept per head inside the use case and compressed at most once per
//! coding ([`Encoded`]). The edge only parses the request and writes the
//! answer.
//!
//! Entity tags follow RFC 9110 §8.8.3: only the quoted form (`"x"`, or
//! weak `W/"x"`) names a tag, and `*` names every one. A compressed
//! representation's tag carries a suffix (`-br`, `-gz`) that matching
//! ignores, so every representation of a body matches the others.

use crate::merkle::Head;
use crate::service::encoded::Encoded;
use std::sync::Arc;

/// The entity tags a client says it holds, as the read use cases compare
/// them: their opaque parts without a coding's suffix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientTags {
    /// `*`: the client holds whatever there is.
    any: bool,
    /// The opaque part of each quoted tag named.
    tags: Vec<String>,
}

impl ClientTags {
    /// The tags named by `If-None-Match` header values (each a list).
    pub(crate) fn parse<'a>(values: impl IntoIterator<Item = &'a str>) -> ClientTags {
        let mut client = ClientTags::default();
        for named in values.into_iter().flat_map(|v| v.split(',')).map(str::trim) {
            if named == "*" {
                client.any = true;
            } else if let Some(opaque) = opaque(named) {
                client.tags.push(without_coding(opaque).to_owned());
            }
        }
        client
    }

    /// Whether the client holds the body tagged `tag` (an opaque part).
    pub(crate) fn holds(&self, tag: &str) -> bool {
        self.any || self.tags.iter().any(|held| held == tag)
    }

    /// Whether the client holds what the head `head` answers (its tag is the
    /// head's root hash).
    pub(crate) fn holds_head(&self, head: &Head) -> bool {
        self.any || self.holds(&head.root_hash.to_hex())
    }
}

/// The opaque part of an entity tag (`"x"` or `W/"x"`), when it is one.
fn opaque(tag: &str) -> Option<&str> {
    let quoted = tag.strip_prefix("W/").unwrap_or(tag);
    quoted
        .strip_prefix('"')?
        .strip_suffix('"')
        .filter(|inner| !inner.contains('"'))
}

/// An opaque tag without the suffix a compressed representation's tag
/// carries (`-br`, `-gz`): every representation matches it.
fn without_coding(opaque: &str) -> &str {
    opaque
        .strip_suffix("-br")
        .or_else(|| opaque.strip_suffix("-gz"))
        .unwrap_or(opaque)
}

/// What a read answers.
#[derive(Debug, Clone)]
pub enum Read {
    /// The client holds the answer at this head already (`304`): nothing
    /// but the head was read.
    NotModified(Head),
    /// The answer at its head.
    Fresh(Answer),
}

/// A read's body at the head it was read at (its tag).
#[derive(Debug, Clone)]
pub struct Answer {
    /// The head the body is a function of.
    pub head: Head,
    /// The body, with its compressed forms made at most once.
    pub body: Arc<Encoded>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round 4: an unquoted tag matched. Only the quoted form names a tag.
    #[test]
    fn only_quoted_entity_tags_are_held() {
        let head = Head::empty();
        let hex = head.root_hash.to_hex();
        for (value, held) in [
            (format!("\"{hex}\""), true),
            (format!("W/\"{hex}\""), true),
            (format!("\"{hex}-br\""), true),
            (format!("\"other\", W/\"{hex}-gz\""), true),
            ("*".to_owned(), true),
            (hex.clone(), false),
            (format!("{hex}-br"), false),
            (format!("\"{hex}"), false),
            (format!("W/{hex}"), false),
            (format!("\"\"{hex}\"\""), false),
        ] {
            assert_eq!(
                ClientTags::parse([value.as_str()]).holds_head(&head),
                held,
                "{value}"
            );
        }
        assert!(!ClientTags::default().holds_head(&head));
    }
}
