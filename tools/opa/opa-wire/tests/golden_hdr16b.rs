// SPDX-License-Identifier: GPL-2.0

//! Golden vectors of the 16B VNIC packet, written by hand from the
//! packet-format table of Documentation/infiniband/opa_vnic.rst. The
//! expected bytes never come from the encoder under test: either they are
//! byte literals worked out by hand, or they are built by `qw_packet`
//! below, which places each field at the quad-word bit position the table
//! gives (the encoder works on 32-bit words instead).

use opa_wire::hdr16b::{
    self, decap, pad_len, tail_pad, wire_len, Encap, Hdr16b, HDR_LEN, MAX_ETH_FRAME,
};
use opa_wire::vema_info::ETH_MTU_MAX;
use opa_wire::WireError;

/// Fields of the table, in table order.
#[derive(Clone, Copy)]
struct Fields {
    slid: u64,
    len_qw: u64,
    becn: u64,
    dlid: u64,
    sc: u64,
    rc: u64,
    fecn: u64,
    pkey: u64,
    entropy: u64,
    l4_hdr: u64,
}

/// The packet for `eth` from the table's bit positions:
/// QW0: 0-19 SLID[19:0], 20-30 length, 31 BECN, 32-51 DLID[19:0],
///      52-56 SC, 57-59 RC, 60 FECN, 61-62 L2 (=10), 63 LT (=1);
/// QW1: 0-7 L4 type (=0x78), 8-11 SLID[23:20], 12-15 DLID[23:20],
///      16-31 PKEY, 32-47 entropy, 48-63 reserved;
/// QW2: 0-15 reserved, 16-31 L4 header, 32-63 Ethernet packet;
/// then the frame, `pad` bytes, ICRC (zero here) and the tail byte (pad).
/// Quad words are little-endian.
fn qw_packet(f: Fields, eth: &[u8], pad: usize) -> Vec<u8> {
    let qw0: u64 = (f.slid & 0xf_ffff)
        | (f.len_qw << 20)
        | (f.becn << 31)
        | ((f.dlid & 0xf_ffff) << 32)
        | (f.sc << 52)
        | (f.rc << 57)
        | (f.fecn << 60)
        | (0b10 << 61)
        | (1 << 63);
    let qw1: u64 = 0x78
        | (((f.slid >> 20) & 0xf) << 8)
        | (((f.dlid >> 20) & 0xf) << 12)
        | (f.pkey << 16)
        | (f.entropy << 32);
    let qw2_low32: u64 = f.l4_hdr << 16;
    let mut out = Vec::new();
    out.extend_from_slice(&qw0.to_le_bytes());
    out.extend_from_slice(&qw1.to_le_bytes());
    out.extend_from_slice(&qw2_low32.to_le_bytes()[..4]);
    out.extend_from_slice(eth);
    out.extend(std::iter::repeat(0u8).take(pad));
    out.extend_from_slice(&[0, 0, 0, 0]); // ICRC
    out.push(pad as u8); // tail
    out
}

const SLID: u32 = 0xa1_2345;
const DLID: u32 = 0xb6_789a;
const SC: u8 = 0x15;
const RC: u8 = 5;
const PKEY: u16 = 0x8001;
const ENTROPY: u8 = 0xc3;
const VESW: u16 = 0x0abc;

fn encap() -> Encap {
    Encap {
        slid: SLID,
        dlid: DLID,
        sc: SC,
        rc: RC,
        pkey: PKEY,
        entropy: ENTROPY,
        vesw_id: VESW,
    }
}

fn fields(len_qw: u64) -> Fields {
    Fields {
        slid: SLID.into(),
        len_qw,
        becn: 0,
        dlid: DLID.into(),
        sc: SC.into(),
        rc: RC.into(),
        fecn: 0,
        pkey: PKEY.into(),
        entropy: ENTROPY.into(),
        l4_hdr: VESW.into(),
    }
}

