// SPDX-License-Identifier: GPL-2.0

//! The Subnet Administration client, beside the VEMA client ([`crate::client`]): what the
//! subnet manager knows of the fabric now, and the names admins give nodes resolved to the
//! LIDs the SM assigned.
//!
//! An admin names a vport's node by port GUID or by node description, as in OpenSM's
//! `partitions.conf`; the LID is the SM's and may change. At every apply the EM asks the SA
//! (NodeRecord Get by PortGUID or GetTable by NodeDesc), and `discover` reads the whole table
//! of NodeRecords and PortInfoRecords (CapabilityMask3 tells which ports carry VNIC).
//!
//! The requests are made as opa-ff's opamgt makes them (`omgt_sa_*` of `opamgt/src/`), since
//! opa-fm's SA refuses others: every request carries the whole record as its template, even
//! when the mask names no component (opa-fm answers REQ_INVALID to data shorter than the
//! record); it goes on the P_Key 0xffff (opa-fm drops PortInfoRecord requests on any other)
//! and the port's SM SL (the transport's); an answer BUSY (the SM is activating the fabric,
//! or does not know the EM's port yet) is asked again after a pause that doubles, a bounded
//! number of times. Only HFI ports that are Active count: opa-fm's tables also hold switches
//! (NodeType 2, and every port of a switch) and ports in Init or Armed. LIDs are read whole
//! (32 bits).

use std::fmt;
use std::time::Duration;

use opa_wire::sa::records::{mlid_to_16b, NODE_TYPE_CA};
use opa_wire::sa::{
    self, McMemberRecord, NodeRecord, PortInfoRecord, SaHdr, SaMad, ATTR_MCMEMBER_RECORD,
    ATTR_NODE_RECORD, ATTR_PORTINFO_RECORD, MAD_STATUS_BUSY, METHOD_GET, METHOD_GET_RESP,
    METHOD_GET_TABLE, METHOD_GET_TABLE_RESP, SA_STATUS_NO_RECORDS,
};

use crate::fabric::{Fabric, FabricError};

/// How a config names a node port.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeRef {
    /// By LID (the SM's; fine on a fabric whose LIDs never change).
    Lid(u16),
    /// By port GUID (`0x0011750101000001`): what admins write, stable across LID changes.
    Guid(u64),
    /// By node description (`hostA hfi1_0`), which must be unique on the fabric.
    Desc(String),
}

impl NodeRef {
    /// Reads a `node = "..."` value: `0x` and 16 hexadecimal digits is a GUID, anything else
    /// a node description. `None` for an empty or over-long (64 bytes) description, and for
    /// `0x` and hexadecimal digits not 16 of them (a GUID mistyped, not a description).
    pub fn parse(s: &str) -> Option<NodeRef> {
        let hex = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"));
        if let Some(h) = hex {
            if !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()) {
                return match h.len() {
                    16 => u64::from_str_radix(h, 16).ok().map(NodeRef::Guid),
                    _ => None,
                };
            }
        }
        (!s.is_empty() && s.len() <= 64).then(|| NodeRef::Desc(s.to_owned()))
    }
}

impl fmt::Display for NodeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeRef::Lid(l) => write!(f, "LID {l:#06x}"),
            NodeRef::Guid(g) => write!(f, "GUID {g:#018x}"),
            NodeRef::Desc(d) => write!(f, "\"{d}\""),
        }
    }
}

/// PortState Active.
const PORT_ACTIVE: u8 = 4;

/// A node port as the SA describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaNode {
    /// Its LID now (32 bits: OPA's extended LIDs are read whole).
    pub lid: u32,
    /// The port's GUID.
    pub port_guid: u64,
    /// The node's GUID.
    pub node_guid: u64,
    /// The port's number on the node.
    pub port_num: u8,
    /// The node description.
    pub desc: String,
    /// CapabilityMask3 has IsEthOnFabricSupported: a VNIC driver serves the port.
    pub vnic: bool,
}

impl SaNode {
    /// The node port a NodeRecord describes (not yet known to carry VNIC).
    pub fn from_record(r: &NodeRecord) -> SaNode {
        SaNode {
            lid: r.lid,
            port_guid: r.port_guid,
            node_guid: r.node_guid,
            port_num: r.local_port_num,
            desc: r.desc().to_owned(),
            vnic: false,
        }
    }
}

