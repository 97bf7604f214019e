// SPDX-License-Identifier: GPL-2.0-only

//! Transmit encapsulation: the 16B header and the HFI's metadata in front of an Ethernet
//! frame, as `opa_vnic_encap_skb()` builds them, from the vport's [`TxPlan`].

use crate::wire::{
    encap::{ETH_ZLEN, TX_PARSE_LEN},
    tx_plan::{TxPlan, MDATA_ENCAP_ERR, MDATA_LEN, TX_HDR_LEN},
};
use core::mem::MaybeUninit;
use kernel::{
    bindings,
    net::skbuff::{SkBuff, SkBuffHead},
    prelude::*,
    rdma::vnic::{SKB_MDATA_ENCAP_ERR, SKB_MDATA_LEN},
};

// The wire module is shared with host tools and keeps its own copies of the kernel's
// constants: they must be the kernel's (hfi1's ABI, `include/rdma/opa_vnic.h`, and
// `ETH_ZLEN`).
const _: () = assert!(MDATA_LEN == SKB_MDATA_LEN);
const _: () = assert!(MDATA_ENCAP_ERR == SKB_MDATA_ENCAP_ERR);
const _: () = assert!(ETH_ZLEN == bindings::ETH_ZLEN as usize);

/// The headroom a frame needs for the metadata and the 16B header, rounded up to 8
/// (`OPA_VNIC_SKB_HEADROOM`).
pub(crate) const SKB_HEADROOM: u16 = ((TX_HDR_LEN + 7) & !7) as u16;

/// Prepares a frame the stack handed over for the HFI, as `opa_netdev_start_xmit()` does:
/// pads it to [`ETH_ZLEN`], makes its head its own with [`SKB_HEADROOM`] bytes before the
/// frame (`skb_cow_head()`, so that a clone sharing the head, a tap's, is not written under;
/// the C driver pushes into a shared head), and puts the headers in front ([`encap_skb`]).
///
/// On `Err` the frame was dropped (freed); the caller counts it (the C driver does not count
/// a failed pad).
#[inline(always)]
pub(crate) fn xmit_skb(
    plan: &TxPlan,
    mac_dlid: impl FnOnce(&[u8; 6]) -> u32,
    skb: SkBuff,
) -> Result<SkBuff> {
    let mut skb = skb
        .put_padto(ETH_ZLEN as u32)?
        .cow_head(u32::from(SKB_HEADROOM))?;
    encap_skb(plan, mac_dlid, &mut skb)?;
    Ok(skb.into_inner())
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
/// [`MDATA_ENCAP_ERR`](crate::wire::tx_plan::MDATA_ENCAP_ERR) and a zero header, for the HFI
/// to drop and count.
///
/// This runs for every frame sent: the frame's headers are read in place (copied only when
/// they straddle a fragment), the decisions are table lookups of the plan, and both headers
/// go into the headroom with one push.
#[inline]
pub(crate) fn encap_skb(
    plan: &TxPlan,
    mac_dlid: impl FnOnce(&[u8; 6]) -> u32,
    skb: &mut SkBuffHead,
) -> Result {
    let hash = skb.hash();
    let eth_len = skb.len() as usize;
    let mut copy = MaybeUninit::<[u8; TX_PARSE_LEN]>::uninit();
    let frame = skb.header(0, &mut copy).ok_or(EINVAL)?;
    let hdr = plan.encap(frame, || skb.protocol(), hash, eth_len, mac_dlid);
    skb.push_bytes(hdr)
}
