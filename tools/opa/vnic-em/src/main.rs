// SPDX-License-Identifier: GPL-2.0

//! `vnic-em`: the command line.

#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

use vnic_em::args;
use vnic_em::client::{Client, Policy, Window};
use vnic_em::commands::watch::{self, WatchOpts};
use vnic_em::commands::{
    self, ApplyOpts, CountersFormat, CountersOpts, DiscoverFormat, DiscoverOpts, Io, RawReq,
    Select, SetOpts, TrapOpts,
};
use vnic_em::config::{self, Config};
use vnic_em::docs;
use vnic_em::error::{self, Error, Exit};
use vnic_em::mad::MadSize;
use vnic_em::names::{self, NamesError};
use vnic_em::umad::{PortSelect, Umad};

const EXIT_CODES: &str = "\
Exit codes:
  0  success (apply: the fabric matches the config; watch: stopped by
     SIGTERM or SIGINT)
  1  usage or config error; nothing was sent
  2  fabric error (timeout, MAD status, bad response); nothing was
     changed
  3  partial apply: some Sets were applied before an error
  4  local error: no umad device, or it cannot be opened or registered
     (watch: or it fails while watching)
  5  apply --check: the fabric differs from the config";

/// Ethernet Manager for Omni-Path VNIC: configures virtual Ethernet
/// switches and ports over VEMA MADs.
#[derive(Parser, Debug)]
#[command(name = "vnic-em", version, after_help = EXIT_CODES)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Debug)]
struct Global {
    /// umad device of the EM's port (umad0 or /dev/infiniband/umad0)
    #[arg(short = 'd', long, global = true, value_name = "DEV")]
    umad: Option<String>,
    /// RDMA device of the EM's port (e.g. hfi1_0); default: the first
    /// ACTIVE port
    #[arg(short = 'C', long, global = true, value_name = "NAME")]
    hca: Option<String>,
    /// Port number of the EM's port
    #[arg(short = 'P', long, global = true, value_name = "N")]
    port: Option<u8>,
    /// Time to wait for the response to a request, in milliseconds; each
    /// retry waits twice as long as the attempt before it, up to
    /// --timeout-max-ms
    #[arg(long, global = true, default_value_t = 1000, value_name = "MS")]
    timeout_ms: u32,
    /// The longest wait of one attempt as retries back off, in
    /// milliseconds; default: 4 times --timeout-ms (no more than
    /// --timeout-ms: no back-off)
    #[arg(long, global = true, value_name = "MS")]
    timeout_max_ms: Option<u32>,
    /// Retries of a request that got no response
    #[arg(long, global = true, default_value_t = 3, value_name = "N")]
    retries: u32,
    /// P_Key index to send MADs with; default: the index of 0xffff (else
    /// 0x7fff) in the EM port's P_Key table
    #[arg(long, global = true, value_name = "I")]
    pkey_index: Option<u16>,
    /// Service level to send MADs with
    #[arg(long, global = true, default_value_t = 0, value_name = "SL")]
    sl: u8,
    /// Size of the request MADs
    #[arg(long, global = true, value_enum, default_value_t = MadSizeArg::Full, value_name = "SIZE")]
    mad_size: MadSizeArg,
    /// Root of the sysfs and /dev trees (testing aid)
    #[arg(long, global = true, hide = true, default_value = "/")]
    sysroot: PathBuf,
}

/// `--mad-size`: how big the request MADs are.
#[derive(ValueEnum, Clone, Copy, Debug)]
enum MadSizeArg {
    /// The 40-byte vendor MAD header and the size of the attribute the
    /// request carries, as opa-fm sends them
    Trimmed,
    /// Whole 2048-byte OPA MADs, the data zero-padded
    Full,
}

