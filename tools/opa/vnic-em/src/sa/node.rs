// SPDX-License-Identifier: GPL-2.0

//! A node port as a config names it ([`NodeRef`]) and as the SA describes it ([`SaNode`]),
//! apart from the client so that the config reads names without the SA's requests.

use std::fmt;

use opa_wire::sa::NodeRecord;

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
