// SPDX-License-Identifier: GPL-2.0

//! The MAC table and the interface MAC lists, and their range rules.

use super::*;

/// MAC table entries (attribute 0x0012): header 8 bytes (0 offset,
/// 2 num_entries, 4 mac_tbl_digest), then 16-byte entries (0 mac_addr,
/// 6 mac_addr_mask, 12 dlid_sd).
#[test]
fn golden_mac_table() {
    #[rustfmt::skip]
    let b: [u8; 40] = [
        0x07, 0xd0, 0x00, 0x02, 0x01, 0x02, 0x03, 0x04, // offset 2000, 2 entries, digest
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, // entry 0 MAC
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // mask
        0x00, 0x12, 0x34, 0x00,             // DLID 0x1234, sd 0
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // entry 1: all-zero MAC (delete)
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x56, 0x20,             // DLID 0x56, source MAC bit
    ];
    let t = MacTable::decode(&b).unwrap();
    assert_eq!(
        t.hdr,
        MacTableHdr {
            offset: 2000,
            num_entries: 2,
            mac_tbl_digest: 0x0102_0304
        }
    );
    assert_eq!(t.len(), 2);
    let e0 = t.entry(0).unwrap();
    assert_eq!(e0.mac_addr, [0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);
    assert_eq!(e0.mac_addr_mask, [0xff; 6]);
    assert_eq!(e0.dlid(), 0x1234);
    assert!(!e0.is_src_mac() && !e0.is_delete());
    assert_eq!(
        e0.lookup(&[0x00, 0x11, 0x22, 0x33, 0x44, 0x55]),
        Some(0x1234)
    );
    assert_eq!(e0.lookup(&[0x00, 0x11, 0x22, 0x33, 0x44, 0x56]), None);
    let e1 = t.entry(1).unwrap();
    assert!(e1.is_src_mac() && e1.is_delete());
    assert_eq!(e1.lookup(&[0; 6]), None);
    assert!(t.entry(2).is_none());
    assert_eq!(MacTableEntry::SIZE, 16);

    let entries: Vec<MacTableEntry> = t.entries().collect();
    let mut out = [0u8; 64];
    let n = MacTable::encode(&t.hdr, &entries, &mut out).unwrap();
    assert_eq!(&out[..n], &b[..]);
    assert!(t.hdr.covers(2000) && t.hdr.covers(2001));
    assert!(!t.hdr.covers(1999) && !t.hdr.covers(2002));

    // Truncated entries.
    assert_eq!(MacTable::decode(&b[..39]), Err(WireError::Truncated));
}

/// The range rules of vema_mac_tbl_req_ok(): at most 125 entries,
/// offset + num_entries <= 2048; both answer 0x001c.
#[test]
fn golden_mac_table_range_rules() {
    let h = |offset, num_entries| MacTableHdr {
        offset,
        num_entries,
        mac_tbl_digest: 0,
    };
    assert_eq!(MAC_TBL_ENTRIES_PER_MAD, 125);
    assert_eq!(h(0, 125).check_req(), Ok(()));
    assert_eq!(h(1923, 125).check_req(), Ok(()));
    assert_eq!(h(2048, 0).check_req(), Ok(()));
    assert_eq!(h(0, 126).check_req(), Err(WireError::TooManyEntries(126)));
    let e = h(1924, 125).check_req().unwrap_err();
    assert_eq!(
        e,
        WireError::OffsetOutOfRange {
            offset: 1924,
            num_entries: 125
        }
    );
    assert_eq!(e.mad_status(), 0x001c);
    assert!(h(2049, 0).check_req().is_err());
    assert!(h(0xffff, 1).check_req().is_err());
    let mut b = [0u8; 2008];
    b[..4].copy_from_slice(&[0x00, 0x00, 0x00, 0x7e]);
    assert_eq!(MacTable::decode(&b), Err(WireError::TooManyEntries(126)));
}

/// Interface MAC lists (attributes 0x0013 and 0x0014): header 8 bytes
/// (0 start_idx, 2 num_macs_in_msg, 4 tot_macs_in_lst, 6 gen_count), then
/// 6-byte MACs.
#[test]
fn golden_iface_macs() {
    #[rustfmt::skip]
    let b: [u8; 20] = [
        0x00, 0x01, 0x00, 0x02, 0x00, 0x05, 0x12, 0x34,
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x33, 0x33, 0x00, 0x00, 0x00, 0x01,
    ];
    let m = IfaceMacs::decode(&b).unwrap();
    assert_eq!(
        m.hdr,
        IfaceMacsHdr {
            start_idx: 1,
            num_macs_in_msg: 2,
            tot_macs_in_lst: 5,
            gen_count: 0x1234
        }
    );
    assert_eq!(m.entry(0), Some([0x02, 0, 0, 0, 0, 1]));
    assert_eq!(m.entry(1), Some([0x33, 0x33, 0, 0, 0, 1]));
    assert_eq!(m.entry(2), None);
    assert_eq!(IfaceMacEntry::SIZE, 6);

    // A Get response built the C way: start at 1, ask for 2, list of 5.
    let list = [
        [0x02, 0, 0, 0, 0, 0],
        [0x02, 0, 0, 0, 0, 1],
        [0x33, 0x33, 0, 0, 0, 1],
        [0x02, 0, 0, 0, 0, 3],
        [0x02, 0, 0, 0, 0, 4],
    ];
    let req = IfaceMacsHdr {
        start_idx: 1,
        num_macs_in_msg: 2,
        tot_macs_in_lst: 0,
        gen_count: 0,
    };
    let mut out = [0u8; 64];
    let h = IfaceMacs::encode_response(&req, list, 0x1234, &mut out).unwrap();
    assert_eq!(h, m.hdr);
    assert_eq!(&out[..20], &b[..]);

    // num_macs_in_msg 0 asks for as many as fit: 333.
    assert_eq!(IFACE_MACS_PER_MAD, 333);
    assert_eq!(IfaceMacsHdr::ZERO.req_count(), 333);
    let big = IfaceMacsHdr {
        num_macs_in_msg: 1000,
        ..IfaceMacsHdr::ZERO
    };
    assert_eq!(big.req_count(), 333);
    let mut b2 = [0u8; 2008];
    b2[2..4].copy_from_slice(&334u16.to_be_bytes());
    assert_eq!(IfaceMacs::decode(&b2), Err(WireError::TooManyEntries(334)));
}
