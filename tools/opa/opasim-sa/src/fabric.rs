// SPDX-License-Identifier: GPL-2.0

//! The fabric as the SA sees it: one entry per port of every device on opasim's switch.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use opa_umad::{parse_sysfs_gid_guid, parse_sysfs_guid, parse_sysfs_num};
use opa_wire::sa::records::CAP_MASK3_IS_ETH_ON_FABRIC;

/// One port of the fabric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortView {
    /// The device (`opasim0`).
    pub ibdev: String,
    /// The node's GUID.
    pub node_guid: u64,
    /// The node's system image GUID.
    pub sys_image_guid: u64,
    /// The node description (`hostA hfi1_0`).
    pub node_desc: String,
    /// Ports of the node.
    pub num_ports: u8,
    /// The port's number on its node.
    pub port_num: u8,
    /// The port's GUID.
    pub port_guid: u64,
    /// The port's LID (0: none).
    pub lid: u32,
    /// PortState (4: Active).
    pub state: u8,
    /// CapabilityMask.
    pub cap_mask: u32,
    /// CapabilityMask3.
    pub cap_mask3: u16,
}

impl PortView {
    /// Port 1 of `opasimN` (N is `dev`), a node of one port named `desc`, Active at `lid`,
    /// with GUIDs made from N and no capability: the ports tests build fabrics of (struct
    /// update syntax sets the rest).
    pub fn sample(dev: u8, lid: u32, desc: &str) -> Self {
        let node_guid = 0x0011_7501_0000_0000 | u64::from(dev) << 8;
        PortView {
            ibdev: format!("opasim{dev}"),
            node_guid,
            sys_image_guid: node_guid,
            node_desc: desc.into(),
            num_ports: 1,
            port_num: 1,
            port_guid: node_guid | 1,
            lid,
            state: 4,
            cap_mask: 0,
            cap_mask3: 0,
        }
    }

    /// [`sample`](Self::sample) with the capability a VNIC driver sets (IsEthOnFabric in
    /// CapabilityMask3): a host port an EM configures.
    pub fn vnic_host(dev: u8, lid: u32, desc: &str) -> Self {
        PortView {
            cap_mask3: CAP_MASK3_IS_ETH_ON_FABRIC,
            ..Self::sample(dev, lid, desc)
        }
    }

    /// Whether the SA knows the port: only ports the SM brought up (Active, with a LID) have
    /// records.
    pub fn is_up(&self) -> bool {
        self.state == 4 && self.lid != 0
    }

    /// Whether the SA has NodeRecords and PortInfoRecords of the port: opa-fm's have every
    /// port past Down (Init, Armed, Active) that has a LID (`sa_NodeRecord_GetTable()`,
    /// `sa_PortInfoRecord_GetTable()`).
    pub fn is_known(&self) -> bool {
        self.state >= 2 && self.lid != 0
    }
}

/// A multicast group the SA knows: opa-fm's SM creates them from opafm.xml's
/// `<MulticastGroup>` sections (and at the joins of members, which this SA does not take).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McGroup {
    /// The group's MGID.
    pub mgid: [u8; 16],
    /// Its 32-bit MLID (`0xf0000000` and up).
    pub mlid: u32,
    /// Its P_Key.
    pub pkey: u16,
    /// Its Q_Key.
    pub qkey: u32,
    /// Its MTU (IB encoding: 4 is 2048).
    pub mtu: u8,
    /// Its rate (IB encoding: 15 is 25 Gb/s).
    pub rate: u8,
    /// Its SL.
    pub sl: u8,
}

impl McGroup {
    /// The IPv4 broadcast group of the Default vFabric (P_Key 0x8001):
    /// `0xff12401b80010000:0x00000000ffffffff`, which opa-fm's default opafm.xml pre-creates
    /// (`<MulticastGroup><Create>1</Create><PKey>0x0001</PKey>`, no MGID given: the implicit
    /// IPoIB groups of `fm_xml.c`, the broadcast one first), at MTU 2048, rate 25g, Q_Key 0.
    /// Its MLID here is 0xf0000001: 0xf00001 in a 16B header, the unknown multicast DLID the
    /// EM's examples use.
    pub const DEFAULT_BROADCAST: McGroup = McGroup {
        mgid: [
            0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
        ],
        mlid: 0xf000_0001,
        pkey: 0x8001,
        qkey: 0,
        mtu: 4,
        rate: 15,
        sl: 0,
    };
}

