// SPDX-License-Identifier: GPL-2.0

//! The 16B OPA header of an encapsulated Ethernet frame, its length and
//! tail padding.
//!
//! Layout (`Documentation/infiniband/opa_vnic.rst`): the packet is a run of
//! little-endian 64-bit quad words. Seen as five little-endian 32-bit words
//! `w0..w4` (bytes 0..20):
//!
//! | word | bits  | field                                  |
//! |------|-------|----------------------------------------|
//! | w0   | 0-19  | SLID\[19:0\]                           |
//! | w0   | 20-30 | length in quad words (whole packet)    |
//! | w0   | 31    | BECN                                   |
//! | w1   | 0-19  | DLID\[19:0\]                           |
//! | w1   | 20-24 | SC                                     |
//! | w1   | 25-27 | RC                                     |
//! | w1   | 28    | FECN                                   |
//! | w1   | 29-30 | L2 (`0b10`, 16B)                       |
//! | w1   | 31    | LT (1, head flit)                      |
//! | w2   | 0-7   | L4 type (`0x78`, Ethernet)             |
//! | w2   | 8-11  | SLID\[23:20\]                          |
//! | w2   | 12-15 | DLID\[23:20\]                          |
//! | w2   | 16-31 | P_Key                                  |
//! | w3   | 0-15  | entropy                                |
//! | w3   | 16-31 | reserved                               |
//! | w4   | 0-15  | reserved                               |
//! | w4   | 16-31 | L4 header (virtual Ethernet switch id) |
//!
//! The Ethernet frame follows at byte 20, then `pad` zero bytes, the 4-byte
//! ICRC and the tail byte, so that the whole packet is a whole number of
//! quad words. The tail byte holds the pad count in bits 0-2.

use super::error::WireError;

/// Bytes of the 16B L2 header plus the 2 reserved bytes
/// (`OPA_VNIC_L2_HDR_LEN`).
pub const L2_HDR_LEN: usize = 18;
/// Bytes of the L4 header (`OPA_VNIC_L4_HDR_LEN`).
pub const L4_HDR_LEN: usize = 2;
/// Bytes in front of the Ethernet frame (`OPA_VNIC_HDR_LEN`).
pub const HDR_LEN: usize = L2_HDR_LEN + L4_HDR_LEN;
/// Bytes of the ICRC (`OPA_VNIC_ICRC_LEN`).
pub const ICRC_LEN: usize = 4;
/// Bytes of the tail (`OPA_VNIC_TAIL_LEN`).
pub const TAIL_LEN: usize = 1;
/// ICRC plus tail (`OPA_VNIC_ICRC_TAIL_LEN`).
pub const ICRC_TAIL_LEN: usize = ICRC_LEN + TAIL_LEN;
/// L4 type of an encapsulated Ethernet frame (`OPA_VNIC_L4_ETHR`).
pub const L4_ETHR: u8 = 0x78;
/// The L2 field value of the 16B format.
pub const L2_16B: u8 = 0b10;
/// Largest value of the 11-bit length field, in quad words.
pub const MAX_LEN_QW: u16 = 0x7ff;
/// Largest LID a 16B header carries (24 bits).
pub const MAX_LID: u32 = 0x00ff_ffff;
/// Largest SC (5 bits).
pub const MAX_SC: u8 = 0x1f;
/// Largest RC (3 bits).
pub const MAX_RC: u8 = 0x7;
/// Mask of the virtual Ethernet switch id in the L4 header (12 bits), as
/// the receive side applies it.
pub const VESW_ID_MASK: u16 = 0x0fff;
/// The longest Ethernet frame whose packet still fits the length field:
/// `MAX_LEN_QW * 8 - HDR_LEN - ICRC_TAIL_LEN` = 16351 bytes (pad 0).
pub const MAX_ETH_FRAME: usize = (MAX_LEN_QW as usize) * 8 - HDR_LEN - ICRC_TAIL_LEN;
/// Tail byte: pad count bits.
pub const TAIL_PAD_MASK: u8 = 0x07;
/// Tail byte: LT value of a tail flit (`0b01` in bits 6-7), as in the
/// packet-format table. The driver hands the HFI a tail byte without it;
/// both forms decode.
pub const TAIL_LT_TAIL_FLIT: u8 = 0x40;

