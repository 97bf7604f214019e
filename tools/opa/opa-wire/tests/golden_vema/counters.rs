// SPDX-License-Identifier: GPL-2.0

//! The summary and error counters.

use super::*;

/// Summary counters (attribute 0x0020), 360 bytes: 0 vp_instance,
/// 2 vesw_id, 4 veswport_num, then 44 u64s from offset 8 in struct order
/// (tx_errors 8, rx_errors 16, tx_packets 24, rx_packets 32, tx_bytes 40,
/// rx_bytes 48, tx_unicast 56, tx_mcastbcast 64, tx_untagged 72, tx_vlan
/// 80, tx_64_size 88 ... tx_1519_max 136, rx_unicast 144, rx_mcastbcast
/// 152, rx_untagged 160, rx_vlan 168, rx_64_size 176 ... rx_1519_max 224,
/// reserved[16] 232..360).
#[test]
fn golden_summary_counters() {
    let mut b = vec![0u8; 360];
    at(&mut b, 0, &[0x00, 0x03, 0x0a, 0xbc, 0x00, 0x00, 0x00, 0x01]);
    for k in 0..44u64 {
        let off = 8 + 8 * k as usize;
        at(&mut b, off, &(0x1000_0000_0000_0000 | k).to_be_bytes());
    }
    let c = SummaryCounters::decode(&b).unwrap();
    let v = |k: u64| 0x1000_0000_0000_0000 | k;
    assert_eq!((c.vp_instance, c.vesw_id, c.veswport_num), (3, 0xabc, 1));
    assert_eq!(c.tx_errors, v(0));
    assert_eq!(c.rx_bytes, v(5));
    assert_eq!(c.tx_unicast, v(6));
    assert_eq!(c.tx_vlan, v(9));
    assert_eq!(c.tx_64_size, v(10));
    assert_eq!(c.tx_1519_max, v(16));
    assert_eq!(c.rx_unicast, v(17));
    assert_eq!(c.rx_64_size, v(21));
    assert_eq!(c.rx_1519_max, v(27));
    assert_eq!(c.reserved[0], v(28));
    assert_eq!(c.reserved[15], v(43));
    assert_eq!(c.to_bytes()[..], b[..]);
}

/// Error counters (attribute 0x0022), 304 bytes: 0 vp_instance, 2 vesw_id,
/// 4 veswport_num, then 37 u64s from offset 8: tx_errors 8, rx_errors 16,
/// rsvd0 24, tx_smac_filt 32, rsvd1-3 40-56, tx_dlid_zero 64, rsvd4 72,
/// tx_logic 80, rsvd5 88, tx_drop_state 96, rx_bad_veswid 104, rsvd6 112,
/// rx_runt 120, rx_oversize 128, rsvd7 136, rx_eth_down 144,
/// rx_drop_state 152, rx_logic 160, rsvd8 168, rsvd9[16] 176..304.
#[test]
fn golden_error_counters() {
    let mut b = vec![0u8; 304];
    at(&mut b, 0, &[0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03]);
    for k in 0..37u64 {
        at(&mut b, 8 + 8 * k as usize, &(0xe000 + k).to_be_bytes());
    }
    let c = ErrorCounters::decode(&b).unwrap();
    let v = |off: u64| 0xe000 + (off - 8) / 8;
    assert_eq!((c.vp_instance, c.vesw_id, c.veswport_num), (1, 2, 3));
    assert_eq!(c.tx_errors, v(8));
    assert_eq!(c.rx_errors, v(16));
    assert_eq!(c.tx_smac_filt, v(32));
    assert_eq!(c.tx_dlid_zero, v(64));
    assert_eq!(c.tx_logic, v(80));
    assert_eq!(c.tx_drop_state, v(96));
    assert_eq!(c.rx_bad_veswid, v(104));
    assert_eq!(c.rx_runt, v(120));
    assert_eq!(c.rx_oversize, v(128));
    assert_eq!(c.rx_eth_down, v(144));
    assert_eq!(c.rx_drop_state, v(152));
    assert_eq!(c.rx_logic, v(160));
    assert_eq!(c.rsvd8, v(168));
    assert_eq!(c.rsvd9[15], v(296));
    assert_eq!(c.to_bytes()[..], b[..]);
}
