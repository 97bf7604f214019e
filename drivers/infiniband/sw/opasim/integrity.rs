// SPDX-License-Identifier: GPL-2.0-only

//! The send-side integrity checks of the HFI on every VNIC packet.
//!
//! hfi1 turns them on for every SDMA engine and send context
//! (`hfi1_pkt_base_sdma_integrity()` in `drivers/infiniband/hw/hfi1/hfi.h`): a packet that
//! fails one is dropped by the hardware and never reaches the link, while the driver counts it
//! as sent. opasim holds the packets a VNIC driver builds to the same rules, checked in this
//! order:
//!
//! - the 16B header decodes (16B L2 format, head flit, L4 Ethernet): `bad_header`;
//! - the VL of the metadata (the PBC VL) is a data VL the port has or VL15
//!   (`CHECK_VL`): `bad_vl`;
//! - that VL is the SC-to-VL mapping of the header's SC in the port's send table
//!   (`CHECK_BYPASS_VL_MAPPING`, `sc_to_vlt()`): `bad_vl_mapping`;
//! - the SLID is the port's LID, under its LMC (`CHECK_SLID`): `bad_slid`;
//! - the packet length the HFI derives from the buffer (header and frame, padded with ICRC and
//!   tail to whole quad words, as `hfi1_netdev_start_xmit()` builds the PBC) equals the
//!   header's length field (`DISALLOW_BYPASS_BAD_PKT_LEN`): `bad_length`;
//! - the packet is no longer than the VL's MTU plus the largest header
//!   (`DISALLOW_TOO_LONG_BYPASS_PACKETS`, `set_send_length()`): `too_long`;
//! - nor shorter than a header and an Ethernet header with ICRC and tail
//!   (`DISALLOW_TOO_SMALL_BYPASS_PACKETS`): `too_small`.
//!
//! Frames the driver marked with the encapsulation error flag are dropped before the hardware
//! (hfi1 counts them as `tx_dlid_zero`): `encap_err`.

use crate::wire::hdr16b::{self, Hdr16b};
use core::sync::atomic::{AtomicU64, Ordering};

/// Service classes of a 16B header (5 bits).
pub(crate) const NUM_SC: usize = 32;

/// The management VL.
pub(crate) const VL15: u8 = 15;

/// Data VLs of a simulated port (VL0 to VL7), as many as hfi1 supports.
pub(crate) const NUM_DATA_VLS: u8 = 8;

/// The MTU of each data VL after reset: hfi1's `hfi1_max_mtu` (`HFI1_DEFAULT_MAX_MTU`, the
/// largest OPA MTU), which `init_one()` gives every data VL until the fabric manager sets the
/// VL's MTU (`set_mtu()` from PortInfo). The port's `vl_mtu` file changes it.
pub(crate) const DEFAULT_VL_MTU: u16 = 10240;

/// The MTU of VL15 (`MAX_MAD_PACKET`).
pub(crate) const VL15_MTU: u16 = 2048;

/// The MTUs an OPA VL can have (the PortInfo encodings 1 to 7).
pub(crate) const OPA_MTUS: [u16; 7] = [256, 512, 1024, 2048, 4096, 8192, 10240];

/// The data VLs' MTUs after reset.
pub(crate) const DEFAULT_VL_MTUS: [u16; NUM_DATA_VLS as usize] = [DEFAULT_VL_MTU; 8];

/// The largest non-payload part of a packet (`lrh_max_header_bytes()` with hfi1's receive
/// header entry of 32 dwords: 32 - 2 + 1 dwords).
pub(crate) const MAX_HDR_BYTES: usize = (32 - 2 + 1) * 4;

/// The smallest packet opasim lets through: a 16B header and an Ethernet header, with ICRC
/// and tail, in whole quad words (hfi1's documentation gives no figure; no VNIC driver sends
/// less, as both pad frames to `ETH_ZLEN`).
pub(crate) const MIN_PKT_BYTES: usize = padded_len(hdr16b::HDR_LEN + 14);

/// hfi1's SC-to-VL send table after reset (`init_sc2vl_tables()`): SC0-7 to VL0-7, SC15 to
/// VL15, every other SC to VL0. The fabric manager changes it at run time.
pub(crate) const DEFAULT_SC2VL: [u8; NUM_SC] = {
    let mut t = [0u8; NUM_SC];
    let mut sc = 0;
    while sc < 8 {
        t[sc] = sc as u8;
        sc += 1;
    }
    t[15] = VL15;
    t
};