const LID_LOW_MASK: u32 = 0x000f_ffff;
const LEN_SHIFT: u32 = 20;
const BECN_BIT: u32 = 1 << 31;
const SC_SHIFT: u32 = 20;
const RC_SHIFT: u32 = 25;
const FECN_BIT: u32 = 1 << 28;
const L2_SHIFT: u32 = 29;
const LT_BIT: u32 = 1 << 31;
const SLID_HIGH_SHIFT: u32 = 8;
const DLID_HIGH_SHIFT: u32 = 12;
const PKEY_SHIFT: u32 = 16;
const L4_HDR_SHIFT: u32 = 16;

/// The fields of a 16B VNIC header (the first [`HDR_LEN`] bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hdr16b {
    /// Source LID (24 bits).
    pub slid: u32,
    /// Destination LID (24 bits).
    pub dlid: u32,
    /// Packet length in quad words: header, frame, pad, ICRC and tail
    /// (11 bits).
    pub len_qw: u16,
    /// Backward explicit congestion notification.
    pub becn: bool,
    /// Forward explicit congestion notification.
    pub fecn: bool,
    /// Service class (5 bits).
    pub sc: u8,
    /// Routing control (3 bits).
    pub rc: u8,
    /// Partition key.
    pub pkey: u16,
    /// Entropy (the driver puts the 8-bit flow entropy here).
    pub entropy: u16,
    /// L4 type; [`L4_ETHR`] for VNIC.
    pub l4_type: u8,
    /// L4 header: the virtual Ethernet switch id in bits 0-11.
    pub l4_hdr: u16,
    /// Reserved: QW1 bits 48-63.
    pub rsvd_qw1: u16,
    /// Reserved: QW2 bits 0-15.
    pub rsvd_qw2: u16,
}

#[inline]
fn word_at(buf: &[u8], i: usize) -> Result<u32, WireError> {
    let start = i.checked_mul(4).ok_or(WireError::Truncated)?;
    let end = start.checked_add(4).ok_or(WireError::Truncated)?;
    let b = buf.get(start..end).ok_or(WireError::Truncated)?;
    let a: [u8; 4] = b.try_into().map_err(|_| WireError::Truncated)?;
    Ok(u32::from_le_bytes(a))
}

impl Hdr16b {
    /// The virtual Ethernet switch id carried in the L4 header.
    pub const fn vesw_id(&self) -> u16 {
        self.l4_hdr & VESW_ID_MASK
    }

    /// Checks that every field fits its bit width.
    #[inline]
    pub const fn validate(&self) -> Result<(), WireError> {
        if self.slid > MAX_LID {
            return Err(WireError::InvalidSlid(self.slid));
        }
        if self.dlid > MAX_LID {
            return Err(WireError::InvalidDlid(self.dlid));
        }
        if self.sc > MAX_SC {
            return Err(WireError::InvalidSc(self.sc));
        }
        if self.rc > MAX_RC {
            return Err(WireError::InvalidRc(self.rc));
        }
        if self.len_qw > MAX_LEN_QW {
            return Err(WireError::FrameTooLong);
        }
        Ok(())
    }

    /// The five header words, without checking the field widths (fields
    /// are masked to their widths).
    #[inline]
    fn words(&self) -> [u32; 5] {
        let slid = self.slid;
        let dlid = self.dlid;
        let w0 = (slid & LID_LOW_MASK)
            | ((u32::from(self.len_qw) & u32::from(MAX_LEN_QW)) << LEN_SHIFT)
            | if self.becn { BECN_BIT } else { 0 };
        let w1 = (dlid & LID_LOW_MASK)
            | ((u32::from(self.sc) & u32::from(MAX_SC)) << SC_SHIFT)
            | ((u32::from(self.rc) & u32::from(MAX_RC)) << RC_SHIFT)
            | if self.fecn { FECN_BIT } else { 0 }
            | (u32::from(L2_16B) << L2_SHIFT)
            | LT_BIT;
        let w2 = u32::from(self.l4_type)
            | (((slid >> 20) & 0xf) << SLID_HIGH_SHIFT)
            | (((dlid >> 20) & 0xf) << DLID_HIGH_SHIFT)
            | (u32::from(self.pkey) << PKEY_SHIFT);
        let w3 = u32::from(self.entropy) | (u32::from(self.rsvd_qw1) << 16);
        let w4 = u32::from(self.rsvd_qw2) | (u32::from(self.l4_hdr) << L4_HDR_SHIFT);
        [w0, w1, w2, w3, w4]
    }

