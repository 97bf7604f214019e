// SPDX-License-Identifier: GPL-2.0-only

//! Transmit encapsulation: the 16B header and the HFI's metadata in front of an Ethernet
//! frame, as `opa_vnic_encap_skb()` builds them, from the vport's [`TxPlan`].

use crate::wire::{encap::TX_PARSE_LEN, tx_plan::TxPlan};
use core::mem::MaybeUninit;
use kernel::{net::skbuff::SkBuffHead, prelude::*};

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
