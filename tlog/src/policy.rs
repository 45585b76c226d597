//! Witness policies (c2sp.org/tlog-policy): which logs are trusted, which
//! witnesses, and the quorum of cosignatures a checkpoint needs.
//!
//! ```text
//! log <vkey> [<url>]
//! witness <name> <vkey> [<url>]
//! group <name> all|any|<k> <member>...
//! quorum <name>|none
//! ```
//!
//! Items are separated by spaces and tabs; `#` starts a comment line; a
//! group or the quorum names only witnesses and groups defined on earlier
//! lines, each member at most once; exactly one quorum line. Limits: 64
//! logs, 64 witnesses, 64 groups (the specification asks for at least 32).

use super::cosignature::WitnessKey;
use super::note::VerifierKey;
use std::collections::{BTreeMap, BTreeSet};

/// Most logs, witnesses and groups a policy may define (each).
const MAX_ITEMS: usize = 64;

/// Why a policy cannot be read: the line (from 1) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {}", place(*.line), .reason)]
pub struct PolicyError {
    /// The line at fault, counted from 1 (0: the policy as a whole).
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// Where in the policy an error is, in words.
fn place(line: usize) -> String {
    if line == 0 {
        "as a whole".to_owned()
    } else {
        format!("line {line}")
    }
}

/// A witness the policy lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness {
    /// The policy's name for it.
    pub name: String,
    /// Its cosigning key.
    pub key: WitnessKey,
    /// Its submission prefix, when given.
    pub url: Option<String>,
}

/// A name a group or the quorum refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Member {
    /// A witness, by its index in the policy.
    Witness(usize),
    /// A group, by its index.
    Group(usize),
}

/// A group: at least `threshold` of its members witnessed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Group {
    name: String,
    threshold: usize,
    members: Vec<Member>,
}

/// A parsed policy, with the text it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    text: String,
    logs: Vec<VerifierKey>,
    witnesses: Vec<Witness>,
    groups: Vec<Group>,
    quorum: Option<Member>,
}

/// What a set of cosigning witnesses makes of a policy's quorum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumCheck {
    /// Whether the quorum is met.
    pub met: bool,
    /// The groups (or the lone witness) whose threshold is not met, by
    /// name, innermost first; empty when the quorum is met.
    pub short: Vec<String>,
}