    /// Writes the header's words into `out`, without checking the field
    /// widths: two quad words and a word, each a whole store (transmit
    /// writes one header per frame, and the HFI's check reads it back at
    /// once: byte stores would stall those loads, and a loop over the words
    /// calls `core`'s out-of-line iterator and `memcpy` in the kernel). The
    /// chunks of a 20-byte array always exist; the compiler drops the tests.
    #[inline]
    fn write(&self, out: &mut [u8; HDR_LEN]) {
        let [w0, w1, w2, w3, w4] = self.words();
        let qw = |lo: u32, hi: u32| (u64::from(lo) | (u64::from(hi) << 32)).to_le_bytes();
        if let Some((q0, rest)) = out.split_first_chunk_mut::<8>() {
            *q0 = qw(w0, w1);
            if let Some((q1, rest)) = rest.split_first_chunk_mut::<8>() {
                *q1 = qw(w2, w3);
                if let Some(w) = rest.first_chunk_mut::<4>() {
                    *w = w4.to_le_bytes();
                }
            }
        }
    }

    /// Encodes the header into the first [`HDR_LEN`] bytes of `out`.
    ///
    /// Fails if a field does not fit its width (the C driver would let an
    /// SC above 31 spill into RC, FECN, L2 and LT) or `out` is short.
    #[inline]
    pub fn encode(&self, out: &mut [u8]) -> Result<(), WireError> {
        self.validate()?;
        self.write(out.first_chunk_mut().ok_or(WireError::NoSpace)?);
        Ok(())
    }

    /// The header as an array; fails like [`Hdr16b::encode`].
    #[inline]
    pub fn to_bytes(&self) -> Result<[u8; HDR_LEN], WireError> {
        let mut out = [0u8; HDR_LEN];
        self.encode(&mut out)?;
        Ok(out)
    }

    /// Decodes the first [`HDR_LEN`] bytes of `buf`, checking the LT bit,
    /// the 16B L2 format and the Ethernet L4 type.
    #[inline]
    pub fn decode(buf: &[u8]) -> Result<Self, WireError> {
        if buf.len() < HDR_LEN {
            return Err(WireError::Truncated);
        }
        let w0 = word_at(buf, 0)?;
        let w1 = word_at(buf, 1)?;
        let w2 = word_at(buf, 2)?;
        let w3 = word_at(buf, 3)?;
        let w4 = word_at(buf, 4)?;
        if w1 & LT_BIT == 0 {
            return Err(WireError::NotHeadFlit);
        }
        let l2 = ((w1 >> L2_SHIFT) & 0x3) as u8;
        if l2 != L2_16B {
            return Err(WireError::NotL2Format16B(l2));
        }
        let l4_type = (w2 & 0xff) as u8;
        if l4_type != L4_ETHR {
            return Err(WireError::UnexpectedL4Type(l4_type));
        }
        Ok(Hdr16b {
            slid: (w0 & LID_LOW_MASK) | (((w2 >> SLID_HIGH_SHIFT) & 0xf) << 20),
            dlid: (w1 & LID_LOW_MASK) | (((w2 >> DLID_HIGH_SHIFT) & 0xf) << 20),
            len_qw: ((w0 >> LEN_SHIFT) & u32::from(MAX_LEN_QW)) as u16,
            becn: w0 & BECN_BIT != 0,
            fecn: w1 & FECN_BIT != 0,
            sc: ((w1 >> SC_SHIFT) & u32::from(MAX_SC)) as u8,
            rc: ((w1 >> RC_SHIFT) & u32::from(MAX_RC)) as u8,
            pkey: (w2 >> PKEY_SHIFT) as u16,
            entropy: (w3 & 0xffff) as u16,
            l4_type,
            l4_hdr: (w4 >> L4_HDR_SHIFT) as u16,
            rsvd_qw1: (w3 >> 16) as u16,
            rsvd_qw2: (w4 & 0xffff) as u16,
        })
    }
}

/// Length of the packet that carries an Ethernet frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireLen {
    /// Zero bytes between the frame and the ICRC (0 to 7); also the value
    /// of the tail byte.
    pub pad: u8,
    /// Packet length in quad words (the header's length field).
    pub len_qw: u16,
    /// Packet length in bytes: `len_qw * 8`.
    pub total: usize,
}

