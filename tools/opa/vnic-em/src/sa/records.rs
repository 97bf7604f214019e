// SPDX-License-Identifier: GPL-2.0

//! The SA's tables read and filtered: every NodeRecord and PortInfoRecord, the HFI ports
//! that are Active among them (`discover`), and a multicast group's MLID.

use opa_wire::sa::records::{mlid16_to_16b, NODE_TYPE_CA};
use opa_wire::sa::{
    McMemberRecord, NodeRecord, PortInfoRecord, ATTR_MCMEMBER_RECORD, ATTR_NODE_RECORD,
    ATTR_PORTINFO_RECORD, METHOD_GET_TABLE, SA_STATUS_NO_RECORDS,
};

use crate::fabric::Fabric;

use super::{mgid_text, SaClient, SaError, SaNode};

/// PortState Active.
const PORT_ACTIVE: u8 = 4;

impl<F: Fabric> SaClient<'_, F> {
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
        let (status, recs) = self.query_ib(
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
        mlid16_to_16b(r.mlid).map(Some).ok_or_else(|| {
            SaError::Bad(format!(
                "group {} has MLID {:#x}, not a multicast LID",
                mgid_text(mgid),
                r.mlid
            ))
        })
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