impl From<MadSizeArg> for MadSize {
    fn from(a: MadSizeArg) -> Self {
        match a {
            MadSizeArg::Trimmed => MadSize::Trimmed,
            MadSizeArg::Full => MadSize::Full,
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Make the fabric match a config file: read each vport, print the
    /// Sets needed, send them
    #[command(after_help = EXIT_CODES)]
    Apply {
        /// The fabric config (TOML)
        file: String,
        /// Print the plan, send no Set
        #[arg(short = 'n', long)]
        dry_run: bool,
        /// Print the plan, send no Set, exit 5 if anything differs (reads
        /// MAC tables in full)
        #[arg(long)]
        check: bool,
        /// Read MAC tables even when their digest matches the config
        #[arg(long)]
        full_tables: bool,
        /// Print the plan and result as JSON
        #[arg(long)]
        json: bool,
        /// Print exactly the Sets apply would send, each with the values
        /// it changes (old -> new, the old as read from the fabric); send
        /// none
        #[arg(long, conflicts_with = "json")]
        diff: bool,
        #[command(flatten)]
        window: WindowArgs,
    },
    /// List the fabric's node ports a VNIC driver serves, from the subnet
    /// administrator: port GUID, LID, node description
    #[command(after_help = EXIT_CODES)]
    Discover {
        /// Every port, not only those a VNIC driver serves
        #[arg(long)]
        all: bool,
        /// Print JSON, one object a port
        #[arg(long, conflicts_with = "config")]
        json: bool,
        /// Print a starting config: a vport on each port, named by GUID
        #[arg(long)]
        config: bool,
    },
    /// Check a config file without touching the fabric
    #[command(after_help = EXIT_CODES)]
    Validate {
        /// The fabric config (TOML)
        file: String,
    },
    /// Get every attribute of each vport and print it
    #[command(after_help = EXIT_CODES)]
    Show {
        #[command(flatten)]
        sel: SelectArgs,
        /// Print JSON
        #[arg(long)]
        json: bool,
        /// Leave out the counters
        #[arg(long)]
        no_counters: bool,
    },
    /// Print the summary and error counters of each vport
    #[command(after_help = EXIT_CODES)]
    Counters {
        #[command(flatten)]
        sel: SelectArgs,
        /// Print JSON
        #[arg(long)]
        json: bool,
        /// Print the Prometheus text format (counters
        /// opa_vnic_vport_<name>_total, labels lid, vport, vesw, mac)
        #[arg(long, conflicts_with = "json")]
        prometheus: bool,
        /// Write to FILE instead of stdout, replacing it at once (a
        /// temporary file renamed over it), as a node exporter's textfile
        /// collector wants
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Listen for traps (MAC list and link changes) and print them
    #[command(after_help = EXIT_CODES)]
    Traps {
        /// Point the trap LID of this node port at the EM first
        /// (repeatable)
        #[arg(long, value_name = "LID", value_parser = args::LID)]
        arm: Vec<u16>,
        /// Arm every node port of this config
        #[arg(short = 'c', long, value_name = "FILE")]
        config: Option<String>,
        /// Exit after N traps (exit 2 if --timeout comes first)
        #[arg(long, value_name = "N")]
        count: Option<u32>,
        /// Exit after this many seconds
        #[arg(long, value_name = "SECS")]
        timeout: Option<f64>,
        /// One JSON object per line
        #[arg(long)]
        json: bool,
    },
    /// Keep the fabric as a config says, as a service
    ///
    /// Checks every node port of the config at start, at each poll and
    /// after traps, and re-applies what differs (a node rebooted, a driver
    /// reloaded), one line per vport, until SIGTERM or SIGINT.
    #[command(after_help = EXIT_CODES)]
    Watch {
        /// The fabric config (TOML)
        #[arg(short = 'c', long, value_name = "FILE")]
        config: String,
        /// Seconds between two polls of every node port
        #[arg(long, value_name = "SECS", default_value = "10", value_parser = args::interval)]
        interval: Duration,
        /// Read MAC tables even when their digest matches the config
        #[arg(long)]
        full_tables: bool,
        #[command(flatten)]
        window: WindowArgs,
    },
    /// One-off changes to one vport (or to a node port's trap settings)
    #[command(after_help = EXIT_CODES)]
    Set(SetOpts),
    /// Send one VEMA Get or Set and print the answer as is: its MAD
    /// status and its data in hex (trailing zero bytes left out), to
    /// compare two agents byte by byte. A non-zero status is printed, not
    /// an error.
    #[command(after_help = EXIT_CODES)]
    Raw {
        /// Node port LID
        #[arg(short = 'l', long, value_name = "LID", value_parser = args::LID)]
        lid: u16,
        /// Send a Set instead of a Get
        #[arg(long)]
        set: bool,
        /// Attribute id
        #[arg(long, value_name = "ID", value_parser = args::int::<u16, 0, { u16::MAX as u64 }>)]
        attr: u16,
        /// Attribute modifier (its low byte is the vport)
        #[arg(long = "mod", value_name = "N", value_parser = args::int::<u32, 0, { u32::MAX as u64 }>, default_value = "0")]
        attr_mod: u32,
        /// The request's data, in hex
        #[arg(long, value_name = "HEX", value_parser = args::hex, default_value = "")]
        data: args::HexData,
        /// Send exactly N bytes, the 24-byte MAD header included (24 to
        /// 2048), whatever --mad-size says: the data is zero-padded or cut
        /// to fit (a test aid; umad refuses less than the 40-byte vendor
        /// header)
        #[arg(long, value_name = "N", value_parser = args::mad_len)]
        len: Option<usize>,
    },
}

/// How many MADs `apply` and `watch` keep in flight.
#[derive(Args, Debug, Clone, Copy)]
struct WindowArgs {
    /// Requests in flight to one node port (1 to 64); the Sets of one
    /// vport always go one at a time, in order
    #[arg(long, value_name = "N", default_value_t = Window::default().per_lid,
          value_parser = args::int::<usize, 1, 64>)]
    window: usize,
    /// Requests in flight in all (1 to 1024); 1 sends one MAD at a time
    #[arg(long, value_name = "N", default_value_t = Window::default().global,
          value_parser = args::int::<usize, 1, 1024>)]
    max_in_flight: usize,
}

