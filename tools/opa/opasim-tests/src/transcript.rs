// SPDX-License-Identifier: GPL-2.0

//! Transcripts of `vema-fuzz run` and their comparison (`vema-fuzz compare`).
//!
//! A transcript is binary: a header (magic, seed, count, timeout), then one record per
//! request in order: its index, what came of it (answered, not answered in time, refused by
//! umad's write) and the answer. The answer is stored with the upper half of its TID zeroed
//! (ib_umad sets it per agent, so it differs between two runs) and without its trailing
//! zeros (most of a 2048-byte answer is zero; a campaign of 10^5 requests must fit the
//! guest's RAM), its length kept apart. The requests are not stored: the seed rebuilds them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Read, Write};

use crate::vema_gen::{self, hex, MethodClass, Request};

/// The first bytes of a transcript (the last one is the format's version).
pub const MAGIC: [u8; 8] = *b"VEMAFUZ\x01";

/// What a run was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The generator's seed.
    pub seed: u64,
    /// Requests the run meant to send.
    pub count: u64,
    /// How long each request waited for its answer, in milliseconds.
    pub timeout_ms: u32,
}

/// What came of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// An answer: its length and its bytes (upper half of the TID zeroed, trailing zeros
    /// left out).
    Answered {
        /// Length of the answer.
        len: u32,
        /// The answer up to its last non-zero byte.
        bytes: Vec<u8>,
    },
    /// Nothing within the timeout (the MAD layer said so).
    Unanswered,
    /// umad's write refused the request, with this errno (the same for both drivers: the
    /// request never left).
    Refused(i32),
    /// Neither an answer nor umad's time-out notice arrived (a MAD lost on the way).
    Lost,
    /// Not sent: a skip rule of the run matched it.
    Skipped,
}

impl Outcome {
    /// An answer as read, with the upper half of the TID zeroed and trailing zeros dropped.
    pub fn answered(mad: &[u8]) -> Self {
        let mut bytes = mad.to_vec();
        if let Some(tid_hi) = bytes.get_mut(8..12) {
            tid_hi.fill(0);
        }
        let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        bytes.truncate(end);
        Outcome::Answered {
            len: mad.len() as u32,
            bytes,
        }
    }

    /// The MAD status of an answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            Outcome::Answered { len, bytes } if *len >= 6 => Some(u16::from_be_bytes([
                bytes.get(4).copied().unwrap_or(0),
                bytes.get(5).copied().unwrap_or(0),
            ])),
            _ => None,
        }
    }

    /// Byte `i` of an answer (zero past what is stored).
    fn byte(&self, i: usize) -> u8 {
        match self {
            Outcome::Answered { bytes, .. } => bytes.get(i).copied().unwrap_or(0),
            _ => 0,
        }
    }

    /// The kind of outcome, as allow rules name it.
    pub const fn kind(&self) -> &'static str {
        match self {
            Outcome::Answered { .. } => "answered",
            Outcome::Unanswered => "unanswered",
            Outcome::Refused(_) => "refused",
            Outcome::Lost => "lost",
            Outcome::Skipped => "skipped",
        }
    }

    /// A short description: kind, length and status.
    pub fn summary(&self) -> String {
        match self {
            Outcome::Answered { len, .. } => match self.status() {
                Some(s) => format!("answered, {len} bytes, status {s:#06x}"),
                None => format!("answered, {len} bytes"),
            },
            Outcome::Unanswered => "no answer in time".into(),
            Outcome::Refused(e) => format!("refused by umad (errno {e})"),
            Outcome::Lost => "no answer and no time-out notice".into(),
            Outcome::Skipped => "not sent (skipped)".into(),
        }
    }
}

/// One request's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The request's index.
    pub index: u64,
    /// What came of it.
    pub outcome: Outcome,
}

/// Writes the header of a transcript.
pub fn write_header<W: Write>(w: &mut W, h: &Header) -> io::Result<()> {
    w.write_all(&MAGIC)?;
    w.write_all(&h.seed.to_le_bytes())?;
    w.write_all(&h.count.to_le_bytes())?;
    w.write_all(&h.timeout_ms.to_le_bytes())
}

