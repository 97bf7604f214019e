// SPDX-License-Identifier: GPL-2.0

//! `vnic-em traps`: listen for traps and print them.

use std::time::{Duration, Instant};

use crate::client::Client;
use crate::fabric::Fabric;
use crate::plan::diff::class_port_info_update;
use crate::view::trap::{trap_text, trap_view};

use super::{exit_for, report_err, Io, EXIT_FABRIC, EXIT_OK};

/// Options of `traps`.
#[derive(Debug, Clone, Default)]
pub struct TrapOpts {
    /// Point the trap LID of these node ports at the EM first.
    pub arm: Vec<u16>,
    /// Trap SL to set when arming.
    pub trap_sl: u8,
    /// Stop after this many traps.
    pub count: Option<u32>,
    /// Stop after this long.
    pub timeout: Option<Duration>,
    /// One JSON object a line.
    pub json: bool,
}

/// `vnic-em traps`: arm, then print traps as they arrive.
pub fn traps<F: Fabric>(client: &mut Client<F>, opts: &TrapOpts, io: &mut Io<'_>) -> u8 {
    let me = client.local_lid();
    for &lid in &opts.arm {
        let r = client.get_class_port_info(lid).and_then(|cpi| {
            match class_port_info_update(&cpi, me, opts.trap_sl) {
                Some(n) => client.set_class_port_info(lid, &n).map(|_| ()),
                None => Ok(()),
            }
        });
        if let Err(e) = r {
            report_err(io, &e);
            return exit_for(&e);
        }
    }
    if !opts.json {
        let _ = writeln!(
            io.out,
            "listening for traps at {}",
            client.fabric().describe()
        );
        let _ = io.out.flush();
    }
    let start = Instant::now();
    let mut got: u32 = 0;
    loop {
        if opts.count.is_some_and(|c| got >= c) {
            return EXIT_OK;
        }
        let wait = match opts.timeout {
            Some(t) => match t.checked_sub(start.elapsed()) {
                Some(left) if !left.is_zero() => left,
                _ => break,
            },
            None => Duration::from_secs(3600),
        };
        match client.wait_trap(wait) {
            Ok(Some(t)) => {
                got += 1;
                let v = trap_view(&t);
                let line = if opts.json {
                    serde_json::to_string(&v).unwrap_or_default()
                } else {
                    trap_text(&v)
                };
                let _ = writeln!(io.out, "{line}");
                let _ = io.out.flush();
            }
            Ok(None) => {}
            Err(e) => {
                report_err(io, &e);
                return exit_for(&e);
            }
        }
    }
    match opts.count {
        Some(c) if got < c => {
            let _ = writeln!(
                io.err,
                "vnic-em: timed out waiting for traps: got {got} of {c}"
            );
            EXIT_FABRIC
        }
        _ => EXIT_OK,
    }
}