impl From<WindowArgs> for Window {
    fn from(a: WindowArgs) -> Self {
        Window {
            per_lid: a.window,
            global: a.max_in_flight,
        }
    }
}

#[derive(Args, Debug)]
struct SelectArgs {
    /// Read the vports of this config
    #[arg(short = 'c', long, value_name = "FILE")]
    config: Option<String>,
    /// Node port LID (repeatable)
    #[arg(short = 'l', long, value_name = "LID", value_parser = args::LID)]
    lid: Vec<u16>,
    /// Virtual port number (repeatable)
    #[arg(short = 'v', long, value_name = "N")]
    vport: Vec<u8>,
    /// Without a config or --vport, probe vports 0..N of each LID
    #[arg(long, default_value_t = 16, value_name = "N")]
    scan: u8,
}

/// Loads a config; its warnings go to stderr, before anything is sent.
fn load(path: &str, io: &mut Io<'_>) -> error::Result<Config> {
    let cfg = config::load(path)?;
    for w in &cfg.warnings {
        writeln!(io.err, "{}", w.text(path, "warning"))?;
    }
    Ok(cfg)
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
    if cfg.names.is_empty() {
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

/// Opens the EM's port; `traps`: listen for traps too (see [`Umad::open`]).
fn open(g: &Global, traps: bool) -> error::Result<Client<Umad>> {
    let sel = PortSelect {
        umad: g.umad.clone(),
        hca: g.hca.clone(),
        port: g.port,
    };
    let umad = Umad::open(&g.sysroot, &sel, traps).map_err(|e| Error::Device(e.to_string()))?;
    let timeout = Duration::from_millis(u64::from(g.timeout_ms.max(1)));
    let policy = Policy {
        timeout,
        timeout_max: g.timeout_max_ms.map_or(timeout.saturating_mul(4), |ms| {
            Duration::from_millis(u64::from(ms))
        }),
        retries: g.retries,
        pkey_index: g.pkey_index.unwrap_or(umad.port().mgmt_pkey_index),
        sl: g.sl,
        mad_size: g.mad_size.into(),
        ..Policy::default()
    };
    Ok(Client::new(umad, policy))
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
    let g = &cli.global;
    match cli.command {
        Command::Validate { file } => {
            let cfg = load(&file, io)?;
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
            Ok(Exit::Ok)
        }
        Command::Apply {
            file,
            dry_run,
            check,
            full_tables,
            json,
            diff,
            window,
        } => {
            let cfg = load(&file, io)?;
            let mut client = open(g, false)?;
            let cfg = resolved(&mut client, cfg, &file, !json, io)?;
            client.set_window(window.into());
            let opts = ApplyOpts {
                dry_run,
                check,
                full_tables,
                json,
                diff,
            };
            commands::apply(&mut client, &cfg, opts, io)
        }
        Command::Show {
            sel,
            json,
            no_counters,
        } => {
            let cfg = match &sel.config {
                Some(f) => Some(load(f, io)?),
                None => None,
            };
            let s = Select {
                lids: sel.lid,
                vports: sel.vport,
                scan: sel.scan,
            };
            let mut client = open(g, false)?;
            let cfg = match (cfg, &sel.config) {
                (Some(c), Some(f)) => Some(resolved(&mut client, c, f, false, io)?),
                _ => None,
            };
            commands::show(&mut client, cfg.as_ref(), &s, json, !no_counters, io)
        }
        Command::Counters {
            sel,
            json,
            prometheus,
            output,
        } => {
            let cfg = match &sel.config {
                Some(f) => Some(load(f, io)?),
                None => None,
            };
            let s = Select {
                lids: sel.lid,
                vports: sel.vport,
                scan: sel.scan,
            };
            let mut client = open(g, false)?;
            let cfg = match (cfg, &sel.config) {
                (Some(c), Some(f)) => Some(resolved(&mut client, c, f, false, io)?),
                _ => None,
            };
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
            timeout,
            json,
        } => {
            let mut trap_sl = 0;
            let cfg = match &config {
                Some(f) => Some((load(f, io)?, f)),
                None => None,
            };
            let mut client = open(g, true)?;
            if let Some((cfg, f)) = cfg {
                let cfg = resolved(&mut client, cfg, f, false, io)?;
                trap_sl = cfg.em.trap_sl;
                for p in &cfg.vports {
                    if !arm.contains(&p.lid) {
                        arm.push(p.lid);
                    }
                }
            }
            let timeout = match timeout {
                Some(t) if t.is_finite() && t >= 0.0 => Some(Duration::from_secs_f64(t.min(1e9))),
                Some(t) => return Err(Error::Usage(format!("traps: bad --timeout {t}"))),
                None => None,
            };
            let opts = TrapOpts {
                arm,
                trap_sl,
                count,
                timeout,
                json,
            };
            commands::traps(&mut client, &opts, io)
        }
        Command::Watch {
            config,
            interval,
            full_tables,
            window,
        } => {
            let cfg = load(&config, io)?;
            let stop = stop_on_signals()?;
            let mut client = open(g, true)?;
            client.set_window(window.into());
            let opts = WatchOpts {
                interval,
                full_tables,
                config_path: config.clone(),
                ..WatchOpts::default()
            };
            watch::watch(&mut client, &cfg, &opts, &stop, io)
        }
        Command::Discover { all, json, config } => {
            let mut client = open(g, false)?;
            let format = match (json, config) {
                (true, _) => DiscoverFormat::Json,
                (_, true) => DiscoverFormat::Config,
                _ => DiscoverFormat::Text,
            };
            commands::discover(&mut client, &DiscoverOpts { all, format }, io)
        }
        Command::Set(opts) => {
            if opts
                .unknown_ucast_dlids
                .as_ref()
                .is_some_and(|l| l.len() > 16)
            {
                return Err(Error::Usage("set: at most 16 unknown unicast DLIDs".into()));
            }
            let mut client = open(g, false)?;
            commands::set(&mut client, &opts, io)
        }
        Command::Raw {
            lid,
            set,
            attr,
            attr_mod,
            data,
            len,
        } => {
            let req = RawReq {
                lid,
                set,
                attr_id: attr,
                attr_mod,
                data: data.0,
                len,
            };
            let mut client = open(g, false)?;
            commands::raw(&mut client, &req, io)
        }
    }
}

fn main() -> ExitCode {
    let parsed = Cli::command()
        .subcommand(docs::gen_docs_command())
        .try_get_matches()
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
