// SPDX-License-Identifier: GPL-2.0-only
// Imports sim.rs and is imported by it: its files act on the Sim, which owns them per device.

//! The run-time interface, in debugfs (`/sys/kernel/debug/opasim/`):
//!
//! - `devices`: reading lists the devices (`opasim0 index 0 lids 1`); writing
//!   `add NPORTS [LID...]` adds a device, `del NAME` removes one.
//! - `<device>/port<N>/lid`, `pkeys`, `state`: read or write a port's LID (1 to 0xbfff, unique
//!   on the fabric), P_Key table (up to 16 P_Keys, hexadecimal, separated by spaces) and state
//!   (written `active` or `down`; read as the SMA leaves it too: `down`, `init`, `armed` or
//!   `active`). The subnet manager sets the same state through the SMA ([`crate::sma`]).
//! - `<device>/port<N>/capabilities` (read only): the port's capability masks as its users
//!   set them with `ib_modify_port()`, `cap_mask 0x...` (InfiniBand) and `cap_mask3 0x...`
//!   (OPA; an OPA VNIC driver sets IsEthOnFabricSupported, `0x2000`, while it serves the port).
//! - `<device>/port<N>/sc2vl`: the port's SC-to-VL send table, which the HFI checks every VNIC
//!   packet against (see [`crate::integrity`]): reading shows the 32 VLs of SC0 to SC31;
//!   writing `SC:VL` pairs changes those entries, 32 VLs replace the whole table, `default`
//!   restores hfi1's table after reset. A VL is 0 to 7 or 15.
//! - `<device>/port<N>/vl_mtu`: the MTU of each data VL, which the HFI checks every VNIC
//!   packet against: 8 MTUs, VL0 first (hfi1's 10240 after reset); writing `VL:MTU` pairs
//!   changes those VLs, 8 MTUs replace them all, `default` restores 10240.
//! - `<device>/port<N>/vnic_drops` (read only): the VNIC packets the HFI's integrity checks
//!   dropped on the port, one `reason count` line per reason.
//! - `<device>/port<N>/vnic_sdma` (read only): the SDMA rings of the port's VNIC netdevs,
//!   one `counter value` line each (see [`crate::port::SdmaCounters`]).
//! - `<device>/port<N>/rx_errors`, `fail_open`, `fail_set_id`, `fail_mad_send`,
//!   `vnic_tx_hold`: the faults injected on the port (see [`crate::faults_ctl`]).
//!
//! A bad value is refused with `EINVAL` (or `EEXIST` for a LID in use, `ENODEV` for an unknown
//! device), a line in the kernel log says why, and nothing changes.

use crate::{
    faults_ctl::{self, Knob},
    integrity::{TxDrop, DEFAULT_SC2VL, DEFAULT_VL_MTUS, NUM_DATA_VLS, NUM_SC, OPA_MTUS, VL15},
    port::{Capabilities, Counters, Port, PKEY_TABLE_LEN},
    sim::{self, Change, Sim},
};
use core::fmt::Write;
use kernel::{
    c_str,
    debugfs::{Dir, File, FileOps, Text},
    debugfs_file_operations, fmt,
    prelude::*,
    rdma::provider::PortState,
    str::CString,
    sync::Arc,
};

// The operations of each kind of file: statics of this module, as debugfs needs them for as
// long as a file is open, which may be after the file (or its device) is gone.
debugfs_file_operations!(static PORT_FILE_OPS: PortFile);
debugfs_file_operations!(static DEVICES_FILE_OPS: DevicesFile);
debugfs_file_operations!(static CAPTURE_FILE_OPS: CaptureFile);