/// Writes one record.
pub fn write_record<W: Write>(w: &mut W, r: &Record) -> io::Result<()> {
    let (kind, code, len, bytes): (u8, i32, u32, &[u8]) = match &r.outcome {
        Outcome::Answered { len, bytes } => (0, 0, *len, bytes),
        Outcome::Unanswered => (1, 0, 0, &[]),
        Outcome::Refused(e) => (2, *e, 0, &[]),
        Outcome::Lost => (3, 0, 0, &[]),
        Outcome::Skipped => (4, 0, 0, &[]),
    };
    w.write_all(&r.index.to_le_bytes())?;
    w.write_all(&[kind])?;
    w.write_all(&code.to_le_bytes())?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&(bytes.len() as u32).to_le_bytes())?;
    w.write_all(bytes)
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

fn read_array<const N: usize, R: Read>(r: &mut R) -> io::Result<[u8; N]> {
    let mut b = [0u8; N];
    r.read_exact(&mut b)?;
    Ok(b)
}

/// Reads a whole transcript. A run cut short (the guest died, the tool was killed) leaves
/// a truncated last record, which is dropped: the records before it still compare.
pub fn read<R: Read>(r: &mut R) -> io::Result<(Header, Vec<Record>)> {
    if read_array::<8, _>(r)? != MAGIC {
        return Err(bad("not a vema-fuzz transcript"));
    }
    let h = Header {
        seed: u64::from_le_bytes(read_array(r)?),
        count: u64::from_le_bytes(read_array(r)?),
        timeout_ms: u32::from_le_bytes(read_array(r)?),
    };
    let mut recs = Vec::new();
    loop {
        let mut idx = [0u8; 8];
        match r.read_exact(&mut idx) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e),
        }
        let rec = (|| -> io::Result<Record> {
            let [kind] = read_array::<1, _>(r)?;
            let code = i32::from_le_bytes(read_array(r)?);
            let len = u32::from_le_bytes(read_array(r)?);
            let stored = u32::from_le_bytes(read_array(r)?);
            if stored > len || stored > 1 << 16 {
                return Err(bad("corrupt record"));
            }
            let mut bytes = vec![0u8; stored as usize];
            r.read_exact(&mut bytes)?;
            let outcome = match kind {
                0 => Outcome::Answered { len, bytes },
                1 => Outcome::Unanswered,
                2 => Outcome::Refused(code),
                3 => Outcome::Lost,
                4 => Outcome::Skipped,
                _ => return Err(bad("corrupt record")),
            };
            Ok(Record {
                index: u64::from_le_bytes(idx),
                outcome,
            })
        })();
        match rec {
            Ok(rec) => recs.push(rec),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e),
        }
    }
    Ok((h, recs))
}

/// What differs between the two outcomes of a request, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Difference {
    /// One side answered (or was refused, or lost it), the other not the same way.
    Answered,
    /// Both answered, with different lengths.
    Length,
    /// Both answered, with different MAD statuses.
    Status,
    /// Both answered with the same status and length, different bytes.
    Data,
    /// One transcript has no record of the request (its run stopped early).
    Missing,
}

impl Difference {
    /// The name used in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Difference::Answered => "answered",
            Difference::Length => "length",
            Difference::Status => "status",
            Difference::Data => "data",
            Difference::Missing => "missing",
        }
    }
}

/// The first byte offset where two answers differ (over the longer of the two).
pub fn first_diff(a: &Outcome, b: &Outcome) -> Option<usize> {
    let len = |o: &Outcome| match o {
        Outcome::Answered { len, .. } => *len as usize,
        _ => 0,
    };
    (0..len(a).max(len(b))).find(|&i| a.byte(i) != b.byte(i))
}