/// Why an SA query failed.
#[derive(Debug)]
pub enum SaError {
    /// No answer after every attempt (no SA, or it is down).
    Timeout {
        /// Attempts made.
        attempts: u32,
    },
    /// The SA answered with a non-zero status.
    Status {
        /// The query.
        what: &'static str,
        /// The MAD status.
        status: u16,
    },
    /// The answer cannot be read.
    Bad(String),
    /// The transport failed (no SM LID, no umad device, ...).
    Transport(FabricError),
    /// Every answer was BUSY, up to the last attempt.
    Busy {
        /// The query.
        what: &'static str,
        /// BUSY answers received.
        answers: u32,
        /// Time spent waiting between them.
        waited: Duration,
    },
    /// The EM's port is a limited member of the management partition (its P_Key table has
    /// no 0xffff): opa-fm's SA drops its PortInfoRecord queries, and the switches its VEMA
    /// MADs to ports that are not full members.
    LimitedMember(String),
}

impl fmt::Display for SaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaError::Timeout { attempts } => write!(
                f,
                "the subnet administrator did not answer ({attempts} attempt(s)); is the SM running?"
            ),
            SaError::Status { what, status } => {
                write!(f, "the subnet administrator refused {what}: status {status:#06x}")
            }
            SaError::Bad(m) => write!(f, "bad answer from the subnet administrator: {m}"),
            SaError::Transport(e) => write!(f, "{e}"),
            SaError::Busy {
                what,
                answers,
                waited,
            } => write!(
                f,
                "the subnet administrator answered {what} BUSY {answers} times over {:.1} s: the \
                 SM is still bringing the fabric up (or does not know this port yet); try again \
                 once its sweep has ended",
                waited.as_secs_f64()
            ),
            SaError::LimitedMember(port) => write!(
                f,
                "{port} is a limited member of the management partition (its P_Key table has \
                 0x7fff, not 0xffff): the SA does not answer its PortInfoRecord queries and the \
                 switches drop its VEMA MADs; add this port to the Admin vFabric (opafm.xml: \
                 the Admin vFabric's <Member>, e.g. a device group of the EM's node)"
            ),
        }
    }
}

impl std::error::Error for SaError {}

impl From<FabricError> for SaError {
    fn from(e: FabricError) -> Self {
        SaError::Transport(e)
    }
}

/// Why a name does not give one node port.
#[derive(Debug)]
pub enum ResolveError {
    /// No port has the name.
    Unknown(NodeRef),
    /// More than one port has the description.
    Ambiguous(NodeRef, Vec<SaNode>),
    /// The SA could not be asked.
    Sa(SaError),
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::Unknown(r) => {
                write!(
                    f,
                    "no port of the fabric is {r} (the SA knows no such node)"
                )
            }
            ResolveError::Ambiguous(r, n) => {
                write!(f, "{} ports are {r}:", n.len())?;
                for p in n {
                    write!(f, " GUID {:#018x} LID {:#06x};", p.port_guid, p.lid)?;
                }
                write!(f, " name the port by GUID")
            }
            ResolveError::Sa(e) => write!(f, "{e}"),
        }
    }
}

/// How many BUSY answers the client takes before it gives up.
pub const BUSY_RETRIES: u32 = 8;
/// The pause after the first BUSY answer; it doubles after each, up to [`BUSY_PAUSE_MAX`].
pub const BUSY_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between two BUSY answers.
pub const BUSY_PAUSE_MAX: Duration = Duration::from_secs(2);

/// The MGID of the multicast group whose MLID a vesw's broadcast and unknown multicast go to,
/// when the config names none: the IPv4 broadcast group of the Default vFabric (P_Key 0x8001),
/// `0xff12401b80010000:0x00000000ffffffff`, which opa-fm's default opafm.xml pre-creates
/// (`<MulticastGroup><Create>1</Create><PKey>0x0001</PKey>` without MGIDs: the implicit IPoIB
/// groups of its `fm_xml.c`, broadcast first).
pub const DEFAULT_MCAST_MGID: [u8; 16] = [
    0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
];

