// SPDX-License-Identifier: GPL-2.0

//! `vnic-em traps`: listen for traps and print them.

use std::time::{Duration, Instant};

use crate::client::Client;
use crate::error::{Error, Exit, Result};
use crate::fabric::Fabric;
use crate::plan::diff::class_port_info_update;
use crate::view::trap::{trap_text, trap_view};

use super::Io;

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
pub fn traps<F: Fabric>(client: &mut Client<F>, opts: &TrapOpts, io: &mut Io<'_>) -> Result {
    let me = client.local_lid();
    for &lid in &opts.arm {
        let cpi = client.get_class_port_info(lid)?;
        if let Some(n) = class_port_info_update(&cpi, me, opts.trap_sl) {
            client.set_class_port_info(lid, &n)?;
        }
    }
    if !opts.json {
        writeln!(
            io.out,
            "listening for traps at {}",
            client.fabric().describe()
        )?;
        io.out.flush()?;
    }
    let start = Instant::now();
    let mut got: u32 = 0;
    loop {
        if opts.count.is_some_and(|c| got >= c) {
            return Ok(Exit::Ok);
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
                writeln!(io.out, "{line}")?;
                io.out.flush()?;
            }
            Ok(None) => {}
            Err(e) => return Err(e.into()),
        }
    }
    match opts.count {
        Some(c) if got < c => Err(Error::Fabric(format!(
            "timed out waiting for traps: got {got} of {c}"
        ))),
        _ => Ok(Exit::Ok),
    }
}
