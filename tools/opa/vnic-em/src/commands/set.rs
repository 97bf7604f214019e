// SPDX-License-Identifier: GPL-2.0

//! `vnic-em set`: one-off changes to one vport or node port.

use std::collections::BTreeMap;

use opa_wire::vema_info::{VeswPortInfo, ETH_MTU_MAX, STATE_DROP_ALL, STATE_FORWARDING};
use opa_wire::vema_mac::{MacTableEntry, DLID_SD_SRC_MAC};

use crate::args;
use crate::client::Client;
use crate::config::{ETH_MIN_MTU, FABRIC_ID_MAX, LID24_MAX, SC_VL_MAX, VESW_ID_MAX};
use crate::error::{Error, Exit, Result};
use crate::fabric::Fabric;
use crate::mac::Mac;
use crate::plan::diff::{class_port_info_update, info_changes, table_digest, table_sets};
use crate::view::vport_text;

use super::{read_vport, Io};

/// One MAC table entry to write with `set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryArg {
    /// Slot.
    pub index: u16,
    /// Address; zero clears the slot.
    pub mac: Mac,
    /// DLID.
    pub dlid: u32,
    /// Source MAC entry.
    pub source: bool,
}

/// What `set` changes; `None` leaves a field as it is. The fields are
/// the options of `vnic-em set`, their comments its help.
// `[,src]` in the help of --mac-entry is syntax, not a link.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SetOpts {
    /// Node port LID
    #[arg(short = 'l', long, value_name = "LID", value_parser = args::LID)]
    pub lid: u16,
    /// Virtual port number (-v N until the next release)
    #[arg(long, value_name = "N")]
    pub vport: Option<u8>,
    /// Where the node port sends traps (class port info)
    #[arg(long, value_name = "LID", value_parser = args::LID)]
    pub trap_lid: Option<u16>,
    /// Service level of traps
    #[arg(long, value_name = "SL", value_parser = args::int::<u8, 0, { SC_VL_MAX as u64 }>)]
    pub trap_sl: Option<u8>,
    /// Reset the vport to power-on defaults and empty its MAC table
    #[arg(long)]
    pub delete: bool,
    /// Vesw id
    #[arg(long, value_name = "ID", value_parser = args::int::<u16, 0, { VESW_ID_MAX as u64 }>)]
    pub vesw: Option<u16>,
    /// Fabric id
    #[arg(long, value_name = "ID", value_parser = args::int::<u16, 0, { FABRIC_ID_MAX as u64 }>)]
    pub fabric_id: Option<u16>,
    /// P_Key
    #[arg(long, value_name = "PKEY", value_parser = args::pkey)]
    pub pkey: Option<u16>,
    /// Ethernet MTU
    #[arg(long, value_name = "MTU", value_parser = args::int::<u16, { ETH_MIN_MTU as u64 }, { ETH_MTU_MAX as u64 }>)]
    pub eth_mtu: Option<u16>,
    /// Unknown unicast DLIDs, comma separated (the default ports)
    #[arg(long, value_name = "DLID,...", value_delimiter = ',', value_parser = args::DLID)]
    pub unknown_ucast_dlids: Option<Vec<u32>>,
    /// Default ports in use (indices), comma separated
    #[arg(long, value_name = "I,...", value_delimiter = ',', value_parser = args::int::<u8, 0, 15>)]
    pub default_ports: Option<Vec<u8>>,
    /// Unknown multicast DLID
    #[arg(long, value_name = "DLID", value_parser = args::int::<u32, 0, { LID24_MAX as u64 }>)]
    pub unknown_mcast_dlid: Option<u32>,
    /// Routing control word (3 bits per class: default 0, ipv4 4,
    /// ipv4_udp 8, ipv4_tcp 12, ipv6 16, ipv6_tcp 20, ipv6_udp 24)
    #[arg(long, value_name = "WORD", value_parser = args::int::<u32, 0, { u32::MAX as u64 }>)]
    pub rc: Option<u32>,
    /// Port number on the vesw
    #[arg(long, value_name = "N", value_parser = args::int::<u32, 0, { u32::MAX as u64 }>)]
    pub port_num: Option<u32>,
    /// Base MAC address (unicast, as in the config file)
    #[arg(long, value_name = "MAC", value_parser = crate::mac::parse_unicast)]
    pub mac: Option<Mac>,
    /// Set the config state to forwarding
    #[arg(long, conflicts_with = "disable")]
    pub enable: bool,
    /// Set the config state to drop-all
    #[arg(long)]
    pub disable: bool,
    /// Encapsulation source LID
    #[arg(long, value_name = "LID", value_parser = args::DLID)]
    pub encap_slid: Option<u32>,
    /// Write a MAC table entry: INDEX=MAC,DLID[,src]; MAC 0:0:0:0:0:0
    /// clears the slot (repeatable)
    #[arg(long = "mac-entry", value_name = "INDEX=MAC,DLID", value_parser = args::entry)]
    pub entries: Vec<EntryArg>,
    /// Print the result as JSON
    #[arg(short = 'j', long)]
    pub json: bool,
}

impl SetOpts {
    /// The config state to set: forwarding (`--enable`), drop-all
    /// (`--disable`), or as it is.
    pub fn enabled(&self) -> Option<bool> {
        match (self.enable, self.disable) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }

    fn touches_info(&self) -> bool {
        self.vesw.is_some()
            || self.fabric_id.is_some()
            || self.pkey.is_some()
            || self.eth_mtu.is_some()
            || self.unknown_ucast_dlids.is_some()
            || self.default_ports.is_some()
            || self.unknown_mcast_dlid.is_some()
            || self.rc.is_some()
            || self.port_num.is_some()
            || self.mac.is_some()
            || self.enabled().is_some()
            || self.encap_slid.is_some()
    }