/// The pad count for an Ethernet frame of `eth_len` bytes, as the C driver
/// computes it: `-(HDR_LEN + eth_len + ICRC_TAIL_LEN) & 7`.
#[inline]
pub const fn pad_len(eth_len: usize) -> u8 {
    let unpadded = HDR_LEN.wrapping_add(eth_len).wrapping_add(ICRC_TAIL_LEN);
    (unpadded.wrapping_neg() & 7) as u8
}

/// Pad, quad word length and total bytes for an Ethernet frame of
/// `eth_len` bytes; matches `opa_vnic_wire_length()`, which counts the
/// header, the frame, the pad, the ICRC and the tail byte. Fails with
/// [`WireError::FrameTooLong`] when the length does not fit 11 bits (the C
/// driver would overflow the length field into BECN).
#[inline]
pub const fn wire_len(eth_len: usize) -> Result<WireLen, WireError> {
    if eth_len > MAX_ETH_FRAME {
        return Err(WireError::FrameTooLong);
    }
    let pad = pad_len(eth_len);
    // eth_len <= MAX_ETH_FRAME, so none of these can overflow.
    let total = HDR_LEN
        .wrapping_add(eth_len)
        .wrapping_add(pad as usize)
        .wrapping_add(ICRC_TAIL_LEN);
    Ok(WireLen {
        pad,
        len_qw: (total >> 3) as u16,
        total,
    })
}

/// What the driver knows about a frame's encapsulation, apart from its
/// length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Encap {
    /// Source LID (`encap_slid` of the port).
    pub slid: u32,
    /// Destination LID.
    pub dlid: u32,
    /// Service class.
    pub sc: u8,
    /// Routing control.
    pub rc: u8,
    /// Partition key (`pkey` of the vesw).
    pub pkey: u16,
    /// Flow entropy.
    pub entropy: u8,
    /// Virtual Ethernet switch id (the L4 header).
    pub vesw_id: u16,
}

impl Encap {
    /// The header for an Ethernet frame of `eth_len` bytes, as
    /// `opa_vnic_encap_skb()` builds it (BECN, FECN and reserved bits 0).
    ///
    /// LIDs are masked to the 24 bits the header has room for, as the C
    /// driver writes them (the EM's LID fields are 32 bits wide); an SC
    /// that does not fit 5 bits or a frame too long for the length field
    /// is refused, where the C driver would spill into the neighbouring
    /// fields.
    #[inline]
    pub fn header(&self, eth_len: usize) -> Result<Hdr16b, WireError> {
        let len = wire_len(eth_len)?;
        let hdr = Hdr16b {
            slid: self.slid & MAX_LID,
            dlid: self.dlid & MAX_LID,
            len_qw: len.len_qw,
            becn: false,
            fecn: false,
            sc: self.sc,
            rc: self.rc,
            pkey: self.pkey,
            entropy: u16::from(self.entropy),
            l4_type: L4_ETHR,
            l4_hdr: self.vesw_id,
            rsvd_qw1: 0,
            rsvd_qw2: 0,
        };
        hdr.validate()?;
        Ok(hdr)
    }

    /// Writes [`Encap::header`] into `out`, as transmit does in front of
    /// the frame; fails like it, leaving `out` as it was.
    #[inline]
    pub fn write_header(&self, eth_len: usize, out: &mut [u8; HDR_LEN]) -> Result<(), WireError> {
        // `header` has checked the field widths.
        self.header(eth_len)?.write(out);
        Ok(())
    }

    /// Writes the whole packet for `eth` into `out`: header, frame, zero
    /// pad, zero ICRC (the HFI computes it) and the tail byte holding the
    /// pad count. Returns the packet length in bytes.
    pub fn encap_frame(&self, eth: &[u8], out: &mut [u8]) -> Result<usize, WireError> {
        let hdr = self.header(eth.len())?;
        let len = wire_len(eth.len())?;
        let pkt = out.get_mut(..len.total).ok_or(WireError::NoSpace)?;
        hdr.encode(pkt)?;
        let frame_end = HDR_LEN.checked_add(eth.len()).ok_or(WireError::NoSpace)?;
        pkt.get_mut(HDR_LEN..frame_end)
            .ok_or(WireError::NoSpace)?
            .copy_from_slice(eth);
        write_tail(pkt.get_mut(frame_end..).ok_or(WireError::NoSpace)?, len.pad)?;
        Ok(len.total)
    }
}

