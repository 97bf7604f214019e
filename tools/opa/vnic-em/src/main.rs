// SPDX-License-Identifier: GPL-2.0

//! `vnic-em`: the command line.

#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

use vnic_em::client::{Client, Policy};
use vnic_em::commands::watch::{self, WatchOpts};
use vnic_em::commands::{
    self, ApplyOpts, CountersFormat, CountersOpts, DiscoverFormat, DiscoverOpts, Io, RawReq,
    Select, TrapOpts,
};
use vnic_em::config::{self, Config};
use vnic_em::docs;
use vnic_em::error::{self, Error, Exit};
use vnic_em::legacy;
use vnic_em::names::{self, NamesError};
use vnic_em::umad::{PortSelect, Umad};

mod cli;

use cli::{Cli, Command, DeviceArgs, MadSizeArg, SelectArgs};

/// What a command knows beyond its own options: the port options given
/// before it, and how much to say.
struct Ctx {
    before: DeviceArgs,
    verbose: u8,
}

/// Loads a config; its warnings go to stderr, before anything is sent.
fn load(ctx: &Ctx, path: &str, io: &mut Io<'_>) -> error::Result<Config> {
    let cfg = config::load(path)?;
    for w in &cfg.warnings {
        writeln!(io.err, "{}", w.text(path, "warning"))?;
    }
    if ctx.verbose > 0 {
        writeln!(
            io.err,
            "vnic-em: {path}: {} vesw(s), {} vport(s), {} node name(s) to resolve",
            cfg.vesws.len(),
            cfg.vports.len(),
            cfg.names.len()
        )?;
    }
    Ok(cfg)
}

/// `validate FILE`: the counts, or every error; as one JSON object with
/// `json` (errors too, on stdout, for a script to read).
fn validate(ctx: &Ctx, file: &str, json: bool, io: &mut Io<'_>) -> error::Result {
    if !json {
        let cfg = load(ctx, file, io)?;
        let warnings = match cfg.warnings.len() {
            0 => String::new(),
            n => format!(", {n} warning(s)"),
        };
        writeln!(
            io.out,
            "{file}: ok ({} vesw(s), {} vport(s){warnings})",
            cfg.vesws.len(),
            cfg.vports.len()
        )?;
        return Ok(Exit::Ok);
    }
    let texts = |d: &[config::Diag], kind| -> Vec<String> {
        d.iter().map(|d| d.text(file, kind)).collect()
    };
    let (j, exit) = match config::load(file) {
        Ok(cfg) => (
            serde_json::json!({
                "file": file, "ok": true, "vesws": cfg.vesws.len(), "vports": cfg.vports.len(),
                "warnings": texts(&cfg.warnings, "warning"), "errors": [],
            }),
            Exit::Ok,
        ),
        Err(e) => (
            serde_json::json!({
                "file": file, "ok": false, "warnings": [],
                "errors": texts(&e.diags, "error"),
            }),
            Exit::Usage,
        ),
    };
    writeln!(
        io.out,
        "{}",
        serde_json::to_string_pretty(&j).unwrap_or_default()
    )?;
    Ok(exit)
}

/// `cfg` (read from `path`) with its node names resolved through the SA of the client's
/// port; with `tell`, one line on `out` for each name.
fn resolved(
    client: &mut Client<Umad>,
    cfg: Config,
    path: &str,
    tell: bool,
    io: &mut Io<'_>,
) -> error::Result<Config> {
    if !names::needs_sa(&cfg) {
        return Ok(cfg);
    }
    let pol = *client.policy();
    let r =
        names::resolve(client.fabric_mut(), &cfg, path, pol.timeout, pol.retries).map_err(|e| {
            match e {
                NamesError::Sa(m) => Error::Fabric(m),
                NamesError::Config(c) => Error::Config(c),
            }
        })?;
    if tell {
        for (n, node) in &r.nodes {
            writeln!(
                io.out,
                "{path}:{}: {} is LID {:#06x} (port GUID {:#018x}, \"{}\")",
                n.line, n.name, node.lid, node.port_guid, node.desc
            )?;
        }
    }
    Ok(r.cfg)
}

