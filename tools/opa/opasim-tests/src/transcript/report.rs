// SPDX-License-Identifier: GPL-2.0

//! The comparison of two transcripts, request by request, and its report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::diff::{difference, first_diff, Difference};
use super::format::{Header, Outcome, Record};
use super::rules::Rule;
use crate::vema_gen::{self, hex, Request};

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