/// Writes `pad` zero bytes, a zero ICRC and the tail byte (`pad`) at the
/// start of `out`, the part an HFI appends after the frame. Returns the
/// bytes written (`pad + 5`).
pub fn write_tail(out: &mut [u8], pad: u8) -> Result<usize, WireError> {
    let pad = pad & TAIL_PAD_MASK;
    let n = usize::from(pad).wrapping_add(ICRC_TAIL_LEN);
    let dst = out.get_mut(..n).ok_or(WireError::NoSpace)?;
    let (last, zeros) = dst.split_last_mut().ok_or(WireError::NoSpace)?;
    zeros.fill(0);
    *last = pad;
    Ok(n)
}

/// The pad count in a tail byte, checking its other bits: bits 3-5 must be
/// zero and the LT bits 6-7 either `0b00` (as the driver hands it to the
/// HFI) or `0b01` (tail flit).
#[inline]
pub const fn tail_pad(tail: u8) -> Result<u8, WireError> {
    if tail & 0x38 != 0 || tail >> 6 > 1 {
        return Err(WireError::BadTail(tail));
    }
    Ok(tail & TAIL_PAD_MASK)
}

/// A received packet taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decap<'a> {
    /// The 16B header.
    pub hdr: Hdr16b,
    /// The Ethernet frame, without pad, ICRC and tail.
    pub eth: &'a [u8],
    /// The pad count from the tail byte.
    pub pad: u8,
    /// The ICRC bytes as a little-endian word.
    pub icrc: u32,
    /// The tail byte.
    pub tail: u8,
}

/// Takes a received packet (header through tail byte) apart, checking the
/// header ([`Hdr16b::decode`]), that the length field matches
/// `pkt.len()` exactly, the tail byte ([`tail_pad`]) and that the packet is
/// long enough for header, pad, ICRC and tail.
#[inline]
pub fn decap(pkt: &[u8]) -> Result<Decap<'_>, WireError> {
    let hdr = Hdr16b::decode(pkt)?;
    let want = usize::from(hdr.len_qw).wrapping_mul(8);
    if want != pkt.len() {
        return Err(WireError::LengthMismatch {
            len_qw: hdr.len_qw,
            buf_len: pkt.len(),
        });
    }
    let (&tail, _) = pkt.split_last().ok_or(WireError::LengthTooShort)?;
    let pad = tail_pad(tail)?;
    let trailer = ICRC_TAIL_LEN.wrapping_add(usize::from(pad));
    let eth_end = pkt
        .len()
        .checked_sub(trailer)
        .ok_or(WireError::LengthTooShort)?;
    if eth_end < HDR_LEN {
        return Err(WireError::LengthTooShort);
    }
    let eth = pkt.get(HDR_LEN..eth_end).ok_or(WireError::LengthTooShort)?;
    let icrc_start = pkt
        .len()
        .checked_sub(ICRC_TAIL_LEN)
        .ok_or(WireError::LengthTooShort)?;
    let icrc_bytes: [u8; 4] = pkt
        .get(icrc_start..icrc_start.wrapping_add(ICRC_LEN))
        .ok_or(WireError::LengthTooShort)?
        .try_into()
        .map_err(|_| WireError::LengthTooShort)?;
    Ok(Decap {
        hdr,
        eth,
        pad,
        icrc: u32::from_le_bytes(icrc_bytes),
        tail,
    })
}

/// Minimum Ethernet frame the receive path accepts (`ETH_ZLEN`).
pub const ETH_ZLEN: usize = 60;
/// Ethernet header with one VLAN tag (`VLAN_ETH_HLEN`).
pub const VLAN_ETH_HLEN: usize = 18;

/// Result of the receive-side length check of a decapsulated frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxLen {
    /// The frame length is acceptable.
    Ok,
    /// Shorter than [`ETH_ZLEN`]: counted as `rx_runt`.
    Runt,
    /// Longer than `mtu + VLAN_ETH_HLEN`: counted as `rx_oversize`.
    Oversize,
}

/// The receive-side frame length check of the HFI driver
/// (`hfi1_vnic_decap_skb()`): oversize is checked before runt.
pub const fn rx_len_check(eth_len: usize, mtu: u32) -> RxLen {
    let max = (mtu as usize).saturating_add(VLAN_ETH_HLEN);
    if eth_len > max {
        RxLen::Oversize
    } else if eth_len < ETH_ZLEN {
        RxLen::Runt
    } else {
        RxLen::Ok
    }
}
