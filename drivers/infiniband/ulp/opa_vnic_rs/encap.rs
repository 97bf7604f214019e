// SPDX-License-Identifier: GPL-2.0-only

//! Transmit encapsulation: the 16B header and the HFI's metadata in front of an Ethernet
//! frame, as `opa_vnic_encap_skb()` builds them, from the decisions of [`crate::wire::encap`].

use crate::wire::{
    encap::{self as rules, TxFrame, FLOW_TBL_SIZE, TX_PARSE_LEN},
    hdr16b::{Encap, HDR_LEN},
    vema_info::VeswPortInfo,
};
use kernel::{net::skbuff::SkBuffHead, prelude::*};

/// Length of the metadata the HFI reads in front of the 16B header
/// (`struct opa_vnic_skb_mdata`: vl, entropy, flags, reserved).
const MDATA_LEN: usize = 4;

/// Metadata flag: the frame has no destination (no DLID); the HFI drops and counts it.
pub(crate) const MDATA_ENCAP_ERR: u8 = 0x1;

/// What transmit needs of a vport: its configuration and its flow to default port table.
pub(crate) struct TxInfo {
    pub(crate) info: VeswPortInfo,
    pub(crate) flow_tbl: [u8; FLOW_TBL_SIZE],
}

/// Puts the 16B header and the HFI metadata in front of the Ethernet frame in `skb` (whose
/// head is its own, with room for both, and whose frame is at least
/// [`ETH_ZLEN`](crate::wire::encap::ETH_ZLEN) bytes: shorter ones fail). The frame may lie
/// partly in page fragments (the HFI driver advertises scatter-gather): its headers are read
/// wherever they are, as the C driver reads them through the skb's header offsets.
///
/// `mac_dlid` looks the destination MAC up in the vport's MAC table (0: no entry). A frame
/// with no destination LID, or whose header cannot be encoded (an SC or frame length that
/// does not fit its field, which the C driver would write over neighbouring fields), gets
/// [`MDATA_ENCAP_ERR`] and a zero header, for the HFI to drop and count.
///
/// This runs for every frame sent: the frame's headers are read through one fixed-size array
/// (a view of the linear part, or a copy when the headers straddle a fragment) and both
/// headers are written with one push into another, so that nothing on the way is a bounds
/// check, a copy call or a second walk of the data.
pub(crate) fn encap_skb(
    tx: &TxInfo,
    mac_dlid: impl FnOnce(&[u8; 6]) -> u32,
    skb: &mut SkBuffHead,
) -> Result {
    let entropy = rules::entropy_from_hash(skb.hash());
    let eth_len = skb.len() as usize;
    let protocol = skb.protocol();
    let mut copy = [0u8; TX_PARSE_LEN];
    let TxFrame {
        dmac,
        vlan_tci,
        class,
    } = TxFrame::parse(skb.header(0, &mut copy).ok_or(EINVAL)?, protocol);

    let info = &tx.info;
    let def_port = rules::def_port(&tx.flow_tbl, entropy);
    let dlid = info.vesw.select_dlid(mac_dlid(&dmac), &dmac, def_port);
    let encap = Encap {
        slid: info.vport.encap_slid,
        dlid,
        sc: info.vport.select_sc(&dmac, vlan_tci),
        rc: info.vesw.select_rc(class),
        pkey: info.vesw.pkey,
        entropy,
        vesw_id: info.vesw.vesw_id,
    };
    // SC and VL from the same tag, so that the pair agrees with the fabric's SC-to-VL table
    // whenever the EM's tables do (hfi1 drops the packet otherwise).
    let vl = info.vport.select_vl(&dmac, vlan_tci);

    let [m_vl, m_entropy, m_flags, m_rsvd, hdr @ ..] =
        skb.push_array::<{ MDATA_LEN + HDR_LEN }>()?;
    let written = dlid != 0 && encap.write_header(eth_len, hdr).is_ok();
    if !written {
        *hdr = [0; HDR_LEN];
    }
    let flags = if written { 0 } else { MDATA_ENCAP_ERR };
    (*m_vl, *m_entropy, *m_flags, *m_rsvd) = (vl, entropy, flags, 0);
    Ok(())
}
