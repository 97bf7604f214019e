// SPDX-License-Identifier: GPL-2.0-only

//! KUnit suite of the wire formats, run inside the kernel: the same code as the host tests,
//! built by the kernel's compiler for the kernel's target.

use crate::wire::{
    hdr16b::{self, Encap},
    WireError,
};
use kernel::{kunit_expect, kunit_expect_eq};

const ENCAP: Encap = Encap {
    slid: 0x1,
    dlid: 0x2,
    sc: 0,
    rc: 0,
    pkey: 0x8001,
    entropy: 0x5a,
    vesw_id: 3,
};

/// A 60-byte frame: 20 header bytes + 60 + 3 pad + 4 ICRC + 1 tail = 88 bytes, 11 quad words.
/// The header bytes are worked out by hand from the packet-format table of
/// `Documentation/infiniband/opa_vnic.rst` (little-endian 32-bit words).
fn encap_min_frame() {
    let frame = [0xa5u8; 60];
    let mut pkt = [0u8; 96];
    let len = ENCAP.encap_frame(&frame, &mut pkt);
    kunit_expect_eq!(len, Ok(88));
    #[rustfmt::skip]
    let want_hdr: [u8; 20] = [
        // QW0 low: SLID 1 | len 11 << 20; high: DLID 2 | L2 0b10 << 29 | LT << 31.
        0x01, 0x00, 0xb0, 0x00, 0x02, 0x00, 0x00, 0xc0,
        // QW1 low: L4 0x78 | P_Key 0x8001 << 16; high: entropy 0x5a.
        0x78, 0x00, 0x01, 0x80, 0x5a, 0x00, 0x00, 0x00,
        // QW2: reserved 16 bits, then the L4 header (vesw id 3).
        0x00, 0x00, 0x03, 0x00,
    ];
    kunit_expect_eq!(pkt[..20], want_hdr);
    kunit_expect!(pkt[20..80].iter().all(|&b| b == 0xa5));
    // Pad and ICRC are zero; the tail byte holds the pad count.
    kunit_expect_eq!(pkt[80..87], [0u8; 7]);
    kunit_expect_eq!(pkt[87], 3);
}

/// Every frame length 60..=76 round-trips, covering the eight pad values.
fn decap_round_trip() {
    let mut frame = [0u8; 76];
    for (i, b) in frame.iter_mut().enumerate() {
        *b = i as u8;
    }
    let mut pads = 0u8;
    for n in 60..=frame.len() {
        let mut pkt = [0u8; 112];
        let Ok(len) = ENCAP.encap_frame(&frame[..n], &mut pkt) else {
            kunit_expect!(false);
            continue;
        };
        kunit_expect_eq!(len % 8, 0);
        match hdr16b::decap(&pkt[..len]) {
            Ok(d) => {
                kunit_expect_eq!(d.eth, &frame[..n]);
                kunit_expect_eq!(d.hdr.vesw_id(), 3);
                kunit_expect_eq!(d.hdr.pkey, 0x8001);
                kunit_expect_eq!(usize::from(d.hdr.len_qw) * 8, len);
                pads |= 1 << d.pad;
            }
            Err(e) => kunit_expect_eq!(Err::<(), _>(e), Ok(())),
        }
    }
    kunit_expect_eq!(pads, 0xff);
}

/// Malformed packets are rejected with the error that names the fault.
fn decap_rejects_malformed() {
    let mut pkt = [0u8; 88];
    kunit_expect_eq!(ENCAP.encap_frame(&[0u8; 60], &mut pkt), Ok(88));
    // One byte short of what the length field says.
    kunit_expect!(matches!(
        hdr16b::decap(&pkt[..87]),
        Err(WireError::LengthMismatch { .. })
    ));
    // Not even a header.
    kunit_expect!(hdr16b::decap(&pkt[..10]).is_err());
    // A tail byte with reserved bits set.
    let mut bad = pkt;
    bad[87] = 0x3b;
    kunit_expect_eq!(hdr16b::decap(&bad).err(), Some(WireError::BadTail(0x3b)));
    // Not the 16B L2 format.
    let mut bad = pkt;
    bad[7] &= !0x40;
    kunit_expect!(hdr16b::decap(&bad).is_err());
    // A frame too long for the 11-bit length field (at most 2047 quad words).
    kunit_expect_eq!(hdr16b::wire_len(16384).err(), Some(WireError::FrameTooLong));
}

kernel::kunit_suite!(
    opa_vnic_rs_wire,
    [encap_min_frame, decap_round_trip, decap_rejects_malformed]
);
