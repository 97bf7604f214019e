// SPDX-License-Identifier: GPL-2.0

//! The transmit decisions of a vport, made once when the EM changes its configuration rather
//! than for every frame: what [`encap`](super::encap) and [`hdr16b`](super::hdr16b) decide
//! from a frame and the vport's info, as tables indexed by what the frame says, and the 16B
//! header's words with the vport's fields already in place.
//!
//! [`TxPlan::encap`] gives, for a frame, exactly the bytes the rules give ([`Encap::header`],
//! [`PerVeswPortInfo::select_sc`], [`VeswInfo::select_dlid`] and the others, which are
//! `opa_vnic_encap_skb()`'s); the host tests check that for any configuration and frame.
//!
//! [`Encap::header`]: super::hdr16b::Encap::header
//! [`PerVeswPortInfo::select_sc`]: super::vema_info::PerVeswPortInfo::select_sc
//! [`VeswInfo::select_dlid`]: super::vema_info::VeswInfo::select_dlid

use super::encap::{
    entropy_from_hash, flow_id, is_local_ether_addr, vlan_pcp, RcClass, TxFrame, FLOW_TBL_SIZE,
    TX_PARSE_LEN,
};
use super::hdr16b::{HDR_LEN, ICRC_TAIL_LEN, L2_16B, L4_ETHR, MAX_ETH_FRAME, MAX_LID, MAX_SC};
use super::vema_info::{VeswPortInfo, MAX_NUM_PCP, VESW_MAX_NUM_DEF_PORT};
use super::vema_info_bytes::{VeswPortInfoBytes, SIZE as INFO_SIZE};
use super::vema_mac::ETH_ALEN;
use core::borrow::Borrow;

/// Length of the metadata the HFI reads in front of the 16B header
/// (`struct opa_vnic_skb_mdata`: vl, entropy, flags, reserved).
pub const MDATA_LEN: usize = 4;

/// Metadata flag: the frame has no destination (no DLID) or a header that cannot be encoded;
/// the HFI drops and counts it (`OPA_VNIC_SKB_MDATA_ENCAP_ERR`).
pub const MDATA_ENCAP_ERR: u8 = 0x1;

/// What transmit puts in front of a frame: the metadata, then the 16B header.
pub const TX_HDR_LEN: usize = MDATA_LEN + HDR_LEN;

/// The index of the untagged entry in [`TxPlan`]'s SC and VL tables (after the PCPs).
const UNTAGGED: usize = MAX_NUM_PCP;

/// What a frame's length takes, with the header, ICRC, tail and rounding up, to make the
/// packet's length in quad words.
const LEN_QW_ROUND: u32 = (HDR_LEN + ICRC_TAIL_LEN + 7) as u32;

/// Where word 1 of the header holds the SC.
const SC_SHIFT: u32 = 20;
const SC_FIELD: u32 = (MAX_SC as u32) << SC_SHIFT;
/// In a [`TxPlan`] SC and VL entry: the SC does not fit its field.
const SC_BAD: u32 = 1 << 31;
/// The bits of eight SCs, one a byte, that only an SC above [`MAX_SC`] has.
const SC_OVER_MAX: u64 = u64::from_ne_bytes([!MAX_SC; 8]);

/// Routing control classes (`RcClass`), each at its `shift() / 4`.
const RC_CLASSES: usize = 7;
/// The 3 bits of each class's RC in the vesw's `rc` word.
const RC_MASK: u32 = 0x0777_7777;
/// One in each class's nibble: an RC times this is that RC for every class.
const RC_REPEAT: u32 = 0x0111_1111;
const _: () = assert!(
    RcClass::Default.shift() == 0 && RcClass::Ipv6Udp.shift() == 4 * (RC_CLASSES as u32 - 1)
);

/// A vport's transmit decisions, as tables; see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxPlan {
    /// The header's words 0, 1, 2 and 4 with the vport's fields (SLID, P_Key, L2, LT, L4
    /// type, vesw id, and the RC when every class has the same) and nothing of the frame's.
    w0: u32,
    w1: u32,
    w2: u32,
    w4: u32,
    /// By multicast or not, then by PCP or [`UNTAGGED`]: the VL in bits 0-7, the SC in place
    /// for word 1 (bits 20-24), and [`SC_BAD`] if it does not fit there. One load for both.
    sc_vl: [[u32; MAX_NUM_PCP + 1]; 2],
    /// The RC of each class, in 3 bits at the class's [`RcClass::shift`] (the vesw's `rc`
    /// word with its reserved bits cleared): a Set copies one word, a frame whose class
    /// matters shifts it.
    rc: u32,
    /// Whether every class has the same RC (the EM's default, 0): then it is in `w1`, and a
    /// frame's class need not be found, which saves reading its L3 and L4 protocols.
    rc_uniform: bool,
    /// The unicast DLID of the default port of each flow id (0: no default port).
    ucast_dlid: [u32; FLOW_TBL_SIZE],
    mcast_dlid: u32,
}

