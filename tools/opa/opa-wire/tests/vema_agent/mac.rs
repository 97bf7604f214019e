// SPDX-License-Identifier: GPL-2.0

//! The MAC table (Set, Get, ranges, Delete VESW) and the interface MAC lists.

use super::*;

#[test]
fn mac_entries_set_and_get() {
    let mut port = port_with_vport(0);
    let a = [2, 0, 0, 0, 0, 0xa];
    let b = [2, 0, 0, 0, 0, 0xb];
    let req = request(
        METHOD_SET,
        ATTR_VESWPORT_MAC_ENTRIES,
        0,
        &mac_table(100, 0xcafe, &[(a, 0x11), (b, 0x22)]),
    );
    let rsp = run(&mut port, &req);
    assert_eq!(status(&rsp), 0);
    let d = &rsp[40..];
    assert_eq!(be16(d, 0), 100, "offset");
    assert_eq!(be16(d, 2), 2, "num_entries");
    assert_eq!(&d[4..8], &0xcafeu32.to_be_bytes(), "digest");
    assert_eq!(&d[8..14], &a);
    assert_eq!(&d[20..24], &(0x11u32 << 8).to_be_bytes());
    assert_eq!(&d[24..30], &b);

    // A Get of a window that starts inside: entry 101 lands in slot 0, 100 is outside.
    let rsp = run(
        &mut port,
        &request(
            METHOD_GET,
            ATTR_VESWPORT_MAC_ENTRIES,
            0,
            &mac_table(101, 0, &[(a, 0); 3]),
        ),
    );
    assert_eq!(status(&rsp), 0);
    let d = &rsp[40..];
    assert_eq!(be16(d, 0), 101);
    assert_eq!(be16(d, 2), 3);
    assert_eq!(&d[8..14], &b);
    assert_eq!(&d[24..56], &[0u8; 32], "empty slots are zero");
}

#[test]
fn mac_entries_out_of_range_or_refused() {
    let mut port = port_with_vport(0);
    // 126 entries do not fit in one MAD.
    let mut big = mac_table(0, 0, &[]);
    big[2..4].copy_from_slice(&126u16.to_be_bytes());
    let rsp = run(
        &mut port,
        &request(METHOD_GET, ATTR_VESWPORT_MAC_ENTRIES, 0, &big),
    );
    assert_eq!(status(&rsp), 0x001c);
    // Past the 2048 entries of the table.
    let t = mac_table(2047, 0, &[([2, 0, 0, 0, 0, 1], 1); 2]);
    let rsp = run(
        &mut port,
        &request(METHOD_SET, ATTR_VESWPORT_MAC_ENTRIES, 0, &t),
    );
    assert_eq!(status(&rsp), 0x001c);
    assert!(port.vports[&0].macs.is_empty());
    // A table the backend refuses: the C driver's "unsupported" status, entries unchanged.
    port.vports.get_mut(&0).unwrap().refuse_update = true;
    let t = mac_table(0, 5, &[([2, 0, 0, 0, 0, 1], 1)]);
    let rsp = run(
        &mut port,
        &request(METHOD_SET, ATTR_VESWPORT_MAC_ENTRIES, 0, &t),
    );
    assert_eq!(status(&rsp), 0x000c);
    assert_eq!(be16(&rsp[40..], 2), 1);
    assert_eq!(&rsp[48..54], &[0u8; 6]);
}

#[test]
fn delete_vesw_resets_to_power_on_values_and_empties_the_table() {
    let mut port = port_with_vport(2);
    let mut info = VeswPortInfo::vema_pod();
    info.vesw.vesw_id = 7;
    info.vport.config_state = 3;
    run(
        &mut port,
        &request(METHOD_SET, ATTR_VESWPORT_INFO, 2, &info.to_bytes()),
    );
    let t = mac_table(0, 1, &[([2, 0, 0, 0, 0, 1], 1)]);
    run(
        &mut port,
        &request(METHOD_SET, ATTR_VESWPORT_MAC_ENTRIES, 2, &t),
    );
    assert_eq!(port.vports[&2].macs.len(), 1);

    let rsp = run(&mut port, &request(METHOD_SET, ATTR_DELETE_VESW, 2, &[]));
    assert_eq!(status(&rsp), 0);
    assert!(port.has_vport(2), "the vport stays");
    assert!(port.vports[&2].macs.is_empty());
    assert_eq!(be16(&rsp[40..], 2), 0, "vesw_id reset");
    assert_eq!(
        &rsp[40 + 152 + 20..40 + 152 + 24],
        &[0; 4],
        "mac_tbl_digest reset"
    );
    assert_eq!(rsp[40 + 152 + 14], 1, "config_state drop-all");
}

