// SPDX-License-Identifier: GPL-2.0

//! `vnic-em watch`: the EM as a service. It keeps the fabric configured as
//! the config says, for as long as it runs.
//!
//! A node that reboots, or whose VNIC driver is reloaded, comes back with
//! no vport and a zero ClassPortInfo: no trap LID, so it sends no trap
//! that would tell the EM. So `watch` polls: every interval it reads each
//! node port of the config (what `apply` reads) and re-applies, with the
//! Sets of `apply`, whatever differs ([`crate::repair`]). Traps (link and
//! MAC list changes, which reach the EM once a node port's trap LID points
//! at it) make it check their node port at once rather than at the next
//! poll. Each re-applied vport is one line on `out`; a node port that
//! cannot be read is one line on `err` when it stops answering and one on
//! `out` when it answers again, not one per poll.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::client::{Client, EmError};
use crate::config::Config;
use crate::error::{Error, Exit, Result};
use crate::fabric::Fabric;
use crate::groups::JoinWatch;
use crate::names::{self, NamesError, Resolved};
use crate::plan::{config_lids, make_plan_lids, send_steps};
use crate::repair::repairs;
use crate::view::trap::{trap_text, trap_view};

use super::Io;

/// The longest a wait for traps lasts before the stop flag is looked at
/// again: a signal does not cut a umad wait short.
const STOP_POLL: Duration = Duration::from_millis(250);

/// Options of `watch`.
#[derive(Debug, Clone)]
pub struct WatchOpts {
    /// Time from the end of one poll of every node port to the next.
    pub interval: Duration,
    /// After a trap, how long to gather more before checking: a driver
    /// sends up to four per vport in 0.9 s, and one check covers them.
    pub settle: Duration,
    /// Read MAC tables even when their digest matches the config.
    pub full_tables: bool,
    /// Stop after this many checks (a test aid; the command line never
    /// sets it).
    pub max_checks: Option<u32>,
    /// The config file, for the lines of its node names in messages.
    pub config_path: String,
}

impl Default for WatchOpts {
    fn default() -> Self {
        WatchOpts {
            interval: Duration::from_secs(10),
            settle: Duration::from_millis(500),
            full_tables: false,
            max_checks: None,
            config_path: String::from("config"),
        }
    }
}

/// What started a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The first check, when `watch` starts.
    Start,
    /// The periodic poll.
    Poll,
    /// A trap from the node port.
    Trap,
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cause::Start => "found at start",
            Cause::Poll => "found by poll",
            Cause::Trap => "found after a trap",
        })
    }
}

/// What one check did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Vports (or, `None`, node port trap LIDs) re-applied in full.
    pub repaired: Vec<(u16, Option<u8>)>,
    /// Those whose re-apply failed.
    pub failed: Vec<(u16, Option<u8>)>,
    /// Node ports that could not be read.
    pub unreadable: Vec<u16>,
}

/// The state `watch` keeps between checks.
pub struct Watcher<'c> {
    /// The config as given, or as resolved at the last poll (names to LIDs).
    cfg: Cow<'c, Config>,
    full_tables: bool,
    /// The last read error of each node port that does not answer: it is
    /// logged when it starts, not at every poll.
    unreadable: BTreeMap<u16, String>,
}

impl<'c> Watcher<'c> {
    /// A watcher of `cfg`.
    pub fn new(cfg: &'c Config, full_tables: bool) -> Self {
        Watcher {
            cfg: Cow::Borrowed(cfg),
            full_tables,
            unreadable: BTreeMap::new(),
        }
    }

    /// Checks against `cfg` from now on: the config resolved again after a LID change.
    pub fn set_config(&mut self, cfg: Config) {
        self.cfg = Cow::Owned(cfg);
    }