fn frame(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Encodes `eth`, compares with `want`, and decodes it back.
fn check(eth: &[u8], want: &[u8]) {
    let mut out = vec![0xeeu8; want.len() + 16];
    let n = encap().encap_frame(eth, &mut out).expect("encap");
    assert_eq!(n, want.len(), "packet length");
    assert_eq!(&out[..n], want, "packet bytes");
    // Transmit writes the header on its own, in front of the frame in the skb.
    let mut hdr = [0xeeu8; HDR_LEN];
    encap().write_header(eth.len(), &mut hdr).expect("header");
    assert_eq!(&hdr[..], &want[..HDR_LEN], "header as transmit writes it");
    let d = decap(want).expect("decap");
    assert_eq!(d.eth, eth);
    assert_eq!(d.hdr.slid, SLID);
    assert_eq!(d.hdr.dlid, DLID);
    assert_eq!(d.hdr.sc, SC);
    assert_eq!(d.hdr.rc, RC);
    assert_eq!(d.hdr.pkey, PKEY);
    assert_eq!(d.hdr.entropy, u16::from(ENTROPY));
    assert_eq!(d.hdr.vesw_id(), VESW);
    assert!(!d.hdr.becn && !d.hdr.fecn);
    assert_eq!(usize::from(d.hdr.len_qw) * 8, want.len());
}

/// Minimum frame, 60 bytes: 20 + 60 + 5 = 85, pad 3, 88 bytes = 11 QW.
/// Every header byte written out by hand:
///   w0 = SLID[19:0] 0x12345 | 11 << 20                     = 0x00b12345
///   w1 = DLID[19:0] 0x6789a | SC 0x15 << 20 | RC 5 << 25
///        | L2 0b10 << 29 | LT 1 << 31                       = 0xcb56789a
///   w2 = 0x78 | SLID[23:20] 0xa << 8 | DLID[23:20] 0xb << 12
///        | PKEY 0x8001 << 16                                = 0x8001ba78
///   w3 = entropy 0xc3                                       = 0x000000c3
///   w4 = L4 header 0x0abc << 16                             = 0x0abc0000
#[test]
fn golden_min_frame_60() {
    let eth = frame(60, 1);
    let mut want: Vec<u8> = vec![
        0x45, 0x23, 0xb1, 0x00, // w0
        0x9a, 0x78, 0x56, 0xcb, // w1
        0x78, 0xba, 0x01, 0x80, // w2
        0xc3, 0x00, 0x00, 0x00, // w3
        0x00, 0x00, 0xbc, 0x0a, // w4
    ];
    want.extend_from_slice(&eth);
    want.extend_from_slice(&[0, 0, 0]); // pad
    want.extend_from_slice(&[0, 0, 0, 0]); // ICRC
    want.push(0x03); // tail: pad count
    assert_eq!(want.len(), 88);
    assert_eq!(want, qw_packet(fields(11), &eth, 3));
    check(&eth, &want);
}

/// VLAN-tagged frame of 64 bytes (802.1Q, PCP 5, VID 0x123): 20 + 64 + 5
/// = 89, pad 7, 96 bytes = 12 QW. The SC comes from the unicast PCP table.
#[test]
fn golden_vlan_tagged_64() {
    let mut eth = frame(64, 7);
    eth[0] = 0x00; // unicast, globally administered destination
    eth[12] = 0x81;
    eth[13] = 0x00;
    eth[14] = 0xa1; // PCP 5 (0xa1 >> 5), DEI 0, VID 0x123
    eth[15] = 0x23;
    let want = qw_packet(fields(12), &eth, 7);
    assert_eq!(want.len(), 96);
    assert_eq!(
        &want[..8],
        &[0x45, 0x23, 0xc1, 0x00, 0x9a, 0x78, 0x56, 0xcb]
    );
    assert_eq!(want[95], 7);
    check(&eth, &want);

    let mut port = opa_wire::vema_info::PerVeswPortInfo::ZERO;
    port.pcp_to_sc_uc = [0, 1, 2, 3, 4, SC, 6, 7];
    port.non_vlan_sc_uc = 9;
    let tci = opa_wire::encap::frame_vlan_tci(&eth);
    assert_eq!(tci, Some(0xa123));
    let dmac: [u8; 6] = eth[..6].try_into().unwrap();
    assert_eq!(port.select_sc(&dmac, tci), SC);
}

/// A 1500-byte frame: 20 + 1500 + 5 = 1525, pad 3, 1528 bytes = 191 QW
/// (0x0bf): w0 = 0x0bf << 20 | 0x12345 = 0x0bf12345.
#[test]
fn golden_1500_bytes() {
    let eth = frame(1500, 3);
    let want = qw_packet(fields(191), &eth, 3);
    assert_eq!(want.len(), 1528);
    assert_eq!(&want[..4], &[0x45, 0x23, 0xf1, 0x0b]);
    check(&eth, &want);
}

/// A full frame at MTU 1500 untagged (1514 bytes): 20 + 1514 + 5 = 1539,
/// pad 5, 1544 bytes = 193 QW (0x0c1).
#[test]
fn golden_mtu_1500_frame_1514() {
    let eth = frame(1514, 4);
    let want = qw_packet(fields(193), &eth, 5);
    assert_eq!(want.len(), 1544);
    assert_eq!(&want[..4], &[0x45, 0x23, 0x11, 0x0c]);
    check(&eth, &want);
}

/// The largest frame: a VLAN-tagged frame at the largest eth MTU the
/// length field allows (16333 + 18 = 16351 bytes): 20 + 16351 + 5 = 16376,
/// pad 0, 2047 QW, every length bit set: w0 = 0x7ff << 20 | 0x12345 =
/// 0x7ff12345. One byte more no longer fits.
#[test]
fn golden_largest_mtu_frame() {
    assert_eq!(usize::from(ETH_MTU_MAX) + 18, MAX_ETH_FRAME);
    assert_eq!(MAX_ETH_FRAME, 16351);
    let mut eth = frame(MAX_ETH_FRAME, 5);
    eth[12] = 0x81;
    eth[13] = 0x00;
    let want = qw_packet(fields(2047), &eth, 0);
    assert_eq!(want.len(), 16376);
    assert_eq!(&want[..4], &[0x45, 0x23, 0xf1, 0x7f]);
    assert_eq!(want[16375], 0);
    check(&eth, &want);

    let big = frame(MAX_ETH_FRAME + 1, 5);
    let mut out = vec![0u8; 20000];
    assert_eq!(
        encap().encap_frame(&big, &mut out),
        Err(WireError::FrameTooLong)
    );
    assert_eq!(wire_len(MAX_ETH_FRAME + 1), Err(WireError::FrameTooLong));
}

/// Every tail padding 0 to 7: frames of 60 to 67 bytes. Pad = the bytes
/// needed to bring 20 + len + 5 to a multiple of 8, by hand:
/// 60->85 pad 3, 61->86 pad 2, 62->87 pad 1, 63->88 pad 0,
/// 64->89 pad 7, 65->90 pad 6, 66->91 pad 5, 67->92 pad 4.
#[test]
fn golden_every_tail_pad() {
    let cases: [(usize, u8, u16); 8] = [
        (63, 0, 11),
        (62, 1, 11),
        (61, 2, 11),
        (60, 3, 11),
        (67, 4, 12),
        (66, 5, 12),
        (65, 6, 12),
        (64, 7, 12),
    ];
    for (len, pad, qw) in cases {
        assert_eq!(pad_len(len), pad, "pad of {len}");
        let wl = wire_len(len).unwrap();
        assert_eq!(
            (wl.pad, wl.len_qw, wl.total),
            (pad, qw, usize::from(qw) * 8)
        );
        let eth = frame(len, len as u8);
        let want = qw_packet(fields(qw.into()), &eth, pad.into());
        assert_eq!(want.len(), usize::from(qw) * 8);
        assert_eq!(*want.last().unwrap(), pad);
        check(&eth, &want);
    }
}

/// BECN and FECN: QW0 bit 31 is w0 bit 31, QW0 bit 60 is w1 bit 28.
#[test]
fn golden_becn_fecn() {
    let mut f = fields(11);
    f.becn = 1;
    f.fecn = 1;
    let eth = frame(60, 9);
    let pkt = qw_packet(f, &eth, 3);
    assert_eq!(&pkt[..8], &[0x45, 0x23, 0xb1, 0x80, 0x9a, 0x78, 0x56, 0xdb]);
    let h = Hdr16b::decode(&pkt).unwrap();
    assert!(h.becn && h.fecn);
    let mut out = [0u8; HDR_LEN];
    h.encode(&mut out).unwrap();
    assert_eq!(&out[..], &pkt[..HDR_LEN]);
}

#[test]
fn decode_rejects_bad_headers() {
    let eth = frame(60, 1);
    let good = qw_packet(fields(11), &eth, 3);
    assert!(decap(&good).is_ok());

    let mut p = good.clone();
    p[7] &= 0x7f; // LT = 0
    assert_eq!(decap(&p), Err(WireError::NotHeadFlit));

    let mut p = good.clone();
    p[7] = (p[7] & !0x60) | 0x20; // L2 = 0b01
    assert_eq!(decap(&p), Err(WireError::NotL2Format16B(0b01)));

    let mut p = good.clone();
    p[8] = 0x02; // L4 type
    assert_eq!(decap(&p), Err(WireError::UnexpectedL4Type(0x02)));

    let p = &good[..80];
    assert_eq!(
        decap(p),
        Err(WireError::LengthMismatch {
            len_qw: 11,
            buf_len: 80
        })
    );

    let mut p = good.clone();
    p[87] = 0x0b; // reserved tail bit 3
    assert_eq!(decap(&p), Err(WireError::BadTail(0x0b)));
    let mut p = good.clone();
    p[87] = 0x83; // LT 0b10 in the tail
    assert_eq!(decap(&p), Err(WireError::BadTail(0x83)));
    let mut p = good.clone();
    p[87] = 0x43; // LT 0b01: a tail flit, accepted
    assert_eq!(decap(&p).unwrap().eth, &eth[..]);

    assert_eq!(Hdr16b::decode(&good[..19]), Err(WireError::Truncated));

    // A 3-QW packet cannot hold a 20-byte header, 5 trailer bytes and pad 7.
    let mut short = qw_packet(fields(3), &[0, 0, 0, 0], 0);
    short.truncate(24);
    short[23] = 7;
    assert_eq!(decap(&short), Err(WireError::LengthTooShort));
}

#[test]
fn encode_rejects_out_of_range_fields() {
    let mut e = encap();
    e.sc = 32;
    assert_eq!(e.header(60), Err(WireError::InvalidSc(32)));
    let mut e = encap();
    e.rc = 8;
    assert_eq!(e.header(60), Err(WireError::InvalidRc(8)));
    // LIDs beyond 24 bits are masked, as the C driver writes them.
    let mut e = encap();
    e.slid = 0x0300_0012;
    e.dlid = 0xff12_3456;
    let h = e.header(60).unwrap();
    assert_eq!((h.slid, h.dlid), (0x12, 0x12_3456));
    let mut e = encap();
    e.dlid = 0x100_0000;
    assert_eq!(e.header(60).map(|h| h.dlid), Ok(0));
    let mut small = [0u8; 87];
    assert_eq!(
        encap().encap_frame(&frame(60, 0), &mut small),
        Err(WireError::NoSpace)
    );
}

#[test]
fn tail_byte_rules() {
    for pad in 0..8u8 {
        assert_eq!(tail_pad(pad), Ok(pad));
        assert_eq!(tail_pad(pad | hdr16b::TAIL_LT_TAIL_FLIT), Ok(pad));
    }
    for b in [0x08u8, 0x10, 0x20, 0x80, 0xc0] {
        assert_eq!(tail_pad(b), Err(WireError::BadTail(b)));
    }
}

#[test]
fn rx_len_check_matches_hfi1() {
    use hdr16b::{rx_len_check, RxLen};
    assert_eq!(rx_len_check(59, 1500), RxLen::Runt);
    assert_eq!(rx_len_check(60, 1500), RxLen::Ok);
    assert_eq!(rx_len_check(1518, 1500), RxLen::Ok);
    assert_eq!(rx_len_check(1519, 1500), RxLen::Oversize);
    // Oversize is checked first: with an MTU below 42 a short frame is
    // "oversize".
    assert_eq!(rx_len_check(59, 40), RxLen::Oversize);
}

/// A header that cannot be encoded leaves transmit's buffer as it was (the driver then writes
/// zeros and flags the frame for the HFI to drop).
#[test]
fn write_header_refuses_wide_fields() {
    let mut hdr = [0xeeu8; HDR_LEN];
    let bad_sc = Encap { sc: 32, ..encap() };
    assert!(bad_sc.write_header(60, &mut hdr).is_err());
    let bad_rc = Encap { rc: 8, ..encap() };
    assert!(bad_rc.write_header(60, &mut hdr).is_err());
    assert!(encap().write_header(MAX_ETH_FRAME + 1, &mut hdr).is_err());
    assert_eq!(hdr, [0xee; HDR_LEN]);
    encap()
        .write_header(MAX_ETH_FRAME, &mut hdr)
        .expect("largest frame");
}