/// Why the HFI dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum TxDrop {
    /// The driver marked the frame with the encapsulation error flag.
    EncapErr,
    /// The 16B header does not decode.
    BadHeader,
    /// The metadata VL is not a VL of the port.
    BadVl,
    /// The metadata VL is not the SC-to-VL mapping of the header's SC.
    BadVlMapping,
    /// The SLID is not the port's.
    BadSlid,
    /// The header's length field is not the packet's length.
    BadLength,
    /// Longer than the VL's MTU allows.
    TooLong,
    /// Shorter than a header.
    TooSmall,
}

impl TxDrop {
    /// Every reason, in the order the counter file shows them.
    pub(crate) const ALL: [TxDrop; 8] = [
        TxDrop::EncapErr,
        TxDrop::BadHeader,
        TxDrop::BadVl,
        TxDrop::BadVlMapping,
        TxDrop::BadSlid,
        TxDrop::BadLength,
        TxDrop::TooLong,
        TxDrop::TooSmall,
    ];

    /// The reason's name in the counter file.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            TxDrop::EncapErr => "encap_err",
            TxDrop::BadHeader => "bad_header",
            TxDrop::BadVl => "bad_vl",
            TxDrop::BadVlMapping => "bad_vl_mapping",
            TxDrop::BadSlid => "bad_slid",
            TxDrop::BadLength => "bad_length",
            TxDrop::TooLong => "too_long",
            TxDrop::TooSmall => "too_small",
        }
    }
}

/// The per-reason drop counters of a port.
#[derive(Default)]
pub(crate) struct DropCounters([AtomicU64; TxDrop::ALL.len()]);

impl DropCounters {
    /// The counter of `why`.
    pub(crate) fn of(&self, why: TxDrop) -> &AtomicU64 {
        // The discriminants are 0 to 7, the positions in `ALL`.
        &self.0[why as usize]
    }

    /// The packets dropped, every reason together.
    pub(crate) fn total(&self) -> u64 {
        self.0.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// Zeroes every counter.
    pub(crate) fn clear(&self) {
        for c in &self.0 {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// What the checks need of the sending port.
#[derive(Clone, Copy)]
pub(crate) struct PortView {
    /// The port's LID.
    pub(crate) lid: u32,
    /// The port's LMC (low LID bits that address the port too).
    pub(crate) lmc: u8,
    /// The port's SC-to-VL send table.
    pub(crate) sc2vl: [u8; NUM_SC],
    /// The MTU of each data VL.
    pub(crate) vl_mtu: [u16; NUM_DATA_VLS as usize],
}

impl PortView {
    /// The MTU of `vl` (a data VL or VL15).
    fn mtu(&self, vl: u8) -> usize {
        if vl == VL15 {
            return usize::from(VL15_MTU);
        }
        self.vl_mtu
            .get(usize::from(vl))
            .map_or(0, |&m| usize::from(m))
    }
}

/// The length of the packet the HFI sends for a buffer of `buf_len` bytes (header and frame):
/// padded so that with the ICRC and the tail it fills whole quad words.
pub(crate) const fn padded_len(buf_len: usize) -> usize {
    let unpadded = buf_len + hdr16b::ICRC_TAIL_LEN;
    (unpadded + 7) & !7
}

/// Checks the packet `pkt` (16B header and Ethernet frame, as the driver built it) that
/// `port` sends on `vl`; returns its header, or why the HFI drops it.
pub(crate) fn check(port: &PortView, vl: u8, pkt: &[u8]) -> Result<Hdr16b, TxDrop> {
    let hdr = Hdr16b::decode(pkt).map_err(|_| TxDrop::BadHeader)?;
    if vl >= NUM_DATA_VLS && vl != VL15 {
        return Err(TxDrop::BadVl);
    }
    let mapped = port.sc2vl.get(usize::from(hdr.sc)).copied();
    if mapped != Some(vl) {
        return Err(TxDrop::BadVlMapping);
    }
    let lmc_mask = !((1u32 << (port.lmc & 7)) - 1);
    if hdr.slid & lmc_mask != port.lid & lmc_mask {
        return Err(TxDrop::BadSlid);
    }
    let len = padded_len(pkt.len());
    if len != usize::from(hdr.len_qw) * 8 {
        return Err(TxDrop::BadLength);
    }
    if len > port.mtu(vl) + MAX_HDR_BYTES {
        return Err(TxDrop::TooLong);
    }
    if len < MIN_PKT_BYTES {
        return Err(TxDrop::TooSmall);
    }
    Ok(hdr)
}
