// SPDX-License-Identifier: GPL-2.0

//! The command line of `vnic-em`: its options and commands, as clap reads them, and the
//! exit codes their help lists. `main` runs what they say.

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

use vnic_em::args;
use vnic_em::client::Window;
use vnic_em::commands::SetOpts;
use vnic_em::mad::MadSize;

/// The exit codes, as every command's help lists them.
macro_rules! exit_codes {
    () => {
        "\
Exit codes:
  0  success (apply: the fabric matches the config; watch: stopped by
     SIGTERM or SIGINT)
  1  usage or config error; nothing was sent
  2  fabric error (timeout, MAD status, bad response); nothing was
     changed
  3  partial apply: some Sets were applied before an error
  4  local error: no umad device, or it cannot be opened or registered
     (watch: or it fails while watching)
  5  apply --check: the fabric differs from the config
  6  apply: the vports match the config, but a port could not join its
     vesw's multicast group (broadcast will not reach it)"
    };
}

pub(crate) const EXIT_CODES: &str = exit_codes!();

/// The exit codes and the admin's recipe for a fabric run by opa-fm, after `vnic-em --help`
/// and in the man page `vnic-em(1)`.
const MAIN_AFTER_LONG: &str = concat!(
    exit_codes!(),
    "

On a fabric run by opa-fm (Debian's opa-fm: SM, SA and PM):
  - Run vnic-em on a port that is a full member of the Admin vFabric
    (P_Key 0xffff): with the shipped opafm.xml, the SM's own port; else
    add its host to the Admin vFabric as a <Member>. On a limited
    member's port vnic-em stops at once: \"add this port to the Admin
    vFabric\".
  - The SM needs /var/lib/opa-fm, which its package does not make (a
    tmpfiles.d line: d /var/lib/opa-fm 0755 root root -).
  - A vesw's pkey must be one every VNIC port is a full member of: the
    shipped Default vFabric's 0x8001 is. Its SCs must map to VLs of the
    VNIC ports (SL 0 -> SC 0 in the Default vFabric).
  - Broadcast goes to the MLID of an SA multicast group (default: the
    Default vFabric's IPv4 broadcast group
    0xff12401b80010000:0x00000000ffffffff, which opafm.xml pre-creates);
    apply and each poll of watch join the VNIC ports to it, so that the
    SM's multicast tables reach them.
  - Name node ports by GUID or node description: LIDs are the SM's, and
    watch follows them when they change (an SM restart, a re-cabled
    node).
The config file's reference: fabric.toml(5)."
);

/// Ethernet Manager for Omni-Path VNIC: configures virtual Ethernet
/// switches and ports over VEMA MADs.
#[derive(Parser, Debug)]
#[command(
    name = "vnic-em",
    version,
    after_help = EXIT_CODES,
    after_long_help = MAIN_AFTER_LONG,
    // -h picks the HFI, as in opa-ff's tools; help is --help alone.
    disable_help_flag = true
)]
pub(crate) struct Cli {
    /// The port options given before the command; those after it win.
    #[command(flatten)]
    pub(crate) device: DeviceArgs,
    /// Say more on stderr: the port and settings used, the config read
    /// (repeat for more)
    #[arg(short = 'v', long, global = true, action = ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Print help
    #[arg(long, global = true, action = ArgAction::Help)]
    help: Option<bool>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The EM's port and how MADs are sent: the options of every command that
/// opens a port, and of none other, so that `validate --help` does not
/// list them. Given before the command too (`vnic-em -d umad0 show`);
/// hence no defaults here, but in [`DeviceArgs::or`]'s caller.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct DeviceArgs {
    /// umad device of the EM's port (umad0 or /dev/infiniband/umad0)
    #[arg(short = 'd', long, value_name = "DEV")]
    pub(crate) umad: Option<String>,
    /// RDMA device (HFI) of the EM's port, e.g. hfi1_0: -h as opa-ff's
    /// tools, -C as infiniband-diags; default: the first ACTIVE port
    #[arg(
        short = 'h',
        long = "hfi",
        visible_short_alias = 'C',
        visible_alias = "hca",
        value_name = "NAME"
    )]
    pub(crate) hca: Option<String>,
    /// Port number of the EM's port: -p as opa-ff's tools, -P as
    /// infiniband-diags
    #[arg(short = 'p', long, visible_short_alias = 'P', value_name = "N")]
    pub(crate) port: Option<u8>,
    /// Time to wait for the response to a request, in milliseconds
    /// (default 1000); each retry waits twice as long as the attempt
    /// before it, up to --timeout-max-ms
    #[arg(long, value_name = "MS")]
    pub(crate) timeout_ms: Option<u32>,
    /// The longest wait of one attempt as retries back off, in
    /// milliseconds; default: 4 times --timeout-ms (no more than
    /// --timeout-ms: no back-off)
    #[arg(long, value_name = "MS")]
    pub(crate) timeout_max_ms: Option<u32>,
    /// Retries of a request that got no response (default 3)
    #[arg(long, value_name = "N")]
    pub(crate) retries: Option<u32>,
    /// P_Key index to send VEMA MADs with; default: the index of 0xffff
    /// (else 0x7fff) in the EM port's P_Key table (SA MADs always go on it)
    #[arg(long, value_name = "I")]
    pub(crate) pkey_index: Option<u16>,
    /// Service level to send VEMA MADs with; default: the EM port's SM SL
    /// (sysfs sm_sl), as opa-ff's tools send management MADs (SA MADs
    /// always go on it)
    #[arg(long, value_name = "SL")]
    pub(crate) sl: Option<u8>,
    /// Size of the request MADs (default: full)
    #[arg(long, value_enum, value_name = "SIZE")]
    pub(crate) mad_size: Option<MadSizeArg>,
    /// Root of the sysfs and /dev trees (testing aid)
    #[arg(long, hide = true)]
    pub(crate) sysroot: Option<PathBuf>,
}