    fn apply_to(&self, i: &mut VeswPortInfo) {
        if let Some(x) = self.vesw {
            i.vesw.vesw_id = x;
        }
        if let Some(x) = self.fabric_id {
            i.vesw.fabric_id = x;
        }
        if let Some(x) = self.pkey {
            i.vesw.pkey = x;
        }
        if let Some(x) = self.eth_mtu {
            i.vesw.eth_mtu = x;
        }
        if let Some(l) = &self.unknown_ucast_dlids {
            i.vesw.u_ucast_dlid = [0; 16];
            for (slot, d) in i.vesw.u_ucast_dlid.iter_mut().zip(l) {
                *slot = *d;
            }
        }
        if let Some(p) = &self.default_ports {
            i.vesw.def_port_mask = p.iter().fold(0u16, |m, &x| {
                m | 1u16.checked_shl(u32::from(x)).unwrap_or(0)
            });
        }
        if let Some(x) = self.unknown_mcast_dlid {
            i.vesw.u_mcast_dlid = x;
        }
        if let Some(x) = self.rc {
            i.vesw.rc = x;
        }
        if let Some(x) = self.port_num {
            i.vport.port_num = x;
        }
        if let Some(m) = self.mac {
            i.vport.base_mac_addr = m.0;
        }
        if let Some(e) = self.enabled() {
            i.vport.config_state = if e { STATE_FORWARDING } else { STATE_DROP_ALL };
        }
        if let Some(x) = self.encap_slid {
            i.vport.encap_slid = x;
        }
    }
}

fn set_inner<F: Fabric>(client: &mut Client<F>, o: &SetOpts, io: &mut Io<'_>) -> Result<()> {
    let lid = o.lid;
    if o.trap_lid.is_some() || o.trap_sl.is_some() {
        let cpi = client.get_class_port_info(lid)?;
        let tl = o
            .trap_lid
            .unwrap_or_else(|| u16::try_from(cpi.trap_lid).unwrap_or(0));
        let sl = o.trap_sl.unwrap_or_else(|| cpi.trap_sl());
        match class_port_info_update(&cpi, tl, sl) {
            Some(n) => {
                let got = client.set_class_port_info(lid, &n)?;
                writeln!(
                    io.out,
                    "LID {lid:#06x}: trap LID {:#x} SL {}",
                    got.trap_lid,
                    got.trap_sl()
                )?;
            }
            None => {
                writeln!(io.out, "LID {lid:#06x}: trap LID already {tl:#x} SL {sl}")?;
            }
        }
    }
    let Some(vport) = o.vport else {
        return Ok(());
    };
    if o.delete {
        client.delete_vesw(lid, vport)?;
        writeln!(
            io.out,
            "LID {lid:#06x} vport {vport}: reset to power-on defaults"
        )?;
    }
    if o.touches_info() {
        let cur = client.get_vport_info(lid, vport)?;
        let mut want = cur;
        o.apply_to(&mut want);
        let changes = info_changes(&cur, &want);
        if changes.is_empty() {
            writeln!(
                io.out,
                "LID {lid:#06x} vport {vport}: vesw port info unchanged"
            )?;
        } else {
            client.set_vport_info(lid, vport, &want)?;
            for c in changes {
                writeln!(
                    io.out,
                    "LID {lid:#06x} vport {vport}: {} {} -> {}",
                    c.field, c.from, c.to
                )?;
            }
        }
    }
    if !o.entries.is_empty() {
        let cur = client.read_mac_table(lid, vport)?;
        let mut want: BTreeMap<u16, MacTableEntry> = cur.entries.clone();
        for e in &o.entries {
            if e.mac.is_zero() {
                want.remove(&e.index);
            } else {
                let sd = if e.source { DLID_SD_SRC_MAC } else { 0 };
                want.insert(
                    e.index,
                    MacTableEntry {
                        mac_addr: e.mac.0,
                        mac_addr_mask: Mac::ALL_ONES.0,
                        dlid_sd: (e.dlid << 8) | sd,
                    },
                );
            }
        }
        let digest = table_digest(&want);
        let sets = table_sets(&cur.entries, cur.digest, &want, digest);
        if sets.is_empty() {
            writeln!(io.out, "LID {lid:#06x} vport {vport}: MAC table unchanged")?;
        }
        for s in sets {
            client.set_mac_entries(lid, vport, s.offset, digest, &s.entries)?;
            writeln!(
                io.out,
                "LID {lid:#06x} vport {vport}: set {} MAC table slot(s) from {}, digest {digest:#010x}",
                s.entries.len(),
                s.offset
            )?;
        }
    }
    let v = read_vport(client, lid, vport, false)?;
    if o.json {
        writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        )?;
    } else {
        write!(io.out, "{}", vport_text(&v))?;
    }
    Ok(())
}

/// `vnic-em set`: one-off changes, each a Get, then a Set if the value
/// differs.
pub fn set<F: Fabric>(client: &mut Client<F>, o: &SetOpts, io: &mut Io<'_>) -> Result {
    let needs_vport = o.delete || o.touches_info() || !o.entries.is_empty();
    if needs_vport && o.vport.is_none() {
        return Err(Error::Usage(
            "set: --vport is needed for vport settings".into(),
        ));
    }
    if !needs_vport && o.trap_lid.is_none() && o.trap_sl.is_none() && o.vport.is_none() {
        return Err(Error::Usage("set: nothing to set".into()));
    }
    let before = client.stats().sets_ok;
    match set_inner(client, o, io) {
        Ok(()) => Ok(Exit::Ok),
        Err(Error::Em(e)) if client.stats().sets_ok > before => Err(Error::Partial(e)),
        Err(e) => Err(e),
    }
}
