// SPDX-License-Identifier: GPL-2.0

//! Typed errors of the wire module. The MAD status each maps to is the MAD layer's
//! ([`WireError::mad_status`], in [`super::mad`]), which keeps this file free of imports.

/// Every way encoding or decoding a wire structure can fail.
///
/// The enum is shared by the 16B data path and the VEMA management path;
/// [`WireError::mad_status`] gives the MAD status a VEMA response carries
/// for the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    /// The input is shorter than the structure being decoded.
    Truncated,
    /// The output buffer is too small for the structure being encoded.
    NoSpace,

    /// 16B: the LT bit (QW0 bit 63) is not 1 (not a link transfer head flit).
    NotHeadFlit,
    /// 16B: the L2 field (QW0 bits 61-62) is not `0b10` (16B format); the
    /// value found.
    NotL2Format16B(u8),
    /// 16B: the L4 type (QW1 bits 0-7) is not `0x78` (Ethernet); the value
    /// found.
    UnexpectedL4Type(u8),
    /// 16B: the length field, in quad words, does not match the buffer.
    LengthMismatch {
        /// Length field of the header, in quad words.
        len_qw: u16,
        /// Length of the buffer, in bytes.
        buf_len: usize,
    },
    /// 16B: the length is too short to hold the header, the padding, the
    /// ICRC and the tail byte.
    LengthTooShort,
    /// 16B: the tail byte has reserved bits set or a wrong LT value; the
    /// byte found.
    BadTail(u8),
    /// 16B encode: the SLID does not fit in 24 bits.
    InvalidSlid(u32),
    /// 16B encode: the DLID does not fit in 24 bits.
    InvalidDlid(u32),
    /// 16B encode: the SC does not fit in 5 bits.
    InvalidSc(u8),
    /// 16B encode: the RC does not fit in 3 bits.
    InvalidRc(u8),
    /// 16B encode: the packet does not fit the 11-bit quad word length.
    FrameTooLong,

    /// MAD: the base version is not `0x80` (OPA); the value found.
    BadBaseVersion(u8),
    /// MAD: the management class is not `0x34` (Intel EMA); the value found.
    BadMgmtClass(u8),
    /// MAD: the class version is not `0x80`; the value found.
    BadClassVersion(u8),
    /// MAD: the vendor OUI is not Intel's `00:06:6a`.
    BadOui,
    /// MAD: the buffer is longer than an OPA MAD (2048 bytes).
    MadTooLong,
    /// MAD: the method is neither Get nor Set (or not the one expected);
    /// the method found.
    UnsupportedMethod(u8),
    /// MAD: the attribute is not supported with this method; the attribute
    /// id found.
    UnsupportedAttribute(u16),
    /// MAD: a Notice attribute that is not a VNIC trap.
    NotVnicTrap,
    /// VEMA: more MAC table entries asked for than fit in one MAD (125); the
    /// count found.
    TooManyEntries(u16),
    /// VEMA: offset plus count reaches past the MAC table (2048 entries).
    OffsetOutOfRange {
        /// First entry asked for.
        offset: u16,
        /// Number of entries asked for.
        num_entries: u16,
    },
    /// VEMA: the attribute modifier names a virtual port that does not
    /// exist; the port number.
    NoSuchVport(u8),
    /// VEMA: the agent cannot do what the request asks now (it could not allocate what the
    /// change needs) and changed nothing; the requester should retry.
    Busy,
}
