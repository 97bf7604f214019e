// SPDX-License-Identifier: GPL-2.0

//! A name an admin gives a node port resolved to the port the SA knows now (its LID may
//! have changed since the last apply).

use opa_wire::sa::records::NODE_TYPE_CA;
use opa_wire::sa::{
    NodeRecord, ATTR_NODE_RECORD, METHOD_GET, METHOD_GET_TABLE, SA_STATUS_NO_RECORDS,
};

use crate::fabric::Fabric;

use super::{active_hfi_ports, NodeRef, ResolveError, SaClient, SaError, SaNode};

impl<F: Fabric> SaClient<'_, F> {
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
