// SPDX-License-Identifier: GPL-2.0-only

//! The SMA's node attributes: NodeInfo (OPA, and the IB one opamgt asks first) and
//! NodeDescription, as hfi1 answers them (`__subn_get_opa_nodeinfo()`, `subn_get_nodeinfo()`,
//! `__subn_get_opa_nodedesc()`).

use crate::{
    hfi::{Hfi, PART_ID, VENDOR_ID},
    port::{Port, PKEY_TABLE_LEN},
    sma::{invalid, Answer, Sma, Step, OPA_SM_CLASS_VERSION, STATUS_INVALID_FIELD},
};
use kernel::{
    rdma::provider::{mad::OPA_BASE_VERSION, ProviderDevice},
    sync::Arc,
};

/// The bytes of an OPA NodeInfo (`struct opa_node_info`).
pub(crate) const NODE_INFO_LEN: usize = 44;

/// The bytes of a NodeDescription.
pub(crate) const NODE_DESC_LEN: usize = 64;

/// Node type: channel adapter (an HFI).
const NODE_TYPE_CA: u8 = 1;

/// The 3 bytes of the vendor OUI, as NodeInfo carries them.
fn oui() -> [u8; 3] {
    let b = VENDOR_ID.to_be_bytes();
    [b[1], b[2], b[3]]
}

/// Get(NodeInfo) (`__subn_get_opa_nodeinfo()`): no attribute modifier; the port's GUID is
/// port 1's the node's, as on hfi1.
pub(crate) fn get_nodeinfo(
    sma: &Sma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Step {
    let guid = sma.dev.data().guid;
    if am != 0 || guid == 0 || sma.port.guid == 0 || max < NODE_INFO_LEN {
        return invalid(ans);
    }
    ans.put_u8(at, OPA_BASE_VERSION);
    ans.put_u8(at + 1, OPA_SM_CLASS_VERSION);
    ans.put_u8(at + 2, NODE_TYPE_CA);
    ans.put_u8(at + 3, sma.dev.port_count() as u8);
    ans.put_be64(at + 8, guid);
    ans.put_be64(at + 16, guid);
    ans.put_be64(at + 24, sma.port.guid);
    ans.put_be16(at + 32, PKEY_TABLE_LEN as u16);
    ans.put_be16(at + 34, PART_ID as u16);
    ans.put_be32(at + 36, 0);
    ans.put_u8(at + 40, sma.port.num as u8);
    ans.put(at + 41, &oui());
    Step::Added(NODE_INFO_LEN)
}

/// Get(NodeInfo) of an IB SMP (`subn_get_nodeinfo()`): the IB layout (`struct
/// ib_node_info`) with OPA's base and class version, which is how opamgt's `port_is_opa()`
/// tells an OPA port.
pub(crate) fn get_ib_nodeinfo(
    dev: &ProviderDevice<Hfi>,
    port: &Arc<Port>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
) {
    let guid = dev.data().guid;
    if am != 0 || guid == 0 || port.guid == 0 {
        ans.fail(STATUS_INVALID_FIELD);
        return;
    }
    ans.put_u8(at, OPA_BASE_VERSION);
    ans.put_u8(at + 1, OPA_SM_CLASS_VERSION);
    ans.put_u8(at + 2, NODE_TYPE_CA);
    ans.put_u8(at + 3, dev.port_count() as u8);
    ans.put_be64(at + 4, guid);
    ans.put_be64(at + 12, guid);
    ans.put_be64(at + 20, port.guid);
    ans.put_be16(at + 28, PKEY_TABLE_LEN as u16);
    ans.put_be16(at + 30, PART_ID as u16);
    ans.put_be32(at + 32, 0);
    ans.put_u8(at + 36, port.num as u8);
    ans.put(at + 37, &oui());
}

/// Get(NodeDescription) (`__subn_get_opa_nodedesc()`): the description the IB core shows in
/// sysfs, as `rdma-ndd` or an admin set it.
pub(crate) fn get_nodedesc(
    sma: &Sma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Step {
    if am != 0 || max < NODE_DESC_LEN {
        return invalid(ans);
    }
    ans.put(at, &sma.dev.data().node_desc());
    Step::Added(NODE_DESC_LEN)
}
