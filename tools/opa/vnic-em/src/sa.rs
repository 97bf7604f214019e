// SPDX-License-Identifier: GPL-2.0

//! The Subnet Administration client, beside the VEMA client ([`crate::client`]): what the
//! subnet manager knows of the fabric now, and the names admins give nodes resolved to the
//! LIDs the SM assigned.
//!
//! An admin names a vport's node by port GUID or by node description, as in OpenSM's
//! `partitions.conf`; the LID is the SM's and may change. At every apply the EM asks the SA
//! (NodeRecord Get by PortGUID or GetTable by NodeDesc), and `discover` reads the whole table
//! of NodeRecords and PortInfoRecords (CapabilityMask3 tells which ports carry VNIC).

use std::fmt;
use std::time::Duration;

use opa_wire::sa::{
    self, NodeRecord, PortInfoRecord, SaHdr, SaMad, ATTR_NODE_RECORD, ATTR_PORTINFO_RECORD,
    METHOD_GET, METHOD_GET_RESP, METHOD_GET_TABLE, METHOD_GET_TABLE_RESP, SA_STATUS_NO_RECORDS,
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

/// A node port as the SA describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaNode {
    /// Its LID now.
    pub lid: u16,
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
            lid: u16::try_from(r.lid).unwrap_or(0),
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

/// An SA client over the EM's transport.
pub struct SaClient<'a, F: Fabric> {
    fabric: &'a mut F,
    timeout: Duration,
    retries: u32,
    tid: u32,
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
        }
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
        for _ in 0..attempts {
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
                continue;
            };
            let m = SaMad::decode(&rsp).map_err(|e| SaError::Bad(format!("{e:?}")))?;
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

    /// Every node port the SA knows.
    pub fn node_table(&mut self) -> Result<Vec<NodeRecord>, SaError> {
        let (status, recs) = self.query(
            "NodeRecord GetTable",
            METHOD_GET_TABLE,
            ATTR_NODE_RECORD,
            0,
            &[],
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

    /// Every port's PortInfoRecord.
    pub fn port_info_table(&mut self) -> Result<Vec<PortInfoRecord>, SaError> {
        let (status, recs) = self.query(
            "PortInfoRecord GetTable",
            METHOD_GET_TABLE,
            ATTR_PORTINFO_RECORD,
            0,
            &[],
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

    /// The fabric's node ports, each marked with whether a VNIC driver serves it.
    pub fn discover(&mut self) -> Result<Vec<SaNode>, SaError> {
        let nodes = self.node_table()?;
        let ports = self.port_info_table()?;
        Ok(nodes
            .iter()
            .map(|r| {
                let mut n = SaNode::from_record(r);
                n.vnic = ports.iter().any(|p| p.lid == r.lid && p.is_eth_on_fabric());
                n
            })
            .collect())
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
        let nodes: Vec<SaNode> = recs
            .iter()
            .filter_map(|b| NodeRecord::decode(b).ok())
            .map(|n| SaNode::from_record(&n))
            .collect();
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