impl Policy {
    /// Reads a policy in the tlog-policy text form.
    pub fn parse(text: &str) -> Result<Policy, PolicyError> {
        let mut policy = Policy {
            text: text.to_owned(),
            logs: Vec::new(),
            witnesses: Vec::new(),
            groups: Vec::new(),
            quorum: None,
        };
        let mut names: BTreeMap<String, Member> = BTreeMap::new();
        let mut quorum_seen = false;
        for (index, raw) in text.split('\n').enumerate() {
            let line = index + 1;
            let fail = |reason: String| PolicyError { line, reason };
            if raw
                .bytes()
                .any(|b| b < 0x20 && b != b'\t' && b != b'\r' || b == 0x7f)
            {
                return Err(fail("a control character".into()));
            }
            let words: Vec<&str> = raw
                .split([' ', '\t', '\r'])
                .filter(|w| !w.is_empty())
                .collect();
            let Some((&keyword, args)) = words.split_first() else {
                continue;
            };
            if keyword.starts_with('#') {
                continue;
            }
            match keyword {
                "log" => {
                    let (vkey, url) = match args {
                        [vkey] => (vkey, None),
                        [vkey, url] => (vkey, Some(url)),
                        _ => return Err(fail("expected: log <vkey> [<url>]".into())),
                    };
                    let key = VerifierKey::parse(vkey)
                        .map_err(|e| fail(format!("the log's key: {e}")))?;
                    if let Some(url) = url {
                        check_url(url).map_err(fail)?;
                    }
                    if policy.logs.contains(&key) {
                        return Err(fail("a log listed twice".into()));
                    }
                    if policy.logs.len() == MAX_ITEMS {
                        return Err(fail(format!("more than {MAX_ITEMS} logs")));
                    }
                    policy.logs.push(key);
                }
                "witness" => {
                    let (name, vkey, url) = match args {
                        [name, vkey] => (name, vkey, None),
                        [name, vkey, url] => (name, vkey, Some(url)),
                        _ => {
                            return Err(fail("expected: witness <name> <vkey> [<url>]".into()));
                        }
                    };
                    check_new_name(&names, name).map_err(fail)?;
                    let key = WitnessKey::parse(vkey)
                        .map_err(|e| fail(format!("witness {name}'s key: {e}")))?;
                    if let Some(url) = url {
                        check_url(url).map_err(fail)?;
                    }
                    if let Some(earlier) = policy
                        .witnesses
                        .iter()
                        .find(|w| w.key.same_public_key(&key))
                    {
                        return Err(fail(format!(
                            "witness {name} has the public key of witness {} (a cosignature does not sign the key's name, so one witness would count twice)",
                            earlier.name
                        )));
                    }
                    if policy.witnesses.len() == MAX_ITEMS {
                        return Err(fail(format!("more than {MAX_ITEMS} witnesses")));
                    }
                    names.insert((*name).to_owned(), Member::Witness(policy.witnesses.len()));
                    policy.witnesses.push(Witness {
                        name: (*name).to_owned(),
                        key,
                        url: url.map(|u| u.trim_end_matches('/').to_owned()),
                    });
                }
                "group" => {
                    let [name, threshold, members @ ..] = args else {
                        return Err(fail(
                            "expected: group <name> all|any|<k> <member>...".into(),
                        ));
                    };
                    check_new_name(&names, name).map_err(fail)?;
                    if members.is_empty() {
                        return Err(fail(format!("group {name} has no members")));
                    }
                    let mut seen = BTreeSet::new();
                    let mut resolved = Vec::new();
                    for member in members {
                        if !seen.insert(*member) {
                            return Err(fail(format!("{member} is listed twice in group {name}")));
                        }
                        resolved.push(names.get(*member).cloned().ok_or_else(|| {
                            fail(format!(
                                "{member} is not a witness or group defined on an earlier line"
                            ))
                        })?);
                    }
                    let threshold = match *threshold {
                        "all" => resolved.len(),
                        "any" => 1,
                        k if k == "0" || k.starts_with('0') => {
                            return Err(fail(format!("group {name}'s threshold must be from 1 to {}", resolved.len())));
                        }
                        k => k
                            .parse::<usize>()
                            .ok()
                            .filter(|k| (1..=resolved.len()).contains(k))
                            .ok_or_else(|| {
                                fail(format!(
                                    "group {name}'s threshold must be all, any or a number from 1 to {}",
                                    resolved.len()
                                ))
                            })?,
                    };
                    if policy.groups.len() == MAX_ITEMS {
                        return Err(fail(format!("more than {MAX_ITEMS} groups")));
                    }
                    names.insert((*name).to_owned(), Member::Group(policy.groups.len()));
                    policy.groups.push(Group {
                        name: (*name).to_owned(),
                        threshold,
                        members: resolved,
                    });
                }
                "quorum" => {
                    let [name] = args else {
                        return Err(fail("expected: quorum <name>|none".into()));
                    };
                    if quorum_seen {
                        return Err(fail("a second quorum line".into()));
                    }
                    quorum_seen = true;
                    policy.quorum = match *name {
                        "none" => None,
                        name => Some(names.get(name).cloned().ok_or_else(|| {
                            fail(format!(
                                "{name} is not a witness or group defined on an earlier line"
                            ))
                        })?),
                    };
                }
                other => {
                    return Err(fail(format!(
                        "unknown keyword {other:?} (expected log, witness, group or quorum)"
                    )));
                }
            }
        }
        if !quorum_seen {
            return Err(PolicyError {
                line: 0,
                reason: "the policy has no quorum line".into(),
            });
        }
        Ok(policy)
    }

    /// The text the policy was read from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The logs it trusts (may be empty: the log is known from context).
    pub fn logs(&self) -> &[VerifierKey] {
        &self.logs
    }

    /// The witnesses, in the order listed.
    pub fn witnesses(&self) -> &[Witness] {
        &self.witnesses
    }

    /// Whether the quorum is `none` (no cosignature needed).
    pub fn needs_no_cosignature(&self) -> bool {
        self.quorum.is_none()
    }

