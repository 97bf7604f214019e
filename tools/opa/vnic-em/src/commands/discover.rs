// SPDX-License-Identifier: GPL-2.0

//! `vnic-em discover`: the fabric's node ports as the subnet administrator knows them now,
//! which of them a VNIC driver serves (CapabilityMask3 IsEthOnFabricSupported, raised by
//! the driver on every port it serves), and a starting config that names them by port GUID.

use serde::Serialize;

use crate::client::Client;
use crate::error::{Error, Exit, Result};
use crate::fabric::Fabric;
use crate::sa::{SaClient, SaNode};

use super::Io;

/// How `discover` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiscoverFormat {
    /// A table for people.
    #[default]
    Text,
    /// JSON, one object a port ([`PortJson`]).
    Json,
    /// A starting `fabric.toml`.
    Config,
}

/// Options of `discover`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiscoverOpts {
    /// Every port, not only those a VNIC driver serves.
    pub all: bool,
    /// How to print.
    pub format: DiscoverFormat,
}

/// A port in `discover --json`: the field names are an interface.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct PortJson {
    /// The port's GUID (`0x` and 16 hexadecimal digits).
    pub port_guid: String,
    /// The node's GUID.
    pub node_guid: String,
    /// The port's LID now (`0x` and 4 hexadecimal digits).
    pub lid: String,
    /// The port's number on its node.
    pub port: u8,
    /// A VNIC driver serves the port.
    pub vnic: bool,
    /// The node description.
    pub desc: String,
}

fn port_json(n: &SaNode) -> PortJson {
    PortJson {
        port_guid: format!("{:#018x}", n.port_guid),
        node_guid: format!("{:#018x}", n.node_guid),
        lid: format!("{:#06x}", n.lid),
        port: n.port_num,
        vnic: n.vnic,
        desc: n.desc.clone(),
    }
}

/// A locally administered unicast MAC for the first vport of a port: `02` and the low four
/// bytes of its GUID, then `00` (the vport number, for more vports on the port).
pub fn vport_mac(port_guid: u64) -> String {
    let b = port_guid.to_be_bytes();
    format!("02:{:02x}:{:02x}:{:02x}:{:02x}:00", b[4], b[5], b[6], b[7])
}

/// The starting config of `nodes`: one vesw, one vport on each port, named by GUID.
///
/// It works as written on a fabric opa-fm runs with its default `opafm.xml`: the vesw is in
/// the Default vFabric (P_Key 0x8001, in every port's table), and it names no multicast DLID,
/// so broadcast goes to the MLID of the SA's group (the IPv4 broadcast group opa-fm
/// pre-creates), which `apply` joins the vports' ports to. A fixed DLID would join no group,
/// and the switches would forward no ARP.
pub fn starting_config(nodes: &[SaNode]) -> String {
    let mut s = String::from(
        "# A starting config from the fabric's subnet administrator (vnic-em discover\n\
         # --config): one vesw, one vport on each port a VNIC driver serves, named by\n\
         # port GUID (LIDs are the SM's and may change).\n\
         [em]\nfabric_id = 1\n\n\
         # The Default vFabric of opa-fm's opafm.xml (P_Key 0x8001). Broadcast and\n\
         # multicast go to the SA's multicast group of unknown_mcast_mgid (default: the\n\
         # IPv4 broadcast group opa-fm creates), which apply joins every vport's port\n\
         # to. A vesw of its own vFabric: its P_Key, and a group created for it.\n\
         [[vesw]]\nid = 1\nname = \"vesw1\"\npkey = 0x8001\neth_mtu = 1500\n\
         # unknown_mcast_mgid = \"0xff12401b80020000:0x00000000ffffffff\"\n",
    );
    for (i, n) in nodes.iter().enumerate() {
        s.push_str(&format!(
            "\n[[vport]]\nnode = \"{:#018x}\"  # \"{}\", LID {:#06x} now\nvport = 0\nvesw = 1\n\
             port_num = {}\nmac = \"{}\"\n",
            n.port_guid,
            n.desc.replace(['"', '\\'], "_"),
            n.lid,
            i + 1,
            vport_mac(n.port_guid)
        ));
    }
    s
}

/// `vnic-em discover`.
pub fn discover<F: Fabric>(client: &mut Client<F>, opts: &DiscoverOpts, io: &mut Io<'_>) -> Result {
    let pol = *client.policy();
    let nodes = SaClient::new(client.fabric_mut(), pol.timeout, pol.retries)
        .discover()
        .map_err(|e| Error::Fabric(format!("discover: {e}")))?;
    let shown: Vec<&SaNode> = nodes.iter().filter(|n| opts.all || n.vnic).collect();
    match opts.format {
        DiscoverFormat::Json => {
            let v: Vec<PortJson> = shown.iter().map(|n| port_json(n)).collect();
            writeln!(
                io.out,
                "{}",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            )?;
        }
        DiscoverFormat::Config => {
            let vnic: Vec<SaNode> = nodes.iter().filter(|n| n.vnic).cloned().collect();
            write!(io.out, "{}", starting_config(&vnic))?;
        }
        DiscoverFormat::Text => {
            writeln!(
                io.out,
                "{:<18}  {:<6}  {:>4}  {:<4}  NODE DESCRIPTION",
                "PORT GUID", "LID", "PORT", "VNIC"
            )?;
            for n in &shown {
                writeln!(
                    io.out,
                    "{:#018x}  {:#06x}  {:>4}  {:<4}  {}",
                    n.port_guid,
                    n.lid,
                    n.port_num,
                    if n.vnic { "yes" } else { "no" },
                    n.desc
                )?;
            }
            writeln!(
                io.out,
                "{} port(s), {} served by a VNIC driver",
                nodes.len(),
                nodes.iter().filter(|n| n.vnic).count()
            )?;
        }
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sa::DEFAULT_MCAST_MGID;

    fn node(lid: u32, guid: u64, desc: &str) -> SaNode {
        SaNode {
            lid,
            port_guid: guid,
            node_guid: guid,
            port_num: 1,
            desc: desc.into(),
            vnic: true,
        }
    }

    /// The starting file is one `apply` takes as written on opa-fm's defaults: the Default
    /// vFabric's P_Key, and broadcast by the SA's group (joined by apply), never a fixed DLID
    /// that no group has (the file used to give 0xf00001: ARP reached no VNIC).
    #[test]
    fn starting_config_takes_broadcast_from_the_sa_group() {
        let text = starting_config(&[
            node(1, 0x0011_7501_0000_0001, "em hfi1_0"),
            node(2, 0x0011_7501_0000_0101, "hostA \"x\" hfi1_0"),
        ]);
        let cfg = crate::config::parse(&text).expect("the starting config parses");
        assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
        let v = &cfg.vesws[0];
        assert_eq!(v.pkey, 0x8001);
        assert_eq!(v.unknown_mcast_dlid, 0, "no fixed multicast DLID");
        assert_eq!(v.unknown_mcast_mgid, Some(DEFAULT_MCAST_MGID));
        assert_eq!(cfg.vports.len(), 2);
        assert_eq!(cfg.names.len(), 2, "vports named by port GUID, not LID");
    }
}