/// Fills `t`, a table of [`TxPlan::sc_vl`] entries: by PCP, then untagged.
// Always inlined: the table is written where it is, in the plan.
#[inline(always)]
fn fill_sc_vl(
    t: &mut [u32; MAX_NUM_PCP + 1],
    sc: &[u8; MAX_NUM_PCP],
    vl: &[u8; MAX_NUM_PCP],
    sc0: u8,
    vl0: u8,
) {
    let pair = |sc: u8, vl: u8| {
        let field = if sc > MAX_SC {
            SC_BAD
        } else {
            u32::from(sc) << SC_SHIFT
        };
        field | u32::from(vl)
    };
    if let Some(e) = t.get_mut(MAX_NUM_PCP) {
        *e = pair(sc0, vl0);
    }
    // Every SC in range (what an EM sets) is tested at once, eight bytes in one word: then
    // each entry is a shift and an or.
    if u64::from_ne_bytes(*sc) & SC_OVER_MAX == 0 {
        for ((t, &sc), &vl) in t.iter_mut().zip(sc).zip(vl) {
            *t = (u32::from(sc) << SC_SHIFT) | u32::from(vl);
        }
    } else {
        for ((t, &sc), &vl) in t.iter_mut().zip(sc).zip(vl) {
            *t = pair(sc, vl);
        }
    }
}

impl TxPlan {
    /// The decisions the vport's `info` makes, read from its wire form.
    ///
    /// An EM's Set makes a new plan (every VESW port info Set), so this is kept cheap: the
    /// tables are filled where they end up, and the default ports' DLIDs are found from the
    /// mask's set bits alone (none, the EM's default, costs nothing).
    pub fn new<B: Borrow<[u8; INFO_SIZE]>>(info: &VeswPortInfoBytes<B>) -> Self {
        let slid = info.encap_slid() & MAX_LID;
        // The RC of each class, at the class's nibble (`RcClass::shift`): the classes are
        // the nibbles 0 to 6 in order. All the same (the EM's default: all 0) when every
        // nibble's 3 bits equal the first's.
        let rc_bits = info.rc() & RC_MASK;
        let rc0 = (rc_bits & 0x7) as u8;
        let rc_uniform = rc_bits == u32::from(rc0).wrapping_mul(RC_REPEAT);
        let rc_w1 = if rc_uniform { u32::from(rc0) << 25 } else { 0 };
        let mut plan = Self {
            w0: slid & 0xf_ffff,
            w1: (u32::from(L2_16B) << 29) | (1 << 31) | rc_w1,
            w2: u32::from(L4_ETHR) | ((slid >> 20) << 8) | (u32::from(info.pkey()) << 16),
            w4: u32::from(info.vesw_id()) << 16,
            sc_vl: [[0; MAX_NUM_PCP + 1]; 2],
            rc_uniform,
            rc: rc_bits,
            ucast_dlid: [0; FLOW_TBL_SIZE],
            mcast_dlid: info.u_mcast_dlid(),
        };
        let [uc, mc] = &mut plan.sc_vl;
        fill_sc_vl(
            uc,
            &info.pcp_to_sc_uc(),
            &info.pcp_to_vl_uc(),
            info.non_vlan_sc_uc(),
            info.non_vlan_vl_uc(),
        );
        fill_sc_vl(
            mc,
            &info.pcp_to_sc_mc(),
            &info.pcp_to_vl_mc(),
            info.non_vlan_sc_mc(),
            info.non_vlan_vl_mc(),
        );
        let mask = info.def_port_mask();
        if mask != 0 {
            plan.fill_ucast_dlid(mask, |port| info.u_ucast_dlid(port));
        }
        plan
    }

    /// `ucast_dlid[flow]`: `u_ucast_dlid[flow_tbl[flow]]` for the flow table of `mask`
    /// ([`flow_table`](super::encap::flow_table): flow i goes to the (i mod n)-th of the n
    /// set bits), from the DLIDs of the set bits taken round: no table of ports, no division.
    fn fill_ucast_dlid(&mut self, mask: u16, u_ucast_dlid: impl Fn(usize) -> u32) {
        let mut dlids = [0u32; VESW_MAX_NUM_DEF_PORT];
        let mut n = 0usize;
        let mut bits = mask;
        while bits != 0 {
            let port = bits.trailing_zeros() as usize;
            if let Some(d) = dlids.get_mut(n) {
                *d = u_ucast_dlid(port);
            }
            n = n.wrapping_add(1);
            bits &= bits.wrapping_sub(1);
        }
        let dlids = dlids.get(..n).unwrap_or(&dlids);
        for (d, &dlid) in self.ucast_dlid.iter_mut().zip(dlids.iter().cycle()) {
            *d = dlid;
        }
    }