/// Parses a number, decimal or `0x` hexadecimal.
pub(crate) fn parse_num(s: &[u8]) -> Option<u32> {
    let s = core::str::from_utf8(s).ok()?;
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Splits a write into its words (separated by white space or commas).
pub(crate) fn words(input: &[u8]) -> impl Iterator<Item = &[u8]> {
    input
        .split(|b| b.is_ascii_whitespace() || *b == b',')
        .filter(|w| !w.is_empty())
}

/// Parses a P_Key table: 1 to 16 P_Keys whose key part is not 0, separated by spaces or
/// commas.
pub(crate) fn parse_pkeys(input: &[u8]) -> Result<[u16; PKEY_TABLE_LEN]> {
    let mut t = [0u16; PKEY_TABLE_LEN];
    let mut n = 0;
    for w in words(input) {
        let v = parse_num(w)
            .and_then(|v| u16::try_from(v).ok())
            .ok_or(EINVAL)?;
        if v & crate::pkey::KEY_MASK == 0 || n == PKEY_TABLE_LEN {
            return Err(EINVAL);
        }
        t[n] = v;
        n += 1;
    }
    if n == 0 {
        return Err(EINVAL);
    }
    Ok(t)
}

/// Parses a `vl_mtu` write: `default`, 8 MTUs (VL0 first), or `VL:MTU` pairs that change
/// `table`; an MTU is one an OPA VL can have (256 to 10240, powers of 2 and 10240).
pub(crate) fn parse_vl_mtu(
    input: &[u8],
    table: [u16; NUM_DATA_VLS as usize],
) -> Result<[u16; NUM_DATA_VLS as usize]> {
    let mtu = |w: &[u8]| {
        parse_num(w)
            .and_then(|v| u16::try_from(v).ok())
            .filter(|v| OPA_MTUS.contains(v))
            .ok_or(EINVAL)
    };
    let mut ws = words(input).peekable();
    if ws.peek().is_none() {
        return Err(EINVAL);
    }
    let mut t = table;
    let mut plain = 0;
    for w in ws {
        if w == b"default" {
            t = DEFAULT_VL_MTUS;
            continue;
        }
        let mut parts = w.splitn(2, |&b| b == b':');
        match (parts.next(), parts.next()) {
            (Some(vl), Some(m)) => {
                let vl = parse_num(vl)
                    .and_then(|v| usize::try_from(v).ok())
                    .filter(|&v| v < usize::from(NUM_DATA_VLS))
                    .ok_or(EINVAL)?;
                t[vl] = mtu(m)?;
            }
            (Some(m), None) => {
                *t.get_mut(plain).ok_or(EINVAL)? = mtu(m)?;
                plain += 1;
            }
            _ => return Err(EINVAL),
        }
    }
    if plain != 0 && plain != usize::from(NUM_DATA_VLS) {
        return Err(EINVAL);
    }
    Ok(t)
}

/// Parses a write to `sc2vl` into the new table, starting from `table`: `default`, 32 VLs, or
/// `SC:VL` pairs. Every VL is 0 to 7 or 15.
pub(crate) fn parse_sc2vl(input: &[u8], table: [u8; NUM_SC]) -> Result<[u8; NUM_SC]> {
    let vl = |w: &[u8]| {
        parse_num(w)
            .and_then(|v| u8::try_from(v).ok())
            .filter(|&v| v < NUM_DATA_VLS || v == VL15)
            .ok_or(EINVAL)
    };
    let ws: KVec<&[u8]> = {
        let mut v = KVec::new();
        for w in words(input) {
            v.push(w, GFP_KERNEL)?;
        }
        v
    };
    match ws.as_slice() {
        [] => Err(EINVAL),
        [b"default"] => Ok(DEFAULT_SC2VL),
        all if all.len() == NUM_SC && !all.iter().any(|w| w.contains(&b':')) => {
            let mut t = [0u8; NUM_SC];
            for (d, w) in t.iter_mut().zip(all) {
                *d = vl(w)?;
            }
            Ok(t)
        }
        pairs => {
            let mut t = table;
            for w in pairs {
                let mut parts = w.splitn(2, |&b| b == b':');
                let (Some(sc), Some(v)) = (parts.next(), parts.next()) else {
                    return Err(EINVAL);
                };
                let sc = parse_num(sc)
                    .and_then(|s| usize::try_from(s).ok())
                    .filter(|&s| s < NUM_SC)
                    .ok_or(EINVAL)?;
                t[sc] = vl(v)?;
            }
            Ok(t)
        }
    }
}

/// Which setting a port file shows.
#[derive(Clone, Copy)]
enum Setting {
    Lid,
    Pkeys,
    State,
    Capabilities,
    Sc2Vl,
    VnicDrops,
    VnicSdma,
    VlMtu,
    Fault(Knob),
}

/// A file of a port's setting.
pub(crate) struct PortFile {
    sim: Arc<Sim>,
    dev_index: u32,
    port: Arc<Port>,
    setting: Setting,
}

impl FileOps for PortFile {
    fn show(&self, out: &mut KVec<u8>) -> Result {
        let c = self.port.config();
        let mut w = Text(out);
        let _ = match self.setting {
            Setting::Lid => writeln!(w, "{}", c.lid),
            Setting::Pkeys => {
                for (i, p) in c.pkeys.iter().filter(|&&p| p != 0).enumerate() {
                    let _ = write!(w, "{}{:#06x}", if i > 0 { " " } else { "" }, p);
                }
                writeln!(w)
            }
            Setting::State => writeln!(w, "{}", crate::mgmt::state_name(c.state)),
            Setting::Capabilities => writeln!(
                w,
                "cap_mask {:#010x}\ncap_mask3 {:#06x}",
                Capabilities::get(&self.port.caps.ib),
                Capabilities::get(&self.port.caps.opa3)
            ),
            Setting::Sc2Vl => {
                for (sc, vl) in self.port.sc2vl().iter().enumerate() {
                    let _ = write!(w, "{}{}", if sc > 0 { " " } else { "" }, vl);
                }
                writeln!(w)
            }
            Setting::VnicDrops => {
                for why in TxDrop::ALL {
                    let n = Counters::get(self.port.tx_drops.of(why));
                    let _ = writeln!(w, "{} {}", why.name(), n);
                }
                Ok(())
            }
            Setting::VlMtu => {
                for (vl, mtu) in self.port.vl_mtu().iter().enumerate() {
                    let _ = write!(w, "{}{}", if vl > 0 { " " } else { "" }, mtu);
                }
                writeln!(w)
            }
            Setting::VnicSdma => {
                for (name, n) in self.port.sdma.read() {
                    let _ = writeln!(w, "{} {}", name, n);
                }
                Ok(())
            }
            Setting::Fault(k) => {
                faults_ctl::show(&self.port, k, &mut w);
                Ok(())
            }
        };
        Ok(())
    }

    fn store(&self, input: &[u8]) -> Result {
        match self.setting {
            Setting::Capabilities => {
                pr_warn!(
                    "port {}: capabilities are read only (ib_modify_port() changes them)\n",
                    self.port.num
                );
                return Err(EPERM);
            }
            Setting::VnicDrops | Setting::VnicSdma => {
                pr_warn!("port {}: the VNIC counters are read only\n", self.port.num);
                return Err(EPERM);
            }
            Setting::Sc2Vl => {
                let t = parse_sc2vl(input, self.port.sc2vl()).inspect_err(|_| {
                    pr_warn!(
                        "port {}: sc2vl takes 'default', 32 VLs, or SC:VL pairs (SC 0 to 31, VL 0 to 7 or 15)\n",
                        self.port.num
                    )
                })?;
                self.port.set_sc2vl(t);
                return Ok(());
            }
            Setting::Fault(k) => return faults_ctl::store(&self.port, k, input),
            Setting::VlMtu => {
                let t = parse_vl_mtu(input, self.port.vl_mtu()).inspect_err(|_| {
                    pr_warn!(
                        "port {}: vl_mtu takes 'default', 8 MTUs, or VL:MTU pairs (VL 0 to 7, MTU 256, 512, 1024, 2048, 4096, 8192 or 10240)\n",
                        self.port.num
                    )
                })?;
                self.port.set_vl_mtu(t);
                return Ok(());
            }
            _ => {}
        }
        let mut ws = words(input);
        let (Some(word), None) = (ws.next(), ws.next()) else {
            if !matches!(self.setting, Setting::Pkeys) {
                pr_warn!("port {}: write one value\n", self.port.num);
                return Err(EINVAL);
            }
            return self.store_pkeys(input);
        };
        match self.setting {
            Setting::Lid => {
                let lid = parse_num(word).ok_or_else(|| {
                    pr_warn!("port {}: a LID is a number\n", self.port.num);
                    EINVAL
                })?;
                self.sim
                    .configure(self.dev_index, &self.port, Change::Lid, |c| c.lid = lid)
            }
            Setting::Pkeys => self.store_pkeys(input),
            Setting::Capabilities
            | Setting::Sc2Vl
            | Setting::VlMtu
            | Setting::VnicDrops
            | Setting::VnicSdma
            | Setting::Fault(_) => Err(EPERM),
            Setting::State => {
                let state = match word {
                    b"active" | b"up" => PortState::Active,
                    b"down" => PortState::Down,
                    _ => {
                        pr_warn!("port {}: the state is 'active' or 'down'\n", self.port.num);
                        return Err(EINVAL);
                    }
                };
                self.sim
                    .configure(self.dev_index, &self.port, Change::State, |c| {
                        c.state = state
                    })
            }
        }
    }
}

impl PortFile {
    fn store_pkeys(&self, input: &[u8]) -> Result {
        let t = parse_pkeys(input).inspect_err(|_| {
            pr_warn!(
                "port {}: P_Keys are 1 to {} numbers up to 0xffff, key part not 0\n",
                self.port.num,
                PKEY_TABLE_LEN
            )
        })?;
        self.sim
            .configure(self.dev_index, &self.port, Change::Pkeys, |c| c.pkeys = t)
    }
}

/// Creates the files of `port` of device `dev_index` in `dir/port<N>/`.
pub(crate) fn port_files(
    sim: &Arc<Sim>,
    dir: &Dir,
    dev_index: u32,
    port: &Arc<Port>,
    files: &mut KVec<File<PortFile>>,
) -> Result {
    let name = CString::try_from_fmt(fmt!("port{}", port.num))?;
    let pdir = Dir::new(&name, Some(dir))?;
    let faults = faults_ctl::FILES.map(|(name, k)| (name, Setting::Fault(k), 0o644));
    let settings = [
        (c_str!("lid"), Setting::Lid, 0o644),
        (c_str!("pkeys"), Setting::Pkeys, 0o644),
        (c_str!("state"), Setting::State, 0o644),
        (c_str!("capabilities"), Setting::Capabilities, 0o444),
        (c_str!("sc2vl"), Setting::Sc2Vl, 0o644),
        (c_str!("vl_mtu"), Setting::VlMtu, 0o644),
        (c_str!("vnic_drops"), Setting::VnicDrops, 0o444),
        (c_str!("vnic_sdma"), Setting::VnicSdma, 0o444),
    ];
    // `Iterator::` by name: pin-init's `Init` has a `chain` too.
    for (fname, setting, mode) in Iterator::chain(settings.into_iter(), faults) {
        let data = Arc::new(
            PortFile {
                sim: sim.clone(),
                dev_index,
                port: port.clone(),
                setting,
            },
            GFP_KERNEL,
        )?;
        files.push(
            File::new(&PORT_FILE_OPS, &pdir, fname, mode, data)?,
            GFP_KERNEL,
        )?;
    }
    Ok(())
}

/// The `devices` file.
pub(crate) struct DevicesFile {
    sim: Arc<Sim>,
}

impl DevicesFile {
    /// Creates the `devices` file of `sim`.
    pub(crate) fn create(sim: &Arc<Sim>) -> Result<File<Self>> {
        let data = Arc::new(DevicesFile { sim: sim.clone() }, GFP_KERNEL)?;
        File::new(
            &DEVICES_FILE_OPS,
            sim.root(),
            c_str!("devices"),
            0o644,
            data,
        )
    }
}

impl FileOps for DevicesFile {
    fn show(&self, out: &mut KVec<u8>) -> Result {
        self.sim.list(out)
    }

    fn store(&self, input: &[u8]) -> Result {
        let mut ws = words(input);
        match ws.next() {
            Some(b"add") => {
                let nports = match ws.next() {
                    Some(w) => parse_num(w).ok_or(EINVAL)?,
                    None => 1,
                };
                let mut lids = KVec::new();
                for w in ws {
                    lids.push(parse_num(w).ok_or(EINVAL)?, GFP_KERNEL)?;
                }
                let mut name = KVec::new();
                self.sim.add_device(
                    nports,
                    &lids,
                    sim::default_pkeys(self.sim.fabric.managed),
                    &mut name,
                )
            }
            Some(b"del") => {
                let name = ws.next().ok_or(EINVAL)?;
                if ws.next().is_some() {
                    return Err(EINVAL);
                }
                self.sim.del_device(name)
            }
            _ => {
                pr_warn!("devices: write 'add NPORTS [LID...]' or 'del NAME'\n");
                Err(EINVAL)
            }
        }
    }
}

/// The `capture` file: the last packets on the wire (see [`crate::capture`]).
pub(crate) struct CaptureFile {
    sim: Arc<Sim>,
}

impl CaptureFile {
    /// Creates the `capture` file of `sim`.
    pub(crate) fn create(sim: &Arc<Sim>) -> Result<File<Self>> {
        let data = Arc::new(CaptureFile { sim: sim.clone() }, GFP_KERNEL)?;
        File::new(
            &CAPTURE_FILE_OPS,
            sim.root(),
            c_str!("capture"),
            0o644,
            data,
        )
    }
}

impl FileOps for CaptureFile {
    fn show(&self, out: &mut KVec<u8>) -> Result {
        self.sim.fabric.capture.show(out);
        Ok(())
    }

    fn store(&self, input: &[u8]) -> Result {
        match words(input).next() {
            Some(b"clear") => {
                self.sim.fabric.capture.clear();
                Ok(())
            }
            _ => {
                pr_warn!("capture: write 'clear'\n");
                Err(EINVAL)
            }
        }
    }
}
