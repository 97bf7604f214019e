// SPDX-License-Identifier: GPL-2.0

//! `vnic-em apply`: make the fabric match a config.

use crate::client::{Client, EmError};
use crate::config::Config;
use crate::error::{Exit, Result};
use crate::fabric::Fabric;
use crate::groups;
use crate::plan::{make_plan, offline_plan, send_steps};
use crate::view::plan::{apply_json, step_diff, step_text, ApplyReport};

use super::{report_err, Io};

/// Options of `apply`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApplyOpts {
    /// Print the plan, send no Set.
    pub dry_run: bool,
    /// Like `dry_run`, and exit with [`Exit::Differs`] if there is any
    /// Set to send; implies `full_tables`.
    pub check: bool,
    /// Read the MAC tables even when their digest matches.
    pub full_tables: bool,
    /// Print the plan and result as JSON.
    pub json: bool,
    /// Print only the Sets, each with its `old -> new` values, and send
    /// none of them (a dry run in another format).
    pub diff: bool,
}

/// `vnic-em apply`: plan, print, and (unless a dry run) send the Sets.
pub fn apply<F: Fabric>(
    client: &mut Client<F>,
    cfg: &Config,
    opts: ApplyOpts,
    io: &mut Io<'_>,
) -> Result {
    let full = opts.full_tables || opts.check;
    let plan = make_plan(client, cfg, full);
    let read_errors = plan.errors.len();
    for e in &plan.errors {
        report_err(io, e)?;
    }
    let dry = opts.dry_run || opts.check || opts.diff;
    let mut statuses: Vec<&str> = vec![if dry { "planned" } else { "pending" }; plan.steps.len()];
    let mut applied = 0usize;
    let mut failed: Vec<EmError> = Vec::new();
    if opts.diff && !opts.json {
        for s in &plan.steps {
            writeln!(io.out, "{}", step_diff(s))?;
        }
    } else if !opts.json {
        writeln!(
            io.out,
            "EM at {}, {} vport(s) in the config",
            client.fabric().describe(),
            cfg.vports.len()
        )?;
        for s in &plan.steps {
            writeln!(io.out, "  {}", step_text(s))?;
        }
        for (lid, v) in &plan.up_to_date {
            writeln!(io.out, "  LID {lid:#06x} vport {v}: up to date")?;
        }
    }
    if !dry {
        let sent = send_steps(client, &plan.steps);
        for e in &sent.failed {
            report_err(io, e)?;
        }
        statuses = sent.statuses;
        applied = sent.applied;
        failed = sent.failed;
    }
    let total = plan.steps.len();
    if opts.json {
        let j = apply_json(&ApplyReport {
            em_lid: client.local_lid(),
            dry_run: dry,
            steps: &plan.steps,
            statuses: &statuses,
            up_to_date: &plan.up_to_date,
            applied,
            read_errors: &plan.errors,
            set_errors: &failed,
        });
        writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(&j).unwrap_or_default()
        )?;
    } else if dry {
        match total {
            0 => writeln!(io.out, "nothing to do"),
            n if opts.diff => writeln!(io.out, "{n} Set(s) to send (diff: none sent)"),
            n => writeln!(io.out, "{n} Set(s) to send (dry run: none sent)"),
        }?;
    } else {
        match total {
            0 => writeln!(io.out, "nothing to do"),
            n => writeln!(io.out, "applied {applied} of {n} Set(s)"),
        }?;
    }
    let errors = read_errors + failed.len();
    Ok(if errors == 0 {
        if opts.check && total > 0 {
            Exit::Differs
        } else {
            Exit::Ok
        }
    } else if applied > 0 {
        Exit::Partial
    } else if plan
        .errors
        .iter()
        .chain(&failed)
        .all(|e| matches!(e, EmError::Transport(_)))
    {
        Exit::Device
    } else {
        Exit::Fabric
    })
}

/// `apply --dry-run` without a fabric: the config is checked (it loaded),
/// the plan it makes of vports at their power-on defaults is printed, and
/// what could not be checked is said; `why`: why there is no fabric. Ends
/// with [`Exit::Device`], as the same `apply` with a fabric would have:
/// the fabric was not read, so the run says nothing about it.
pub fn apply_offline(cfg: &Config, why: &str, json: bool, io: &mut Io<'_>) -> Result {
    let off = offline_plan(cfg);
    let steps = &off.plan.steps;
    if json {
        let statuses = vec!["planned"; steps.len()];
        let mut j = apply_json(&ApplyReport {
            em_lid: 0,
            dry_run: true,
            steps,
            statuses: &statuses,
            up_to_date: &[],
            applied: 0,
            read_errors: &[],
            set_errors: &[],
        });
        if let Some(o) = j.as_object_mut() {
            o.insert("fabric_read".into(), false.into());
            o.insert("not_checked".into(), off.unknown.clone().into());
        }
        writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(&j).unwrap_or_default()
        )?;
    } else {
        writeln!(
            io.out,
            "no fabric: the plan of the config alone, {} vport(s)",
            cfg.vports.len()
        )?;
        for s in steps {
            writeln!(io.out, "  {}", step_text(s))?;
        }
        writeln!(io.out, "not checked without a fabric:")?;
        for u in &off.unknown {
            writeln!(io.out, "  - {u}")?;
        }
        writeln!(
            io.out,
            "{} Set(s) at most (dry run, no fabric: none sent)",
            steps.len()
        )?;
    }
    writeln!(io.err, "vnic-em: {why}")?;
    Ok(Exit::Device)
}

/// After `apply` sent its Sets: the node ports of each vesw joined to its multicast group
/// ([`crate::groups`]), one line a vesw (none with `json`, whose output is one document), one
/// error line a port that could not join. A failed join turns a successful apply's exit into
/// [`Exit::NotJoined`]: the Sets took (not [`Exit::Fabric`], "nothing was changed"), but
/// broadcast would not reach that port.
pub fn join_groups<F: Fabric>(
    client: &mut Client<F>,
    cfg: &Config,
    json: bool,
    exit: Exit,
    io: &mut Io<'_>,
) -> Result {
    let pol = *client.policy();
    let mut failed = false;
    match groups::join_groups(client.fabric_mut(), cfg, pol.timeout, pol.retries) {
        Ok(joins) => {
            for j in &joins {
                if !json && !j.joined.is_empty() {
                    writeln!(io.out, "{}", j.text())?;
                }
                for e in &j.errors {
                    writeln!(io.err, "vnic-em: {e}")?;
                    failed = true;
                }
            }
        }
        Err(e) => {
            writeln!(io.err, "vnic-em: {e}")?;
            failed = true;
        }
    }
    Ok(if failed && exit == Exit::Ok {
        Exit::NotJoined
    } else {
        exit
    })
}