    /// Reads the node ports `lids`, all at once (a batch: a node port
    /// that does not answer holds the others up once, not one after the
    /// other), and re-applies the config where it differs, logging each
    /// repair. Stops early when `stop` is set. Fails only when the
    /// transport does: the fabric's own errors are logged and the node port
    /// is tried again next time.
    pub fn check<F: Fabric>(
        &mut self,
        client: &mut Client<F>,
        lids: &[u16],
        cause: Cause,
        stop: &AtomicBool,
        io: &mut Io<'_>,
    ) -> Result<Checked> {
        let mut done = Checked::default();
        if stop.load(Ordering::Relaxed) {
            return Ok(done);
        }
        let mut plan = make_plan_lids(client, &self.cfg, lids, self.full_tables);
        if let Some(i) = plan
            .errors
            .iter()
            .position(|e| matches!(e, EmError::Transport(_)))
        {
            return Err(plan.errors.swap_remove(i).into());
        }
        for &lid in lids {
            let first = plan
                .errors
                .iter()
                .find(|e| e.target().is_some_and(|t| t.lid == lid));
            self.note_reads(lid, first, cause, io)?;
            if first.is_some() {
                done.unreadable.push(lid);
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(done);
        }
        // One repair at a time, each logged before the next is sent:
        // nothing more is sent once the log's reader is gone. A node port
        // that stops answering is given up for the rest of the check.
        let mut gone: Vec<u16> = Vec::new();
        for r in repairs(&plan.steps) {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let n = r.steps.len();
            let who = (r.lid, r.vport);
            if gone.contains(&r.lid) {
                done.failed.push(who);
                writeln!(
                    io.out,
                    "{}: {}, {cause}: re-apply skipped: LID {:#06x} does not answer",
                    r.name(),
                    r.why(),
                    r.lid
                )?;
                continue;
            }
            let mut sent = send_steps(client, &r.steps);
            if let Some(i) = sent
                .failed
                .iter()
                .position(|e| matches!(e, EmError::Transport(_)))
            {
                return Err(sent.failed.swap_remove(i).into());
            }
            match sent.failed.first() {
                None => {
                    done.repaired.push(who);
                    writeln!(
                        io.out,
                        "{}: {}, {cause}: re-applied {n} Set(s)",
                        r.name(),
                        r.why()
                    )
                }
                Some(e) => {
                    if matches!(e, EmError::Timeout { .. } | EmError::GaveUp { .. }) {
                        gone.push(r.lid);
                    }
                    done.failed.push(who);
                    writeln!(
                        io.out,
                        "{}: {}, {cause}: re-apply failed after {} of {n} Set(s): {e}",
                        r.name(),
                        r.why(),
                        sent.applied
                    )
                }
            }?;
            io.out.flush()?;
        }
        io.out.flush()?;
        Ok(done)
    }

    /// Logs a node port that stops answering, or answers again.
    fn note_reads(
        &mut self,
        lid: u16,
        error: Option<&EmError>,
        cause: Cause,
        io: &mut Io<'_>,
    ) -> std::io::Result<()> {
        match error {
            Some(e) => {
                let msg = e.to_string();
                if self.unreadable.get(&lid) != Some(&msg) {
                    writeln!(
                        io.err,
                        "vnic-em: watch: LID {lid:#06x}: cannot read ({cause}): {msg}"
                    )?;
                    io.err.flush()?;
                    self.unreadable.insert(lid, msg);
                }
            }
            None => {
                if self.unreadable.remove(&lid).is_some() {
                    writeln!(io.out, "LID {lid:#06x}: answers again")?;
                }
            }
        }
        Ok(())
    }
}

/// `vnic-em watch`: checks every node port of `cfg` at once, then at each
/// poll and after traps, until `stop` is set (by SIGTERM or SIGINT).
/// Returns [`Exit::Ok`] when stopped, an [`Error::Device`] when the
/// transport fails (the service manager starts it again), an
/// [`Error::Output`] when the output cannot be written (the log is gone:
/// no more repairs that nobody would see).
pub fn watch<F: Fabric>(
    client: &mut Client<F>,
    cfg: &Config,
    opts: &WatchOpts,
    stop: &AtomicBool,
    io: &mut Io<'_>,
) -> Result {
    let mut lids = config_lids(cfg);
    let mut w = Watcher::new(cfg, opts.full_tables);
    let mut names = NameWatch::default();
    let mut joins = JoinWatch::default();
    // Names and multicast groups come from the SA, at the start and at every poll.
    let ask_sa = names::needs_sa(cfg);
    if ask_sa {
        lids.clear();
        if let Some(r) = names.poll(client, cfg, &opts.config_path, Cause::Start, io)? {
            lids = config_lids(&r);
            w.set_config(r);
        }
    }
    writeln!(
        io.out,
        "watching {} vport(s) on {} node port(s) from {}, polling every {} s",
        cfg.vports.len(),
        lids.len(),
        client.fabric().describe(),
        opts.interval.as_secs_f64()
    )?;
    io.out.flush()?;
    let mut checks: u32 = 0;
    let mut polled = false;
    let mut next_poll = Instant::now();
    loop {
        if stop.load(Ordering::Relaxed) {
            writeln!(io.out, "stopping")?;
            return Ok(Exit::Ok);
        }
        if opts.max_checks.is_some_and(|m| checks >= m) {
            return Ok(Exit::Ok);
        }
        let now = Instant::now();
        let (todo, why) = if now >= next_poll {
            let why = if polled { Cause::Poll } else { Cause::Start };
            polled = true;
            if why == Cause::Poll && ask_sa {
                // The LIDs of now: the SM may have moved a node since the last poll.
                match names.poll(client, cfg, &opts.config_path, why, io)? {
                    Some(r) => {
                        lids = config_lids(&r);
                        w.set_config(r);
                    }
                    None if names.current.is_none() => lids.clear(),
                    None => {}
                }
            }
            if let Some(r) = &names.current {
                // Members again: a restarted SM's groups have none.
                joins.poll(client, &r.cfg, io)?;
            }
            (lids.clone(), why)
        } else {
            let wait = (next_poll - now).min(STOP_POLL);
            match gather_traps(client, wait, opts.settle, io) {
                Ok(from) => {
                    let ours: Vec<u16> = from.into_iter().filter(|l| lids.contains(l)).collect();
                    if ours.is_empty() {
                        continue;
                    }
                    (ours, Cause::Trap)
                }
                Err(e) => return Err(transport_failed(e)),
            }
        };
        w.check(client, &todo, why, stop, io)
            .map_err(transport_failed)?;
        checks = checks.saturating_add(1);
        if why != Cause::Trap {
            // From the end of the poll: a slow fabric (node ports that
            // time out) never makes polls back to back.
            next_poll = Instant::now() + opts.interval;
        }
    }
}

/// The names of the config as last resolved, and the last resolution error (logged when it
/// starts, not at every poll).
#[derive(Default)]
struct NameWatch {
    current: Option<Resolved>,
    failing: Option<String>,
}

impl NameWatch {
    /// Resolves the names of `cfg` again; the resolved config if it differs from the last
    /// one, after a line for each node port whose LID changed. While the SA cannot be asked,
    /// or a name gives no port, the last resolution stays.
    fn poll<F: Fabric>(
        &mut self,
        client: &mut Client<F>,
        cfg: &Config,
        path: &str,
        why: Cause,
        io: &mut Io<'_>,
    ) -> Result<Option<Config>> {
        let pol = *client.policy();
        let r = match names::resolve(client.fabric_mut(), cfg, path, pol.timeout, pol.retries) {
            Ok(r) => r,
            Err(e) => {
                let msg = match e {
                    NamesError::Sa(m) => m,
                    NamesError::Config(c) => c.to_string(),
                };
                if self.failing.as_ref() != Some(&msg) {
                    writeln!(io.err, "vnic-em: watch: {msg}")?;
                    io.err.flush()?;
                    self.failing = Some(msg);
                }
                return Ok(None);
            }
        };
        if self.failing.take().is_some() {
            writeln!(io.out, "{path}: every node name resolves again")?;
        }
        if self.current.as_ref() == Some(&r) {
            return Ok(None);
        }
        if let Some(old) = &self.current {
            let mut told = Vec::new();
            for ((name, now), (_, before)) in r.nodes.iter().zip(&old.nodes) {
                // One line a node, at the first line that names it.
                if now.lid != before.lid && !told.contains(&&name.name) {
                    told.push(&name.name);
                    writeln!(
                        io.out,
                        "{} (line {}): LID {:#06x} -> {:#06x}, {why}: re-applying what points to it",
                        name.name, name.line, before.lid, now.lid
                    )?;
                }
            }
        }
        let out = r.cfg.clone();
        self.current = Some(r);
        io.out.flush()?;
        Ok(Some(out))
    }
}

/// Waits up to `wait` for a trap, then gathers the traps that follow within
/// `settle`, logging each; returns the node ports they came from.
fn gather_traps<F: Fabric>(
    client: &mut Client<F>,
    wait: Duration,
    settle: Duration,
    io: &mut Io<'_>,
) -> Result<Vec<u16>> {
    let mut from: Vec<u16> = Vec::new();
    let Some(first) = client.wait_trap(wait)? else {
        return Ok(from);
    };
    let until = Instant::now() + settle;
    let mut next = Some(first);
    while let Some(t) = next {
        writeln!(io.out, "trap: {}", trap_text(&trap_view(&t)))?;
        if !from.contains(&t.src_lid) {
            from.push(t.src_lid);
        }
        let left = until.saturating_duration_since(Instant::now());
        next = if left.is_zero() {
            None
        } else {
            client.wait_trap(left)?
        };
    }
    io.out.flush()?;
    Ok(from)
}

/// The error that ends `watch`: the transport's, said as `watch`'s.
fn transport_failed(e: Error) -> Error {
    match e {
        Error::Em(e) => Error::Device(format!("watch: {e}")),
        e => e,
    }
}