/// An MGID as opafm.xml writes it: two 64-bit hexadecimal numbers and a colon.
pub fn mgid_text(g: &[u8; 16]) -> String {
    let mut hi = [0u8; 8];
    let mut lo = [0u8; 8];
    hi.copy_from_slice(&g[..8]);
    lo.copy_from_slice(&g[8..]);
    format!(
        "{:#018x}:{:#018x}",
        u64::from_be_bytes(hi),
        u64::from_be_bytes(lo)
    )
}

/// Reads an MGID written as opafm.xml writes it (`0xff12401b80010000:0x00000000ffffffff`).
pub fn parse_mgid(s: &str) -> Option<[u8; 16]> {
    let (a, b) = s.split_once(':')?;
    let num = |x: &str| {
        let h = x
            .trim()
            .strip_prefix("0x")
            .or_else(|| x.trim().strip_prefix("0X"))?;
        (!h.is_empty() && h.len() <= 16)
            .then(|| u64::from_str_radix(h, 16).ok())
            .flatten()
    };
    let mut g = [0u8; 16];
    g[..8].copy_from_slice(&num(a)?.to_be_bytes());
    g[8..].copy_from_slice(&num(b)?.to_be_bytes());
    Some(g)
}

/// An SA client over the EM's transport.
pub struct SaClient<'a, F: Fabric> {
    fabric: &'a mut F,
    timeout: Duration,
    retries: u32,
    tid: u32,
    busy_retries: u32,
    busy_pause: Duration,
}

impl<'a, F: Fabric> SaClient<'a, F> {
    /// A client waiting `timeout` for each answer, with `retries` more attempts.
    pub fn new(fabric: &'a mut F, timeout: Duration, retries: u32) -> Self {
        let tid = std::process::id().wrapping_mul(0x0002_0005) | 0x8000_0000;
        SaClient {
            fabric,
            timeout,
            retries,
            tid,
            busy_retries: BUSY_RETRIES,
            busy_pause: BUSY_PAUSE,
        }
    }

    /// The client taking `retries` BUSY answers, pausing `pause` after the first (tests).
    pub fn with_busy(mut self, retries: u32, pause: Duration) -> Self {
        self.busy_retries = retries;
        self.busy_pause = pause;
        self
    }

    /// One query with retries: the answer's status and records (one for a GetResp).
    fn query(
        &mut self,
        what: &'static str,
        method: u8,
        attr: u16,
        mask: u64,
        template: &[u8],
    ) -> Result<(u16, Vec<Vec<u8>>), SaError> {
        let attempts = self.retries.saturating_add(1);
        let mut silent = 0u32;
        let mut busy = 0u32;
        let mut pause = self.busy_pause;
        let mut waited = Duration::ZERO;
        while silent < attempts {
            self.tid = self.tid.wrapping_add(1);
            let mut mad = vec![0u8; sa::SA_DATA_OFFSET + template.len()];
            let sa_hdr = SaHdr {
                comp_mask: mask,
                ..SaHdr::default()
            };
            let n = sa::encode(
                &mut mad,
                method,
                0,
                u64::from(self.tid),
                attr,
                0,
                &sa_hdr,
                template,
            )
            .map_err(|e| SaError::Bad(format!("{e:?}")))?;
            mad.truncate(n);
            let Some(rsp) = self.fabric.sa_request(&mad, self.timeout)? else {
                silent = silent.saturating_add(1);
                continue;
            };
            let m = SaMad::decode(&rsp).map_err(|e| SaError::Bad(format!("{e:?}")))?;
            if m.hdr.status == MAD_STATUS_BUSY {
                busy = busy.saturating_add(1);
                if busy > self.busy_retries {
                    return Err(SaError::Busy {
                        what,
                        answers: busy,
                        waited,
                    });
                }
                std::thread::sleep(pause);
                waited = waited.saturating_add(pause);
                pause = pause
                    .saturating_mul(2)
                    .min(BUSY_PAUSE_MAX.max(self.busy_pause));
                continue;
            }
            let want = if method == METHOD_GET {
                METHOD_GET_RESP
            } else {
                METHOD_GET_TABLE_RESP
            };
            if m.hdr.method != want || m.hdr.attr_id != attr {
                return Err(SaError::Bad(format!(
                    "method {:#04x} attribute {:#06x} for {what}",
                    m.hdr.method, m.hdr.attr_id
                )));
            }
            let recs = if method == METHOD_GET {
                if m.hdr.status == 0 {
                    vec![m.data.to_vec()]
                } else {
                    vec![]
                }
            } else {
                m.records().map(<[u8]>::to_vec).collect()
            };
            return Ok((m.hdr.status, recs));
        }
        Err(SaError::Timeout { attempts })
    }

