// SPDX-License-Identifier: GPL-2.0-only

//! Transmit encapsulation: the 16B header and the HFI's metadata in front of an Ethernet
//! frame, as `opa_vnic_encap_skb()` builds them, from the decisions of [`crate::wire::encap`].

use crate::wire::{
    encap::{self as rules, RcClass, FLOW_TBL_SIZE},
    hdr16b::{Encap, HDR_LEN},
    vema_info::VeswPortInfo,
};
use kernel::{net::skbuff::SkBuffMut, prelude::*};

/// Length of the metadata the HFI reads in front of the 16B header
/// (`struct opa_vnic_skb_mdata`: vl, entropy, flags, reserved).
pub(crate) const MDATA_LEN: u32 = 4;

/// Metadata flag: the frame has no destination (no DLID); the HFI drops and counts it.
pub(crate) const MDATA_ENCAP_ERR: u8 = 0x1;

const ETH_P_8021Q: u16 = 0x8100;
const ETH_P_8021AD: u16 = 0x88a8;
const ETH_P_IP: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86dd;

/// What transmit needs of a vport: its configuration and its flow to default port table.
pub(crate) struct TxInfo {
    pub(crate) info: VeswPortInfo,
    pub(crate) flow_tbl: [u8; FLOW_TBL_SIZE],
}

/// The protocol after one VLAN tag in the frame (`vlan_get_protocol()`), and the IPv4
/// protocol or IPv6 next header when that is IP.
fn l3_l4(frame: &[u8], skb_protocol: u16) -> (u16, u8) {
    let be16 = |at: usize| {
        frame
            .get(at..at + 2)
            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
    };
    let (l3, ip_at) = match skb_protocol {
        ETH_P_8021Q | ETH_P_8021AD => (be16(16), 18),
        p => (p, 14),
    };
    let l4_at = match l3 {
        ETH_P_IP => ip_at + 9,
        ETH_P_IPV6 => ip_at + 6,
        _ => return (l3, 0),
    };
    (l3, frame.get(l4_at).copied().unwrap_or(0))
}

/// Puts the 16B header and the HFI metadata in front of the Ethernet frame in `skb` (whose
/// head is its own, with room for both).
///
/// `mac_dlid` looks the destination MAC up in the vport's MAC table (0: no entry). A frame
/// with no destination LID, or whose header cannot be encoded (an SC or frame length that
/// does not fit its field, which the C driver would write over neighbouring fields), gets
/// [`MDATA_ENCAP_ERR`] and a zero header, for the HFI to drop and count.
pub(crate) fn encap_skb(
    tx: &TxInfo,
    mac_dlid: impl FnOnce(&[u8; 6]) -> u32,
    skb: &mut SkBuffMut,
) -> Result {
    let frame = skb.data();
    let dmac = rules::frame_dmac(frame).ok_or(EINVAL)?;
    let frame_tci = rules::frame_vlan_tci(frame);
    let (l3, l4) = l3_l4(frame, skb.protocol());
    let eth_len = skb.len() as usize;

    let info = &tx.info;
    let entropy = rules::entropy_from_hash(skb.hash());
    let def_port = rules::def_port(&tx.flow_tbl, entropy);
    let dlid = info.vesw.select_dlid(mac_dlid(&dmac), &dmac, def_port);
    let encap = Encap {
        slid: info.vport.encap_slid,
        dlid,
        sc: info.vport.select_sc(&dmac, frame_tci),
        rc: info.vesw.select_rc(RcClass::classify(l3, l4)),
        pkey: info.vesw.pkey,
        entropy,
        vesw_id: info.vesw.vesw_id,
    };
    let header = if dlid == 0 {
        None
    } else {
        encap.header(eth_len).ok()
    };

    let hdr = skb.push(HDR_LEN as u32)?;
    match header {
        Some(h) => h.encode(hdr).map_err(|_| EINVAL)?,
        None => hdr.fill(0),
    }
    // SC and VL from the same tag, so that the pair agrees with the fabric's SC-to-VL table
    // whenever the EM's tables do (hfi1 drops the packet otherwise).
    let vl = info.vport.select_vl(&dmac, frame_tci);
    let flags = if header.is_some() { 0 } else { MDATA_ENCAP_ERR };
    skb.push(MDATA_LEN)?
        .copy_from_slice(&[vl, entropy, flags, 0]);
    Ok(())
}