/// The fabric at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FabricView {
    /// Every port, in device and port order.
    pub ports: Vec<PortView>,
    /// The SM's LID, which every port reports.
    pub sm_lid: u32,
    /// The multicast groups.
    pub groups: Vec<McGroup>,
}

impl FabricView {
    /// The port whose LID is `lid`, if it is up.
    pub fn by_lid(&self, lid: u32) -> Option<&PortView> {
        self.ports.iter().find(|p| p.is_up() && p.lid == lid)
    }

    /// The port whose GUID is `guid`, if it is up.
    pub fn by_guid(&self, guid: u64) -> Option<&PortView> {
        self.ports.iter().find(|p| p.is_up() && p.port_guid == guid)
    }
}

/// Where the kernel's view of the fabric is read: `root` is `/` on a host, a directory of
/// the same layout in tests.
#[derive(Debug, Clone)]
pub struct Source {
    root: PathBuf,
    groups: Vec<McGroup>,
}

impl Source {
    /// A source under `root`, with the multicast group opa-fm's default configuration
    /// creates ([`McGroup::DEFAULT_BROADCAST`]).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Source {
            root: root.into(),
            groups: vec![McGroup::DEFAULT_BROADCAST],
        }
    }

    /// The source with these multicast groups instead.
    pub fn with_groups(mut self, groups: Vec<McGroup>) -> Self {
        self.groups = groups;
        self
    }

    /// The P_Key at `index` of the table of port `port` of `ibdev` (sysfs `pkeys/N`).
    pub fn pkey(&self, ibdev: &str, port: u8, index: u16) -> Option<u16> {
        let p = self
            .root
            .join("sys/class/infiniband")
            .join(ibdev)
            .join("ports")
            .join(port.to_string())
            .join("pkeys")
            .join(index.to_string());
        self.read(&p)
            .ok()
            .and_then(|s| parse_sysfs_num(&s))
            .and_then(|v| u16::try_from(v).ok())
    }

    fn debugfs(&self) -> PathBuf {
        self.root.join("sys/kernel/debug/opasim")
    }

    fn read(&self, p: &Path) -> io::Result<String> {
        fs::read_to_string(p).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))
    }

    /// The devices on opasim's switch, from its `devices` file (`opasim0 index 0 lids 1`).
    pub fn devices(&self) -> io::Result<Vec<String>> {
        let list = self.read(&self.debugfs().join("devices"))?;
        Ok(list
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_owned)
            .collect())
    }

    /// Makes port `port` of `ibdev` the SM's (opasim's `sm` file), or none.
    pub fn claim_sm(&self, sm: Option<(&str, u8)>) -> io::Result<()> {
        let v = sm.map_or_else(|| "none".to_owned(), |(d, p)| format!("{d} {p}"));
        let p = self.debugfs().join("sm");
        fs::write(&p, v).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))
    }

    /// Reads the whole fabric now. A device that goes away while it is read is left out.
    pub fn snapshot(&self) -> io::Result<FabricView> {
        let mut view = FabricView {
            groups: self.groups.clone(),
            ..FabricView::default()
        };
        for dev in self.devices()? {
            let d = self.root.join("sys/class/infiniband").join(&dev);
            let Ok(node_guid) = self.read(&d.join("node_guid")) else {
                continue;
            };
            let node_guid = parse_sysfs_guid(&node_guid).unwrap_or(0);
            let sys_image_guid = self
                .read(&d.join("sys_image_guid"))
                .ok()
                .and_then(|s| parse_sysfs_guid(&s))
                .unwrap_or(node_guid);
            let node_desc = self
                .read(&d.join("node_desc"))
                .map(|s| s.trim_end_matches(['\n', '\0']).to_owned())
                .unwrap_or_default();
            let mut nums: Vec<u8> = fs::read_dir(d.join("ports"))
                .map(|rd| {
                    rd.flatten()
                        .filter_map(|e| e.file_name().to_str()?.parse().ok())
                        .collect()
                })
                .unwrap_or_default();
            nums.sort_unstable();
            let num_ports = u8::try_from(nums.len()).unwrap_or(u8::MAX);
            for num in nums {
                let p = d.join("ports").join(num.to_string());
                let get = |f: &str| self.read(&p.join(f)).ok().and_then(|s| parse_sysfs_num(&s));
                let caps = self
                    .read(
                        &self
                            .debugfs()
                            .join(&dev)
                            .join(format!("port{num}/capabilities")),
                    )
                    .unwrap_or_default();
                let cap = |key: &str| {
                    caps.lines()
                        .find_map(|l| l.strip_prefix(key))
                        .and_then(parse_sysfs_num)
                        .unwrap_or(0)
                };
                let port_guid = self
                    .read(&p.join("gids/0"))
                    .ok()
                    .and_then(|g| parse_sysfs_gid_guid(&g))
                    .unwrap_or(0);
                view.ports.push(PortView {
                    ibdev: dev.clone(),
                    node_guid,
                    sys_image_guid,
                    node_desc: node_desc.clone(),
                    num_ports,
                    port_num: num,
                    port_guid,
                    lid: get("lid").and_then(|v| u32::try_from(v).ok()).unwrap_or(0),
                    state: get("state").and_then(|v| u8::try_from(v).ok()).unwrap_or(0),
                    cap_mask: u32::try_from(cap("cap_mask ")).unwrap_or(0),
                    cap_mask3: u16::try_from(cap("cap_mask3 ")).unwrap_or(0),
                });
                if view.sm_lid == 0 {
                    view.sm_lid = get("sm_lid")
                        .and_then(|v| u32::try_from(v).ok())
                        .unwrap_or(0);
                }
            }
        }
        Ok(view)
    }
}

