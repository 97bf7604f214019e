// SPDX-License-Identifier: GPL-2.0

//! `vnic-em apply | head`: once the reader of the output is gone, a
//! command stops quietly and sends nothing more to the fabric.

mod common;

use std::io::{self, Write};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use common::{sets, FABRIC};

use vnic_em::client::Client;
use vnic_em::commands::watch::{self, WatchOpts};
use vnic_em::commands::{self, ApplyOpts, Io, SetOpts};
use vnic_em::config::parse;
use vnic_em::error::{self, Exit};
use vnic_em::fake::FakeFabric;

/// A pipe whose reader goes away after `lines` lines: every write after
/// them fails with `BrokenPipe`, as stdout does once `head` has exited.
struct Pipe {
    lines: usize,
    got: Vec<u8>,
}

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.lines == 0 {
            return Err(io::Error::from(io::ErrorKind::BrokenPipe));
        }
        let mut n = 0;
        for &b in buf {
            self.got.push(b);
            n += 1;
            if b == b'\n' {
                self.lines -= 1;
                if self.lines == 0 {
                    break;
                }
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn client() -> Client<FakeFabric> {
    common::client(50)
}

/// Runs a command writing to a pipe that breaks after `lines` lines;
/// returns its exit code and what it wrote to stderr, as `main` does.
fn run_piped(lines: usize, f: impl FnOnce(&mut Io<'_>) -> error::Result) -> (Exit, String) {
    let mut out = Pipe {
        lines,
        got: Vec::new(),
    };
    common::run_to(&mut out, f)
}

#[test]
fn apply_sends_no_set_after_the_reader_is_gone() {
    let cfg = parse(FABRIC).unwrap();
    // What a whole apply sends.
    let mut c = client();
    let (code, _) = run_piped(usize::MAX, |io| {
        commands::apply(&mut c, &cfg, ApplyOpts::default(), io)
    });
    assert_eq!(code, Exit::Ok);
    assert!(sets(&c) > 2);
    // The plan is printed before any Set is sent: the reader reads the
    // first line of the plan and goes, and no Set goes out.
    let mut c = client();
    let (code, err) = run_piped(2, |io| {
        commands::apply(&mut c, &cfg, ApplyOpts::default(), io)
    });
    assert_eq!(sets(&c), 0, "Sets sent after the reader was gone");
    assert_eq!(code, Exit::Ok);
    assert_eq!(err, "");
}

#[test]
fn set_stops_at_the_first_line_nobody_reads() {
    let cfg = parse(FABRIC).unwrap();
    let mut c = client();
    let (code, _) = run_piped(usize::MAX, |io| {
        commands::apply(&mut c, &cfg, ApplyOpts::default(), io)
    });
    assert_eq!(code, Exit::Ok);
    let before = sets(&c);
    // The trap LID Set is reported before the MTU is set; nobody reads
    // that report, so the MTU is not set.
    let o = SetOpts {
        lid: 2,
        vport: Some(0),
        trap_lid: Some(0x44),
        eth_mtu: Some(9000),
        ..Default::default()
    };
    let (code, err) = run_piped(0, |io| commands::set(&mut c, &o, io));
    assert_eq!(sets(&c), before + 1, "Sets sent after the reader was gone");
    assert_eq!(code, Exit::Ok);
    assert_eq!(err, "");
}

#[test]
fn watch_stops_repairing_when_its_log_is_gone() {
    let cfg = parse(FABRIC).unwrap();
    let opts = WatchOpts {
        interval: Duration::from_millis(10),
        max_checks: Some(1),
        ..WatchOpts::default()
    };
    let stop = AtomicBool::new(false);
    // What configuring the two node ports takes: two trap LIDs and three
    // vports, each a line.
    let mut c = client();
    let (code, _) = run_piped(usize::MAX, |io| {
        watch::watch(&mut c, &cfg, &opts, &stop, io)
    });
    assert_eq!(code, Exit::Ok);
    let all = sets(&c);
    // Each repair is logged once its Sets are sent. The reader takes the
    // first line ("watching ...") and goes: the first repair is sent, its
    // line fails, and nothing more is.
    let mut c = client();
    let (code, err) = run_piped(1, |io| watch::watch(&mut c, &cfg, &opts, &stop, io));
    let first = sets(&c);
    assert_eq!(code, Exit::Ok);
    assert_eq!(err, "");
    assert!(first >= 1 && first < all, "{first} of {all} Sets sent");
    // The fabric is as that one repair left it: the rest was never sent.
    let mut again = client();
    let (_, _) = run_piped(2, |io| watch::watch(&mut again, &cfg, &opts, &stop, io));
    assert!(sets(&again) > first, "the second repair is sent when read");
}