/// Compares two outcomes of one request.
pub fn difference(a: &Outcome, b: &Outcome) -> Option<Difference> {
    if a == b {
        return None;
    }
    match (a, b) {
        (Outcome::Answered { len: la, .. }, Outcome::Answered { len: lb, .. }) => {
            Some(if a.status() != b.status() {
                Difference::Status
            } else if la != lb {
                Difference::Length
            } else {
                Difference::Data
            })
        }
        _ => Some(Difference::Answered),
    }
}

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

/// The result of comparing two transcripts.
#[derive(Debug, Default)]
pub struct Report {
    /// Requests compared.
    pub requests: u64,
    /// Differences no rule allows.
    pub differences: u64,
    /// Differences a rule allows.
    pub allowed: u64,
    /// The text to print.
    pub text: String,
}

/// The key differences are grouped by in the report: what the request was (attribute,
/// method, size class, short or not, base version) and how the two sides answered.
fn group_key(req: &Request, d: Difference, a: &Outcome, b: &Outcome) -> String {
    let side = |o: &Outcome| match o {
        Outcome::Answered { len, .. } => match o.status() {
            Some(s) => format!("{len}/{s:#06x}"),
            None => format!("{len}"),
        },
        o => o.kind().to_string(),
    };
    format!(
        "{:<7} attr {:#06x} method {:#04x} size {:<7} base {:#04x}{} | {} vs {}",
        d.name(),
        req.attr_id,
        req.method,
        req.size.name(),
        req.base_version,
        if req.is_short() { " short" } else { "      " },
        side(a),
        side(b)
    )
}

/// Compares transcripts `a` and `b` request by request. `names` label the two sides;
/// `max_shown` differences are printed in full, all of them in the groups that follow.
pub fn compare(
    a: &(Header, Vec<Record>),
    b: &(Header, Vec<Record>),
    names: [&str; 2],
    rules: &[Rule],
    max_shown: usize,
) -> Result<Report, String> {
    let (ha, ra) = a;
    let (hb, rb) = b;
    if ha.seed != hb.seed {
        return Err(format!(
            "the transcripts are of different seeds ({} and {})",
            ha.seed, hb.seed
        ));
    }
    let index = |recs: &[Record]| -> BTreeMap<u64, usize> {
        recs.iter().enumerate().map(|(i, r)| (r.index, i)).collect()
    };
    let (ia, ib) = (index(ra), index(rb));
    let all: std::collections::BTreeSet<u64> = ia.keys().chain(ib.keys()).copied().collect();
    let mut rep = Report::default();
    let mut groups: BTreeMap<String, (u64, u64, bool)> = BTreeMap::new();
    let mut shown = 0usize;
    let none = Outcome::Lost;
    for &i in &all {
        rep.requests += 1;
        let oa = ia.get(&i).map(|&k| &ra[k].outcome);
        let ob = ib.get(&i).map(|&k| &rb[k].outcome);
        let d = match (oa, ob) {
            (Some(x), Some(y)) => difference(x, y),
            _ => Some(Difference::Missing),
        };
        let Some(d) = d else { continue };
        let (oa, ob) = (oa.unwrap_or(&none), ob.unwrap_or(&none));
        let req = vema_gen::generate(ha.seed, i);
        let rule = rules.iter().find(|r| r.allows(&req, d, oa, ob));
        if rule.is_some() {
            rep.allowed += 1;
        } else {
            rep.differences += 1;
        }
        let g = groups
            .entry(group_key(&req, d, oa, ob))
            .or_insert((0, i, rule.is_some()));
        g.0 += 1;
        if rule.is_none() && shown < max_shown {
            shown += 1;
            let t = &mut rep.text;
            let _ = writeln!(t, "request {i} differs ({}): {}", d.name(), req.describe());
            let _ = writeln!(t, "  request: {}", hex(&req.mad));
            let _ = writeln!(t, "  {}: {}", names[0], side_text(ia.contains_key(&i), oa));
            let _ = writeln!(t, "  {}: {}", names[1], side_text(ib.contains_key(&i), ob));
            if let Some(off) = first_diff(oa, ob) {
                let _ = writeln!(
                    t,
                    "  first differing byte: {off} ({:#04x} vs {:#04x})",
                    oa.byte(off),
                    ob.byte(off)
                );
            }
            let _ = writeln!(
                t,
                "  reproduce: vema-fuzz show --seed {} --index {i}",
                ha.seed
            );
        }
    }
    if rep.differences > u64::try_from(shown).unwrap_or(u64::MAX) {
        let _ = writeln!(
            rep.text,
            "({} more differences not shown in full)",
            rep.differences - shown as u64
        );
    }
    if !groups.is_empty() {
        let _ = writeln!(
            rep.text,
            "differences by kind (count, first index; answers as length/status, {} vs {}):",
            names[0], names[1]
        );
        for (k, (n, first, allowed)) in &groups {
            let _ = writeln!(
                rep.text,
                "  {n:6} first {first:6}  {k}{}",
                if *allowed { "  (allowed)" } else { "" }
            );
        }
    }
    let _ = write!(
        rep.text,
        "vema-fuzz: {} requests, {} differences",
        rep.requests, rep.differences
    );
    if rep.allowed > 0 {
        let _ = write!(rep.text, " ({} more allowed)", rep.allowed);
    }
    let _ = writeln!(rep.text);
    Ok(rep)
}