    /// Where a frame to `dmac` with the VLAN tag `tci` finds its SC and VL: multicast or not
    /// (0 or 1), then its PCP, or `None` untagged. The one rule that [`TxPlan::encap`],
    /// [`TxPlan::vl`] and [`VlTable`](super::vl_table::VlTable) all read by.
    #[inline]
    pub fn entry_index(dmac: &[u8; ETH_ALEN], tci: Option<u16>) -> (usize, Option<usize>) {
        (usize::from(dmac[0] & 1), tci.map(vlan_pcp))
    }

    /// The entry of a frame to `dmac` with the VLAN tag `tci` in a table by multicast or
    /// not, then by PCP or untagged ([`TxPlan::entry_index`]). `None` never happens (a PCP
    /// has 3 bits).
    #[inline]
    fn entry<'a, T>(
        table: &'a [[T; MAX_NUM_PCP + 1]; 2],
        dmac: &[u8; ETH_ALEN],
        tci: Option<u16>,
    ) -> Option<&'a T> {
        let (mc, pcp) = Self::entry_index(dmac, tci);
        table.get(mc)?.get(pcp.unwrap_or(UNTAGGED))
    }

    /// The VL of a frame to `dmac` with the VLAN tag `tci` (`opa_vnic_get_vl()`), as
    /// [`TxPlan::encap`] chooses it.
    #[inline]
    pub fn vl(&self, dmac: &[u8; ETH_ALEN], tci: Option<u16>) -> u8 {
        Self::entry(&self.sc_vl, dmac, tci).map_or(0, |&p| p as u8)
    }

    /// The metadata and 16B header in front of the Ethernet frame of `eth_len` bytes whose
    /// first bytes are `frame` (flow hash `hash`): `opa_vnic_encap_skb()`. `skb_protocol`
    /// gives `skb->protocol`, read only if the RC depends on the class. `mac_dlid` looks the
    /// destination MAC up in the MAC table (0: no entry). A frame with no DLID, or whose
    /// header cannot be encoded (an SC or a length that does not fit its field), gets
    /// [`MDATA_ENCAP_ERR`] and a zero header.
    #[inline]
    pub fn encap(
        &self,
        frame: &[u8; TX_PARSE_LEN],
        skb_protocol: impl FnOnce() -> u16,
        hash: u32,
        eth_len: usize,
        mac_dlid: impl FnOnce(&[u8; ETH_ALEN]) -> u32,
    ) -> [u8; TX_HDR_LEN] {
        let dmac = TxFrame::dmac(frame);
        let mut dlid = mac_dlid(&dmac);
        let entropy = entropy_from_hash(hash);
        if dlid == 0 {
            dlid = if dmac[0] & 1 != 0 {
                self.mcast_dlid
            } else if is_local_ether_addr(&dmac) {
                (u32::from(dmac[5]) << 16) | (u32::from(dmac[4]) << 8) | u32::from(dmac[3])
            } else {
                self.ucast_dlid.get(flow_id(entropy)).copied().unwrap_or(0)
            };
        }
        let sc_vl = Self::entry(&self.sc_vl, &dmac, TxFrame::vlan_tci(frame))
            .copied()
            .unwrap_or(0);

        // The metadata as one word: VL, entropy, flags, reserved.
        let mdata = (sc_vl & 0xff) | (u32::from(entropy) << 8);
        let mut out = [0u8; TX_HDR_LEN];
        if dlid == 0 || sc_vl & SC_BAD != 0 || eth_len > MAX_ETH_FRAME {
            out[..MDATA_LEN]
                .copy_from_slice(&(mdata | (u32::from(MDATA_ENCAP_ERR) << 16)).to_le_bytes());
            return out;
        }
        let mut w1 = self.w1 | (dlid & 0xf_ffff) | (sc_vl & SC_FIELD);
        if !self.rc_uniform {
            let class = TxFrame::class(frame, skb_protocol());
            w1 |= ((self.rc >> class.shift()) & 0x7) << 25;
        }
        let dlid = dlid & MAX_LID;
        // The packet's length in quad words: header, frame, ICRC and tail, padded to 8 bytes.
        let len_qw = (eth_len as u32).wrapping_add(LEN_QW_ROUND) >> 3;
        let words = [
            mdata,
            self.w0 | (len_qw << 20),
            w1,
            self.w2 | ((dlid >> 20) << 12),
            u32::from(entropy),
            self.w4,
        ];
        for (chunk, w) in out.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        out
    }
}

impl Default for TxPlan {
    /// The plan of the adapter's power-on info.
    fn default() -> Self {
        Self::new(&VeswPortInfoBytes::from_info(&VeswPortInfo::adapter_pod()))
    }
}