/// Opens the EM's port with the options `d` given after the command (those
/// before it where not); `traps`: listen for traps too (see
/// [`Umad::open`]). The defaults of the options are here.
fn open(ctx: &Ctx, d: DeviceArgs, traps: bool, io: &mut Io<'_>) -> error::Result<Client<Umad>> {
    let g = d.or(&ctx.before);
    let sel = PortSelect {
        umad: g.umad,
        hca: g.hca,
        port: g.port,
    };
    let root = g.sysroot.unwrap_or_else(|| PathBuf::from("/"));
    let umad = Umad::open(&root, &sel, traps).map_err(|e| Error::Device(e.to_string()))?;
    let timeout = Duration::from_millis(u64::from(g.timeout_ms.unwrap_or(1000).max(1)));
    let policy = Policy {
        timeout,
        timeout_max: g.timeout_max_ms.map_or(timeout.saturating_mul(4), |ms| {
            Duration::from_millis(u64::from(ms))
        }),
        retries: g.retries.unwrap_or(3),
        pkey_index: g.pkey_index.unwrap_or(umad.port().mgmt_pkey_index),
        sl: g.sl.unwrap_or_else(|| umad.sm_sl()),
        mad_size: g.mad_size.unwrap_or(MadSizeArg::Full).into(),
        ..Policy::default()
    };
    if ctx.verbose > 0 {
        let p = umad.port();
        writeln!(
            io.err,
            "vnic-em: using {} ({} port {}), LID {:#06x}, SM LID {:#06x}; VEMA MADs on P_Key \
             index {}, SL {}, {:?} size; a request waits {} ms, up to {} ms, {} retries",
            p.name,
            p.ibdev,
            p.port,
            p.lid,
            p.sm_lid,
            policy.pkey_index,
            policy.sl,
            policy.mad_size,
            policy.timeout.as_millis(),
            policy.timeout_max.as_millis(),
            policy.retries
        )?;
    }
    Ok(Client::new(umad, policy))
}

/// For `show` and `counters`: the EM's port opened, the config `sel` names (if any) with its
/// node names resolved, and the vports `sel` picks.
fn selected(
    ctx: &Ctx,
    d: DeviceArgs,
    sel: SelectArgs,
    io: &mut Io<'_>,
) -> error::Result<(Client<Umad>, Option<Config>, Select)> {
    let cfg = match &sel.config {
        Some(f) => Some(load(ctx, f, io)?),
        None => None,
    };
    let s = Select {
        lids: sel.lid,
        vports: sel.vport,
        scan: sel.scan,
    };
    let mut client = open(ctx, d, false, io)?;
    let cfg = match (cfg, &sel.config) {
        (Some(c), Some(f)) => Some(resolved(&mut client, c, f, false, io)?),
        _ => None,
    };
    Ok((client, cfg, s))
}

/// A flag that SIGTERM and SIGINT set, for `watch` to stop between two
/// checks; a second signal ends the process at once, for a `watch` stuck
/// on a slow fabric.
fn stop_on_signals() -> error::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGTERM, SIGINT] {
        let r = flag::register_conditional_shutdown(sig, 1, Arc::clone(&stop))
            .and_then(|_| flag::register(sig, Arc::clone(&stop)));
        if let Err(e) = r {
            return Err(Error::Device(format!(
                "watch: cannot handle signal {sig}: {e}"
            )));
        }
    }
    Ok(stop)
}