#[cfg(test)]
mod tests {
    use opa_umad::fake_sysfs::{add_port, tmp_root};

    use super::*;

    #[test]
    fn snapshot_of_a_fake_root() {
        let root = tmp_root("opasim-sa-snapshot");
        let dbg = root.join("sys/kernel/debug/opasim");
        fs::create_dir_all(dbg.join("opasim0/port1")).unwrap();
        fs::write(
            dbg.join("devices"),
            "opasim0 index 0 lids 2\ngone index 1 lids 3\n",
        )
        .unwrap();
        fs::write(
            dbg.join("opasim0/port1/capabilities"),
            "cap_mask 0x00010000\ncap_mask3 0x2000\n",
        )
        .unwrap();
        let p = add_port(&root, "umad0", "opasim0", 1, "0x2", "4: ACTIVE");
        fs::write(p.join("sm_lid"), "0x2\n").unwrap();
        fs::create_dir_all(p.join("gids")).unwrap();
        fs::write(
            p.join("gids/0"),
            "fe80:0000:0000:0000:0011:7501:0000:0001\n",
        )
        .unwrap();
        let d = root.join("sys/class/infiniband/opasim0");
        fs::write(d.join("node_guid"), "0011:7501:0000:0000\n").unwrap();
        fs::write(d.join("node_desc"), "hostA hfi1_0\n").unwrap();
        let v = Source::new(&root).snapshot().unwrap();
        assert_eq!(v.sm_lid, 2);
        assert_eq!(
            v.ports,
            [PortView {
                cap_mask: 0x10000,
                ..PortView::vnic_host(0, 2, "hostA hfi1_0")
            }]
        );
        assert!(v.by_guid(0x0011_7501_0000_0001).is_some());
        assert!(v.by_lid(3).is_none());
        let _ = fs::remove_dir_all(&root);
    }
}