#[test]
fn delete_vesw_that_cannot_be_made_is_answered_busy() {
    let mut port = port_with_vport(2);
    let mut info = VeswPortInfo::vema_pod();
    info.vesw.vesw_id = 7;
    run(
        &mut port,
        &request(METHOD_SET, ATTR_VESWPORT_INFO, 2, &info.to_bytes()),
    );
    let t = mac_table(0, 1, &[([2, 0, 0, 0, 0, 1], 1)]);
    run(
        &mut port,
        &request(METHOD_SET, ATTR_VESWPORT_MAC_ENTRIES, 2, &t),
    );
    port.vports.get_mut(&2).unwrap().busy = true;
    let rsp = run(&mut port, &request(METHOD_SET, ATTR_DELETE_VESW, 2, &[]));
    assert_eq!(status(&rsp), MAD_STATUS_BUSY);
    assert_eq!(port.vports[&2].macs.len(), 1, "the table stays");
    assert_eq!(port.vports[&2].info.vport.mac_tbl_digest, 1);
    assert_eq!(port.vports[&2].info.vesw.vesw_id, 7, "the info stays");
}

#[test]
fn iface_mac_lists_are_windowed() {
    let mut port = port_with_vport(0);
    let macs: Vec<[u8; 6]> = (0..5).map(|i| [2, 0, 0, 0, 1, i]).collect();
    port.vports.get_mut(&0).unwrap().ucast = macs.clone();
    // start 2, 2 addresses: the third and fourth.
    let mut want = [0u8; 8];
    want[0..2].copy_from_slice(&2u16.to_be_bytes());
    want[2..4].copy_from_slice(&2u16.to_be_bytes());
    let rsp = run(
        &mut port,
        &request(METHOD_GET, ATTR_IFACE_UCAST_MACS, 0, &want),
    );
    assert_eq!(status(&rsp), 0);
    let d = &rsp[40..];
    assert_eq!(be16(d, 0), 2, "start_idx");
    assert_eq!(be16(d, 2), 2, "num_macs_in_msg");
    assert_eq!(be16(d, 4), 5, "tot_macs_in_lst");
    assert_eq!(be16(d, 6), 3, "gen_count");
    assert_eq!(&d[8..14], &macs[2]);
    assert_eq!(&d[14..20], &macs[3]);
    assert_eq!(&d[20..26], &[0u8; 6]);

    // 0 asks for as many as fit: all five, from the start.
    let rsp = run(
        &mut port,
        &request(METHOD_GET, ATTR_IFACE_MCAST_MACS, 0, &[0; 8]),
    );
    assert_eq!(be16(&rsp[40..], 2), 0, "the multicast list is empty");
    assert_eq!(be16(&rsp[40..], 6), 7);
    let rsp = run(
        &mut port,
        &request(METHOD_GET, ATTR_IFACE_UCAST_MACS, 0, &[0; 8]),
    );
    assert_eq!(be16(&rsp[40..], 2), 5);
}

#[test]
fn iface_mac_lists_never_overflow_the_mad() {
    let mut port = port_with_vport(0);
    port.vports.get_mut(&0).unwrap().mcast = (0..1000u16)
        .map(|i| [1, 0, 0x5e, 0, (i >> 8) as u8, i as u8])
        .collect();
    let rsp = run(
        &mut port,
        &request(METHOD_GET, ATTR_IFACE_MCAST_MACS, 0, &[0; 8]),
    );
    let d = &rsp[40..];
    assert_eq!(be16(d, 2), 333, "at most what fits in one MAD");
    assert_eq!(be16(d, 4), 1000);
    assert_eq!(&d[8 + 332 * 6..8 + 333 * 6], &[1, 0, 0x5e, 0, 1, 76]);
}