    /// Every NodeRecord the SA has (switches and ports not yet Active included).
    pub fn node_table(&mut self) -> Result<Vec<NodeRecord>, SaError> {
        // The whole record as template, as opamgt sends it: opa-fm refuses less.
        let mut t = vec![0u8; NodeRecord::SIZE];
        NodeRecord::ZERO
            .encode(&mut t)
            .map_err(|e| SaError::Bad(format!("{e:?}")))?;
        let (status, recs) = self.query(
            "NodeRecord GetTable",
            METHOD_GET_TABLE,
            ATTR_NODE_RECORD,
            0,
            &t,
        )?;
        if status != 0 {
            return Err(SaError::Status {
                what: "NodeRecord GetTable",
                status,
            });
        }
        recs.iter()
            .map(|r| NodeRecord::decode(r).map_err(|e| SaError::Bad(format!("NodeRecord: {e:?}"))))
            .collect()
    }

    /// Every port's PortInfoRecord. Only a full member of the management partition may ask
    /// (opa-fm drops the request otherwise): from a limited member's port, the error says so
    /// at once rather than after the timeouts.
    pub fn port_info_table(&mut self) -> Result<Vec<PortInfoRecord>, SaError> {
        if self.fabric.limited_member() {
            return Err(SaError::LimitedMember(self.fabric.describe()));
        }
        let t = vec![0u8; PortInfoRecord::SIZE];
        let (status, recs) = self.query(
            "PortInfoRecord GetTable",
            METHOD_GET_TABLE,
            ATTR_PORTINFO_RECORD,
            0,
            &t,
        )?;
        if status != 0 {
            return Err(SaError::Status {
                what: "PortInfoRecord GetTable",
                status,
            });
        }
        recs.iter()
            .map(|r| {
                PortInfoRecord::decode(r)
                    .map_err(|e| SaError::Bad(format!("PortInfoRecord: {e:?}")))
            })
            .collect()
    }

    /// The fabric's HFI ports that are Active, each marked with whether a VNIC driver serves
    /// it: the NodeRecords of NodeType HFI whose PortInfoRecord (by LID and port number) says
    /// Active. Switches (NodeType 2, their port 0 and every other port) are left out, and so
    /// are ports in Init or Armed, whose LIDs may still change and which carry no traffic.
    pub fn discover(&mut self) -> Result<Vec<SaNode>, SaError> {
        let nodes = self.node_table()?;
        let ports = self.port_info_table()?;
        Ok(active_hfi_ports(&nodes, &ports))
    }

    /// The 16B DLID of the multicast group `mgid` (the MLID of its McMemberRecord, a
    /// McMemberRecord GetTable by MGID, the whole record as template); `None` when the SA has
    /// no such group.
    pub fn mcast_dlid(&mut self, mgid: &[u8; 16]) -> Result<Option<u32>, SaError> {
        let t = McMemberRecord {
            mgid: *mgid,
            ..McMemberRecord::default()
        };
        let mut b = vec![0u8; McMemberRecord::SIZE];
        t.encode(&mut b)
            .map_err(|e| SaError::Bad(format!("{e:?}")))?;
        let what = "McMemberRecord GetTable by MGID";
        let (status, recs) = self.query(
            what,
            METHOD_GET_TABLE,
            ATTR_MCMEMBER_RECORD,
            McMemberRecord::COMP_MGID,
            &b,
        )?;
        if status == SA_STATUS_NO_RECORDS {
            return Ok(None);
        }
        if status != 0 {
            return Err(SaError::Status { what, status });
        }
        let Some(r) = recs
            .iter()
            .filter_map(|r| McMemberRecord::decode(r).ok())
            .find(|r| r.mgid == *mgid)
        else {
            return Ok(None);
        };
        mlid_to_16b(r.mlid).map(Some).ok_or_else(|| {
            SaError::Bad(format!(
                "group {} has MLID {:#x}, not a multicast LID",
                mgid_text(mgid),
                r.mlid
            ))
        })
    }

