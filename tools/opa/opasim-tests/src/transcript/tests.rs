// SPDX-License-Identifier: GPL-2.0

//! Tests of transcripts: the format, differences, rules and reports.

use super::*;
use crate::vema_gen::{self, Request};
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