    /// The quorum time of a checkpoint (c2sp-style witnessed time): the
    /// earliest instant `t` at which the cosignatures dated at or before
    /// `t` already satisfy the quorum. `cosigned` holds each verified
    /// cosignature as (witness index in [`Policy::witnesses`], its time in
    /// seconds since the epoch); a witness named twice counts at its
    /// earliest time. `None` when the quorum is `none` (nothing is
    /// witnessed, so no time is claimed) or the cosignatures never meet it.
    pub fn quorum_time(&self, cosigned: &[(usize, u64)]) -> Option<u64> {
        self.quorum.as_ref()?;
        let mut by_time = cosigned.to_vec();
        by_time.sort_by_key(|&(index, time)| (time, index));
        let mut seen = BTreeSet::new();
        for (index, time) in by_time {
            if seen.insert(index) && self.check(&seen).met {
                return Some(time);
            }
        }
        None
    }

    /// What the quorum makes of `cosigned`, the indexes (in
    /// [`Policy::witnesses`]) of the witnesses whose cosignature verified.
    pub fn check(&self, cosigned: &BTreeSet<usize>) -> QuorumCheck {
        let Some(quorum) = &self.quorum else {
            return QuorumCheck {
                met: true,
                short: Vec::new(),
            };
        };
        let mut short = Vec::new();
        let met = self.witnessed(quorum, cosigned, &mut short);
        if met {
            short.clear();
        } else if let Member::Witness(index) = quorum {
            short.push(self.witnesses[*index].name.clone());
        }
        QuorumCheck { met, short }
    }

    /// Whether `member` witnessed, given `cosigned`; each group short of
    /// its threshold is added to `short`, inner groups first.
    fn witnessed(
        &self,
        member: &Member,
        cosigned: &BTreeSet<usize>,
        short: &mut Vec<String>,
    ) -> bool {
        match member {
            Member::Witness(index) => cosigned.contains(index),
            Member::Group(index) => {
                let group = &self.groups[*index];
                let count = group
                    .members
                    .iter()
                    .filter(|m| self.witnessed(m, cosigned, short))
                    .count();
                let yes = count >= group.threshold;
                if !yes {
                    short.push(format!(
                        "{} ({count} of {} needed)",
                        group.name, group.threshold
                    ));
                }
                yes
            }
        }
    }
}

fn check_new_name(names: &BTreeMap<String, Member>, name: &str) -> Result<(), String> {
    if name == "none" {
        return Err("the name none is reserved".into());
    }
    if names.contains_key(name) {
        return Err(format!("the name {name} is already defined"));
    }
    Ok(())
}