impl DeviceArgs {
    /// These options, each taken from `before` (given before the command)
    /// where not given here.
    pub(crate) fn or(self, before: &DeviceArgs) -> DeviceArgs {
        let b = before.clone();
        DeviceArgs {
            umad: self.umad.or(b.umad),
            hca: self.hca.or(b.hca),
            port: self.port.or(b.port),
            timeout_ms: self.timeout_ms.or(b.timeout_ms),
            timeout_max_ms: self.timeout_max_ms.or(b.timeout_max_ms),
            retries: self.retries.or(b.retries),
            pkey_index: self.pkey_index.or(b.pkey_index),
            sl: self.sl.or(b.sl),
            mad_size: self.mad_size.or(b.mad_size),
            sysroot: self.sysroot.or(b.sysroot),
        }
    }
}

/// `--mad-size`: how big the request MADs are.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub(crate) enum MadSizeArg {
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
pub(crate) enum Command {
    /// Make the fabric match a config file: read each vport, print the
    /// Sets needed, send them
    #[command(after_help = EXIT_CODES, disable_help_flag = true)]
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
        #[arg(short = 'j', long)]
        json: bool,
        /// Print exactly the Sets apply would send, each with the values
        /// it changes (old -> new, the old as read from the fabric); send
        /// none
        #[arg(long, conflicts_with = "json")]
        diff: bool,
        #[command(flatten)]
        window: WindowArgs,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// List the fabric's Active HFI ports a VNIC driver serves, from the
    /// subnet administrator: port GUID, LID, node description (switches
    /// and ports not yet Active left out)
    #[command(after_help = EXIT_CODES, disable_help_flag = true)]
    Discover {
        /// Every Active HFI port, not only those a VNIC driver serves
        #[arg(long)]
        all: bool,
        /// Print JSON, one object a port
        #[arg(short = 'j', long, conflicts_with = "config")]
        json: bool,
        /// Print a starting config: a vport on each port, named by GUID
        #[arg(long)]
        config: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Check a config file without touching the fabric
    #[command(after_help = EXIT_CODES, disable_help_flag = true)]
    Validate {
        /// The fabric config (TOML)
        file: String,
        /// Print the result as JSON: the counts, warnings and errors
        #[arg(short = 'j', long)]
        json: bool,
    },
    /// Get every attribute of each vport and print it
    #[command(after_help = EXIT_CODES, disable_help_flag = true)]
    Show {
        #[command(flatten)]
        sel: SelectArgs,
        /// Print JSON
        #[arg(short = 'j', long)]
        json: bool,
        /// Leave out the counters
        #[arg(long)]
        no_counters: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Print the summary and error counters of each vport
    #[command(after_help = EXIT_CODES, disable_help_flag = true)]
    Counters {
        #[command(flatten)]
        sel: SelectArgs,
        /// Print JSON
        #[arg(short = 'j', long)]
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
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Listen for traps (MAC list and link changes) and print them
    #[command(after_help = EXIT_CODES, disable_help_flag = true)]
    Traps {
        /// Point the trap LID of this node port at the EM first
        /// (repeatable)
        #[arg(long, value_name = "LID", value_parser = args::LID)]
        arm: Vec<u16>,
        /// Arm every node port of this config
        #[arg(short = 'c', long, value_name = "FILE")]
        config: Option<String>,
        /// Exit after N traps (exit 2 if --wait-ms comes first)
        #[arg(long, value_name = "N")]
        count: Option<u32>,
        /// Exit after this many milliseconds
        #[arg(long, value_name = "MS", conflicts_with = "timeout")]
        wait_ms: Option<u64>,
        /// Exit after this many seconds: the old spelling of --wait-ms,
        /// until the next release
        #[arg(long, value_name = "SECS", hide = true)]
        timeout: Option<f64>,
        /// One JSON object per line
        #[arg(short = 'j', long)]
        json: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Keep the fabric as a config says, as a service
    ///
    /// Checks every node port of the config at start, at each poll and
    /// after traps, and re-applies what differs (a node rebooted, a driver
    /// reloaded), one line per vport, until SIGTERM or SIGINT.
    #[command(after_help = EXIT_CODES, disable_help_flag = true)]
    Watch {
        /// The fabric config (TOML)
        #[arg(short = 'c', long, value_name = "FILE")]
        config: String,
        /// Milliseconds between two polls of every node port (100 to
        /// 86400000)
        #[arg(long, value_name = "MS", default_value = "10000", conflicts_with = "interval",
              value_parser = args::int::<u64, 100, 86_400_000>)]
        interval_ms: u64,
        /// Seconds between two polls: the old spelling of --interval-ms,
        /// until the next release
        #[arg(long, value_name = "SECS", hide = true, value_parser = args::interval)]
        interval: Option<Duration>,
        /// Read MAC tables even when their digest matches the config
        #[arg(long)]
        full_tables: bool,
        #[command(flatten)]
        window: WindowArgs,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// One-off changes to one vport (or to a node port's trap settings)
    #[command(after_help = EXIT_CODES, disable_help_flag = true)]
    Set {
        #[command(flatten)]
        opts: SetOpts,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Send one VEMA Get or Set and print the answer as is: its MAD
    /// status and its data in hex (trailing zero bytes left out), to
    /// compare two agents byte by byte. A non-zero status is printed, not
    /// an error.
    #[command(after_help = EXIT_CODES, disable_help_flag = true)]
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
        /// Print the answer as JSON: status and data
        #[arg(short = 'j', long)]
        json: bool,
        #[command(flatten)]
        device: DeviceArgs,
    },
}

/// For a mistyped command (`vnic-em aply`): the command it is nearest,
/// said as a line to print after clap's error, which does not say it
/// (clap's own suggestions would pull in another crate).
pub(crate) fn command_tip(e: &clap::Error, cmd: &clap::Command) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::InvalidSubcommand {
        return None;
    }
    let Some(ContextValue::String(typed)) = e.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    let names: Vec<&str> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name())
        .collect();
    vnic_em::suggest::did_you_mean(typed, &names).map(|s| format!("  tip: did you mean `{s}`?"))
}

/// How many MADs `apply` and `watch` keep in flight.
#[derive(Args, Debug, Clone, Copy)]
pub(crate) struct WindowArgs {
    /// Requests in flight to one node port (1 to 64); the Sets of one
    /// vport always go one at a time, in order
    #[arg(long, value_name = "N", default_value_t = Window::default().per_lid,
          value_parser = args::int::<usize, 1, 64>)]
    pub(crate) window: usize,
    /// Requests in flight in all (1 to 1024); 1 sends one MAD at a time
    #[arg(long, value_name = "N", default_value_t = Window::default().global,
          value_parser = args::int::<usize, 1, 1024>)]
    pub(crate) max_in_flight: usize,
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
pub(crate) struct SelectArgs {
    /// Read the vports of this config
    #[arg(short = 'c', long, value_name = "FILE")]
    pub(crate) config: Option<String>,
    /// Node port LID (repeatable)
    #[arg(short = 'l', long, value_name = "LID", value_parser = args::LID)]
    pub(crate) lid: Vec<u16>,
    /// Virtual port number (repeatable; -v N until the next release)
    #[arg(long, value_name = "N")]
    pub(crate) vport: Vec<u8>,
    /// Without a config or --vport, probe vports 0 to N-1 of each LID
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub(crate) scan: u8,
}