    /// The node port `r` names now.
    pub fn resolve(&mut self, r: &NodeRef) -> Result<SaNode, ResolveError> {
        let mut t = NodeRecord::ZERO;
        let (what, method, mask) = match r {
            NodeRef::Lid(l) => {
                t.lid = u32::from(*l);
                ("NodeRecord Get by LID", METHOD_GET, NodeRecord::COMP_LID)
            }
            NodeRef::Guid(g) => {
                t.port_guid = *g;
                (
                    "NodeRecord Get by PortGUID",
                    METHOD_GET,
                    NodeRecord::COMP_PORTGUID,
                )
            }
            // A table, so that a name two ports share is reported with both.
            NodeRef::Desc(d) => {
                t.node_desc = NodeRecord::desc_bytes(d);
                (
                    "NodeRecord GetTable by NodeDesc",
                    METHOD_GET_TABLE,
                    NodeRecord::COMP_NODEDESC,
                )
            }
        };
        let mut b = vec![0u8; NodeRecord::SIZE];
        t.encode(&mut b)
            .map_err(|e| ResolveError::Sa(SaError::Bad(format!("{e:?}"))))?;
        let (status, recs) = self
            .query(what, method, ATTR_NODE_RECORD, mask, &b)
            .map_err(ResolveError::Sa)?;
        if status == SA_STATUS_NO_RECORDS {
            return Err(ResolveError::Unknown(r.clone()));
        }
        if status != 0 {
            return Err(ResolveError::Sa(SaError::Status { what, status }));
        }
        let nodes: Vec<NodeRecord> = recs
            .iter()
            .filter_map(|b| NodeRecord::decode(b).ok())
            .filter(|n| n.node_type == NODE_TYPE_CA)
            .collect();
        let nodes = if nodes.is_empty() {
            Vec::new()
        } else {
            let ports = self.port_info_table().map_err(ResolveError::Sa)?;
            active_hfi_ports(&nodes, &ports)
        };
        match nodes.len() {
            0 => Err(ResolveError::Unknown(r.clone())),
            1 => Ok(nodes
                .into_iter()
                .next()
                .ok_or(ResolveError::Unknown(r.clone()))?),
            _ => Err(ResolveError::Ambiguous(r.clone(), nodes)),
        }
    }
}

/// The NodeRecords of HFIs whose port is Active by its PortInfoRecord, marked with whether
/// a VNIC driver serves them (CapabilityMask3).
pub fn active_hfi_ports(nodes: &[NodeRecord], ports: &[PortInfoRecord]) -> Vec<SaNode> {
    nodes
        .iter()
        .filter(|r| r.node_type == NODE_TYPE_CA && r.lid != 0)
        .filter_map(|r| {
            let p = ports
                .iter()
                .find(|p| p.lid == r.lid && p.port_num == r.local_port_num)?;
            (p.port_state == PORT_ACTIVE).then(|| SaNode {
                vnic: p.is_eth_on_fabric(),
                ..SaNode::from_record(r)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            NodeRef::parse("0x0011750101000001"),
            Some(NodeRef::Guid(0x0011_7501_0100_0001))
        );
        assert_eq!(NodeRef::parse("0x11"), None, "a GUID mistyped");
        assert_eq!(
            NodeRef::parse("0xhost"),
            Some(NodeRef::Desc("0xhost".into()))
        );
        assert_eq!(
            NodeRef::parse("hostA hfi1_0"),
            Some(NodeRef::Desc("hostA hfi1_0".into()))
        );
        assert_eq!(NodeRef::parse(""), None);
        assert_eq!(NodeRef::parse(&"x".repeat(65)), None);
        assert_eq!(NodeRef::Guid(1).to_string(), "GUID 0x0000000000000001");
    }
}