fn check_url(url: &str) -> Result<(), String> {
    if url.starts_with("https://") || url.starts_with("http://") {
        Ok(())
    } else {
        Err(format!("{url:?} is not an http(s) URL"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosignature::CosignerKey;

    fn key(seed: u8) -> String {
        CosignerKey::from_seed(&format!("w{seed}.example"), [seed; 32])
            .unwrap()
            .witness_key()
            .to_text()
    }

    #[test]
    fn the_quorum_time_is_when_the_quorum_was_first_met() {
        let text = format!(
            "witness A {}\nwitness B {}\nwitness C {}\ngroup G 2 A B C\nquorum G\n",
            key(1),
            key(2),
            key(3)
        );
        let policy = Policy::parse(&text).unwrap();
        // B at 300, A at 100, C at 200: two of three by 200.
        assert_eq!(
            policy.quorum_time(&[(1, 300), (0, 100), (2, 200)]),
            Some(200)
        );
        // One witness twice is one witness: never two.
        assert_eq!(policy.quorum_time(&[(0, 100), (0, 50)]), None);
        assert_eq!(policy.quorum_time(&[(0, 100), (0, 50), (2, 70)]), Some(70));
        assert_eq!(policy.quorum_time(&[]), None);
        let all = format!(
            "witness A {}\nwitness B {}\ngroup G all A B\nquorum G\n",
            key(1),
            key(2)
        );
        let all = Policy::parse(&all).unwrap();
        assert_eq!(all.quorum_time(&[(0, 9), (1, u64::MAX)]), Some(u64::MAX));
        let none = Policy::parse(&format!("witness A {}\nquorum none\n", key(1))).unwrap();
        assert_eq!(none.quorum_time(&[(0, 9)]), None, "no quorum, no time");
    }

    #[test]
    fn a_two_of_three_policy_needs_two() {
        let text = format!(
            "# three\nwitness A {} http://127.0.0.1:1\nwitness B {}\n\twitness C {}  \ngroup G 2 A B C\nquorum G\n",
            key(1),
            key(2),
            key(3)
        );
        let policy = Policy::parse(&text).unwrap();
        assert_eq!(policy.witnesses().len(), 3);
        assert_eq!(
            policy.witnesses()[0].url.as_deref(),
            Some("http://127.0.0.1:1")
        );
        assert!(policy.check(&BTreeSet::from([0, 2])).met);
        let short = policy.check(&BTreeSet::from([1]));
        assert!(!short.met);
        assert_eq!(short.short, vec!["G (1 of 2 needed)".to_owned()]);
    }

    #[test]
    fn nested_groups_and_none() {
        let text = format!(
            "witness A {}\nwitness B {}\nwitness C {}\ngroup X any A B\ngroup Y all X C\nquorum Y\n",
            key(1),
            key(2),
            key(3)
        );
        let policy = Policy::parse(&text).unwrap();
        assert!(policy.check(&BTreeSet::from([1, 2])).met);
        let check = policy.check(&BTreeSet::from([0]));
        assert_eq!(check.short, vec!["Y (1 of 2 needed)".to_owned()]);
        let neither = policy.check(&BTreeSet::from([2]));
        assert_eq!(
            neither.short,
            vec![
                "X (0 of 1 needed)".to_owned(),
                "Y (1 of 2 needed)".to_owned()
            ]
        );
        let none = Policy::parse("quorum none\n").unwrap();
        assert!(none.needs_no_cosignature() && none.check(&BTreeSet::new()).met);
    }

    #[test]
    fn a_malformed_policy_names_its_line() {
        let cases = [
            ("witness A notakey\nquorum A\n", 1),
            (
                &*format!("witness A {}\ngroup G 2 A\nquorum G\n", key(1)),
                2,
            ),
            (&*format!("witness A {}\nquorum B\n", key(1)), 2),
            (
                &*format!("group G any A\nwitness A {}\nquorum A\n", key(1)),
                1,
            ),
            (
                &*format!("witness A {}\nwitness A {}\nquorum A\n", key(1), key(2)),
                2,
            ),
            (&*format!("witness A {}\nquorum A\nquorum A\n", key(1)), 3),
            (
                &*format!("witness A {}\ngroup G 01 A\nquorum G\n", key(1)),
                2,
            ),
            (
                &*format!("witness A {}\ngroup G any A A\nquorum G\n", key(1)),
                2,
            ),
            ("frobnicate\nquorum none\n", 1),
            (&*format!("witness A {} ftp://x\nquorum A\n", key(1)), 1),
            ("# nothing\n", 0),
        ];
        for (text, line) in cases {
            let error = Policy::parse(text).unwrap_err();
            assert_eq!(error.line, line, "{text:?}: {error}");
        }
    }

    /// Round 4: one public key under two names counted as two witnesses
    /// (a cosignature signs the checkpoint, not the key's name, so one line
    /// could be relabelled into the second).
    #[test]
    fn one_public_key_under_two_names_is_refused() {
        let one = CosignerKey::from_seed("w1.example", [1; 32]).unwrap();
        let relabelled = CosignerKey::from_seed("w1-again.example", [1; 32])
            .unwrap()
            .witness_key()
            .to_text();
        let text = format!(
            "witness A {}\nwitness B {relabelled}\ngroup G 2 A B\nquorum G\n",
            one.witness_key().to_text()
        );
        let error = Policy::parse(&text).unwrap_err();
        assert_eq!(error.line, 2, "{error}");
        assert!(error.reason.contains("public key of witness A"), "{error}");
    }

    #[test]
    fn sixty_four_witnesses_are_enough() {
        let mut text = String::new();
        for i in 0..64u8 {
            text.push_str(&format!("witness W{i} {}\n", key(i)));
        }
        text.push_str("group all-of-them 33 ");
        text.push_str(
            &(0..64)
                .map(|i| format!("W{i}"))
                .collect::<Vec<_>>()
                .join(" "),
        );
        text.push_str("\nquorum all-of-them\n");
        let policy = Policy::parse(&text).unwrap();
        assert!(!policy.check(&(0..32).collect()).met);
        assert!(policy.check(&(0..33).collect()).met);
    }
}