fn run(cli: Cli, io: &mut Io<'_>) -> error::Result {
    let ctx = &Ctx {
        before: cli.device,
        verbose: cli.verbose,
    };
    match cli.command {
        Command::Validate { file, json } => validate(ctx, &file, json, io),
        Command::Apply {
            file,
            dry_run,
            check,
            full_tables,
            json,
            diff,
            window,
            device,
        } => {
            let cfg = load(ctx, &file, io)?;
            let mut client = match open(ctx, device, false, io) {
                Ok(c) => c,
                // A dry run shows what it can without a fabric; --check and
                // --diff are about the fabric's state, and need it.
                Err(Error::Device(why)) if dry_run && !check && !diff => {
                    return commands::apply_offline(&cfg, &why, json, io);
                }
                Err(e) => return Err(e),
            };
            let cfg = resolved(&mut client, cfg, &file, !json, io)?;
            client.set_window(window.into());
            let opts = ApplyOpts {
                dry_run,
                check,
                full_tables,
                json,
                diff,
            };
            let exit = commands::apply(&mut client, &cfg, opts, io)?;
            if dry_run || check || diff {
                return Ok(exit);
            }
            commands::join_groups(&mut client, &cfg, json, exit, io)
        }
        Command::Show {
            sel,
            json,
            no_counters,
            device,
        } => {
            let (mut client, cfg, s) = selected(ctx, device, sel, io)?;
            commands::show(&mut client, cfg.as_ref(), &s, json, !no_counters, io)
        }
        Command::Counters {
            sel,
            json,
            prometheus,
            output,
            device,
        } => {
            let (mut client, cfg, s) = selected(ctx, device, sel, io)?;
            let format = match (json, prometheus) {
                (true, _) => CountersFormat::Json,
                (_, true) => CountersFormat::Prometheus,
                _ => CountersFormat::Text,
            };
            let opts = CountersOpts { format, output };
            commands::counters_with(&mut client, cfg.as_ref(), &s, &opts, io)
        }
        Command::Traps {
            mut arm,
            config,
            count,
            wait_ms,
            timeout,
            json,
            device,
        } => {
            let wait = match (wait_ms, timeout) {
                (Some(ms), _) => Some(Duration::from_millis(ms)),
                (None, Some(t)) if t.is_finite() && t >= 0.0 => {
                    let ms = (t * 1000.0).round();
                    writeln!(
                        io.err,
                        "{}",
                        legacy::warning(&format!("--timeout {t}"), &format!("--wait-ms {ms}"))
                    )?;
                    Some(Duration::from_secs_f64(t.min(1e9)))
                }
                (None, Some(t)) => {
                    return Err(Error::Usage(format!("traps: bad --timeout {t}")));
                }
                (None, None) => None,
            };
            let mut trap_sl = 0;
            let cfg = match &config {
                Some(f) => Some((load(ctx, f, io)?, f)),
                None => None,
            };
            let mut client = open(ctx, device, true, io)?;
            if let Some((cfg, f)) = cfg {
                let cfg = resolved(&mut client, cfg, f, false, io)?;
                trap_sl = cfg.em.trap_sl;
                for p in &cfg.vports {
                    if !arm.contains(&p.lid) {
                        arm.push(p.lid);
                    }
                }
            }
            let opts = TrapOpts {
                arm,
                trap_sl,
                count,
                timeout: wait,
                json,
            };
            commands::traps(&mut client, &opts, io)
        }
        Command::Watch {
            config,
            interval_ms,
            interval,
            full_tables,
            window,
            device,
        } => {
            let interval = match interval {
                Some(i) => {
                    let old = format!("--interval {}", i.as_secs_f64());
                    let new = format!("--interval-ms {}", i.as_millis());
                    writeln!(io.err, "{}", legacy::warning(&old, &new))?;
                    i
                }
                None => Duration::from_millis(interval_ms),
            };
            let cfg = load(ctx, &config, io)?;
            let stop = stop_on_signals()?;
            let mut client = open(ctx, device, true, io)?;
            client.set_window(window.into());
            let opts = WatchOpts {
                interval,
                full_tables,
                config_path: config.clone(),
                ..WatchOpts::default()
            };
            watch::watch(&mut client, &cfg, &opts, &stop, io)
        }
        Command::Discover {
            all,
            json,
            config,
            device,
        } => {
            let mut client = open(ctx, device, false, io)?;
            let format = match (json, config) {
                (true, _) => DiscoverFormat::Json,
                (_, true) => DiscoverFormat::Config,
                _ => DiscoverFormat::Text,
            };
            commands::discover(&mut client, &DiscoverOpts { all, format }, io)
        }
        Command::Set { opts, device } => {
            if opts
                .unknown_ucast_dlids
                .as_ref()
                .is_some_and(|l| l.len() > 16)
            {
                return Err(Error::Usage("set: at most 16 unknown unicast DLIDs".into()));
            }
            let mut client = open(ctx, device, false, io)?;
            commands::set(&mut client, &opts, io)
        }
        Command::Raw {
            lid,
            set,
            attr,
            attr_mod,
            data,
            len,
            json,
            device,
        } => {
            let req = RawReq {
                lid,
                set,
                attr_id: attr,
                attr_mod,
                data: data.0,
                len,
            };
            let mut client = open(ctx, device, false, io)?;
            commands::raw_as(&mut client, &req, json, io)
        }
    }
}

fn main() -> ExitCode {
    let (args, warnings) = legacy::rewrite(std::env::args_os().collect());
    for w in &warnings {
        eprintln!("{w}");
    }
    let parsed = Cli::command()
        .subcommand(docs::gen_docs_command())
        .try_get_matches_from(args)
        .and_then(|m| {
            if let Some(("gen-docs", sub)) = m.subcommand() {
                return Ok(Err(sub
                    .get_one::<PathBuf>("dir")
                    .cloned()
                    .unwrap_or_default()));
            }
            Cli::from_arg_matches(&m).map(Ok)
        });
    let cli = match parsed {
        Ok(Ok(c)) => c,
        Ok(Err(dir)) => return docs::gen_docs(Cli::command(), &dir).into(),
        Err(e) => {
            let _ = e.print();
            if let Some(tip) = cli::command_tip(&e, &Cli::command()) {
                eprintln!("\n{tip}");
            }
            let code = if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            };
            return code.into();
        }
    };
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut out = stdout.lock();
    let mut err = stderr.lock();
    let mut io = Io {
        out: &mut out,
        err: &mut err,
    };
    // The last of the output is flushed as part of the command: a reader
    // gone by then is a broken pipe like any other.
    let r = run(cli, &mut io).and_then(|code| Ok(io.out.flush().map(|()| code)?));
    error::finish(r, io.err).into()
}
