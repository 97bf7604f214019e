// SPDX-License-Identifier: GPL-2.0

//! Allow and skip rules: what differences are known, and which requests not to send.

use super::diff::Difference;
use super::format::Outcome;
use crate::vema_gen::{MethodClass, Request};

/// One condition of an allow rule.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cond {
    Attr(u16),
    Method(u8),
    MethodClass(MethodClass),
    Vport(u8),
    Size(String),
    Content(String),
    Base(u8),
    ClassVersion(u8),
    Short(bool),
    Foreign(bool),
    Differs(String),
    Kind(usize, String),
    Status(usize, u16),
}

/// An allowed difference: every condition must hold. The text after `#` says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    conds: Vec<Cond>,
    /// The rule's line, as written.
    pub text: String,
}

fn num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Parses an allow file: one rule a line, `key=value` terms, `#` starts a comment.
///
/// Keys: `attr`, `method` (a number, `get`, `set` or `other`), `vport`, `size`
/// (`trimmed`, `random`, `full`, `ib`), `content`, `base`, `class` (class version), `short`
/// (`yes` when the request ends before what its attribute reads), `foreign` (`yes` for a
/// class version or OUI the agents do not take: the MAD layer answers those), `differs` (`answered`,
/// `length`, `status`, `data`, `missing`), `a`/`b` (`answered`, `unanswered`, `refused`,
/// `lost`: the outcome in the first or second transcript), `a-status`/`b-status`.
pub fn parse_rules(text: &str) -> Result<Vec<Rule>, String> {
    let mut rules = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let err = |what: &str| format!("allow file line {}: {what}: {line}", n + 1);
        let mut conds = Vec::new();
        for term in body.split_whitespace() {
            let (k, v) = term.split_once('=').ok_or_else(|| err("not key=value"))?;
            let n8 = || {
                num(v)
                    .and_then(|x| u8::try_from(x).ok())
                    .ok_or_else(|| err("bad number"))
            };
            let n16 = || {
                num(v)
                    .and_then(|x| u16::try_from(x).ok())
                    .ok_or_else(|| err("bad number"))
            };
            let word = |allowed: &[&str]| {
                if allowed.contains(&v) {
                    Ok(v.to_string())
                } else {
                    Err(err(&format!("{k} is one of {}", allowed.join(", "))))
                }
            };
            let kinds = ["answered", "unanswered", "refused", "lost", "skipped"];
            conds.push(match k {
                "attr" => Cond::Attr(n16()?),
                "method" => match v {
                    "get" => Cond::MethodClass(MethodClass::Get),
                    "set" => Cond::MethodClass(MethodClass::Set),
                    "other" => Cond::MethodClass(MethodClass::Other),
                    _ => Cond::Method(n8()?),
                },
                "vport" => Cond::Vport(n8()?),
                "size" => Cond::Size(word(&["trimmed", "random", "full", "ib"])?),
                "content" => Cond::Content(word(&["valid", "mutated", "random", "zero", "ones"])?),
                "base" => Cond::Base(n8()?),
                "class" => Cond::ClassVersion(n8()?),
                "short" => Cond::Short(word(&["yes", "no"])? == "yes"),
                "foreign" => Cond::Foreign(word(&["yes", "no"])? == "yes"),
                "differs" => {
                    Cond::Differs(word(&["answered", "length", "status", "data", "missing"])?)
                }
                "a" => Cond::Kind(0, word(&kinds)?),
                "b" => Cond::Kind(1, word(&kinds)?),
                "a-status" => Cond::Status(0, n16()?),
                "b-status" => Cond::Status(1, n16()?),
                _ => return Err(err(&format!("unknown key {k}"))),
            });
        }
        rules.push(Rule {
            conds,
            text: line.trim().to_string(),
        });
    }
    Ok(rules)
}

impl Rule {
    /// Whether the rule says only what a request is (no outcome, no difference): the
    /// rules of a skip file.
    pub fn is_about_requests(&self) -> bool {
        !self
            .conds
            .iter()
            .any(|c| matches!(c, Cond::Differs(_) | Cond::Kind(..) | Cond::Status(..)))
    }

    /// Whether the request matches the rule's conditions on requests.
    pub fn matches(&self, req: &Request) -> bool {
        let none = Outcome::Skipped;
        self.is_about_requests() && self.allows(req, Difference::Missing, &none, &none)
    }

    /// Whether the rule allows difference `d` of request `req`, answered `a` and `b`.
    pub fn allows(&self, req: &Request, d: Difference, a: &Outcome, b: &Outcome) -> bool {
        let sides = [a, b];
        self.conds.iter().all(|c| match c {
            Cond::Attr(x) => req.attr_id == *x,
            Cond::Method(x) => req.method == *x,
            Cond::MethodClass(x) => MethodClass::of(req.method) == *x,
            Cond::Vport(x) => req.vport() == *x,
            Cond::Size(x) => req.size.name() == x,
            Cond::Content(x) => req.content.name() == x,
            Cond::Base(x) => req.base_version == *x,
            Cond::ClassVersion(x) => req.class_version == *x,
            Cond::Short(x) => req.is_short() == *x,
            Cond::Foreign(x) => req.is_foreign() == *x,
            Cond::Differs(x) => d.name() == x,
            Cond::Kind(s, x) => sides[*s].kind() == x,
            Cond::Status(s, x) => sides[*s].status() == Some(*x),
        })
    }
}