fn side_text(present: bool, o: &Outcome) -> String {
    if !present {
        return "no record (the run stopped before it)".into();
    }
    match o {
        Outcome::Answered { bytes, .. } => format!("{}: {}", o.summary(), hex(bytes)),
        o => o.summary(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, data: &[u8]) -> Vec<u8> {
        let mut m = vec![0u8; 2048];
        m[0] = 0x80;
        m[3] = 0x81;
        m[4..6].copy_from_slice(&status.to_be_bytes());
        m[8..12].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        m[40..40 + data.len()].copy_from_slice(data);
        m
    }

    fn run(outcomes: Vec<Outcome>) -> (Header, Vec<Record>) {
        let h = Header {
            seed: 9,
            count: outcomes.len() as u64,
            timeout_ms: 200,
        };
        let recs = outcomes
            .into_iter()
            .enumerate()
            .map(|(i, outcome)| Record {
                index: i as u64,
                outcome,
            })
            .collect();
        (h, recs)
    }

    fn round_trip(t: &(Header, Vec<Record>)) -> (Header, Vec<Record>) {
        let mut buf = Vec::new();
        write_header(&mut buf, &t.0).unwrap();
        for r in &t.1 {
            write_record(&mut buf, r).unwrap();
        }
        read(&mut buf.as_slice()).unwrap()
    }

    #[test]
    fn answers_are_masked_and_trimmed() {
        let o = Outcome::answered(&answer(0x1c, &[1, 2, 3]));
        let Outcome::Answered { len, bytes } = &o else {
            panic!()
        };
        assert_eq!(*len, 2048);
        assert_eq!(bytes.len(), 43);
        assert_eq!(&bytes[8..12], &[0; 4], "upper half of the TID masked");
        assert_eq!(o.status(), Some(0x1c));
    }

    #[test]
    fn transcript_round_trip() {
        let t = run(vec![
            Outcome::answered(&answer(0, &[5; 300])),
            Outcome::Unanswered,
            Outcome::Refused(22),
            Outcome::Lost,
            Outcome::Skipped,
            Outcome::answered(&[0u8; 256]),
        ]);
        assert_eq!(round_trip(&t), t);
        // A run cut short in its last record keeps the records before it.
        let mut buf = Vec::new();
        write_header(&mut buf, &t.0).unwrap();
        for r in &t.1 {
            write_record(&mut buf, r).unwrap();
        }
        buf.truncate(buf.len() - 3);
        let (_, recs) = read(&mut buf.as_slice()).unwrap();
        assert_eq!(recs.len(), 5);
        assert!(read(&mut &b"not a transcript at all"[..]).is_err());
    }

    #[test]
    fn compare_finds_and_allows() {
        let same = run(vec![Outcome::answered(&answer(0, &[1])); 3]);
        let rep = compare(&same, &same, ["c", "rust"], &[], 10).unwrap();
        assert_eq!((rep.requests, rep.differences), (3, 0));
        assert!(rep.text.ends_with("vema-fuzz: 3 requests, 0 differences\n"));

        let a = run(vec![
            Outcome::answered(&answer(0, &[1])),
            Outcome::answered(&answer(0, &[1])),
            Outcome::answered(&answer(0, &[1, 2])),
            Outcome::answered(&answer(0, &[1])),
        ]);
        let b = run(vec![
            Outcome::answered(&answer(0, &[1])),
            Outcome::answered(&answer(0x1c, &[])),
            Outcome::answered(&answer(0, &[1, 3])),
            Outcome::Unanswered,
        ]);
        let rep = compare(&a, &b, ["c", "rust"], &[], 10).unwrap();
        assert_eq!(rep.differences, 3, "{}", rep.text);
        assert!(
            rep.text.contains("request 1 differs (status)"),
            "{}",
            rep.text
        );
        assert!(rep.text.contains("first differing byte: 5 (0x00 vs 0x1c)"));
        assert!(rep.text.contains("request 2 differs (data)"));
        assert!(rep.text.contains("first differing byte: 41 (0x02 vs 0x03)"));
        assert!(rep.text.contains("request 3 differs (answered)"));
        assert!(rep.text.contains("rust: no answer in time"));
        assert!(rep.text.contains("vema-fuzz: 4 requests, 3 differences"));

        let rules = parse_rules(
            "# comment\n\
             differs=status b-status=0x1c a=answered  # why\n\
             differs=data\n\
             b=unanswered\n",
        )
        .unwrap();
        assert_eq!(rules.len(), 3);
        let rep = compare(&a, &b, ["c", "rust"], &rules, 10).unwrap();
        assert_eq!((rep.differences, rep.allowed), (0, 3), "{}", rep.text);
        assert!(rep.text.contains("0 differences (3 more allowed)"));

        // A request missing from one side is a difference; another seed is an error.
        let short = run(vec![Outcome::answered(&answer(0, &[1])); 2]);
        let rep = compare(&same, &short, ["c", "rust"], &[], 10).unwrap();
        assert_eq!(rep.differences, 1);
        assert!(rep.text.contains("no record"));
        let mut other = same.clone();
        other.0.seed = 10;
        assert!(compare(&same, &other, ["c", "rust"], &[], 10).is_err());
    }

    #[test]
    fn rules_by_request() {
        // Find a short Set and a request of base version 1 in seed 9.
        let reqs: Vec<Request> = (0..200).map(|i| vema_gen::generate(9, i)).collect();
        let short_set = reqs
            .iter()
            .find(|r| r.is_short() && r.method == 2 && r.mad.len() >= 40)
            .unwrap();
        let ib = reqs.iter().find(|r| r.base_version == 1).unwrap();
        let rules = parse_rules("method=set short=yes\nbase=1 size=ib\nforeign=yes\n").unwrap();
        let (a, b) = (Outcome::Unanswered, Outcome::Lost);
        assert!(rules[0].allows(short_set, Difference::Answered, &a, &b));
        assert!(!rules[0].allows(ib, Difference::Answered, &a, &b) || ib.is_short());
        assert!(rules[1].allows(ib, Difference::Answered, &a, &b));
        assert!(rules[1].matches(ib));
        for r in &reqs {
            let foreign = r.class_version != 0x80 || r.oui != [0x00, 0x06, 0x6a];
            assert_eq!(rules[2].matches(r), foreign);
        }
        let by_outcome = parse_rules("base=1 b=lost").unwrap();
        assert!(!by_outcome[0].is_about_requests());
        assert!(
            !by_outcome[0].matches(ib),
            "a skip rule cannot depend on answers"
        );
        for bad in ["attr", "attr=0x10000", "size=huge", "colour=red", "a=maybe"] {
            assert!(parse_rules(bad).is_err(), "{bad}");
        }
    }
}
