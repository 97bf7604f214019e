// SPDX-License-Identifier: GPL-2.0

//! ClassPortInfo and the VESW port info: Get and Set, the vports a Set creates, and the
//! requests on vports that are missing.

use super::*;

#[test]
fn class_port_info_before_and_after_set() {
    let mut port = TestPort::default();
    let req = request(METHOD_GET, ATTR_CLASS_PORT_INFO, 0, &[]);
    let rsp = run(&mut port, &req);
    check_header(&req, &rsp);
    assert_eq!(status(&rsp), 0);
    let d = &rsp[40..];
    assert_eq!(d[0], 0x80, "base version");
    assert_eq!(d[1], 0x80, "class version");
    assert_eq!(be16(d, 2), 0xff01, "trap capability and 255 vports");
    assert_eq!(
        &d[4..8],
        &18u32.to_be_bytes(),
        "response time 2^18 * 4.096 us"
    );

    // The EM sets its trap LID (offset 60 of ClassPortInfo); it is kept and answered.
    let mut cpi = [0u8; 80];
    cpi[60..64].copy_from_slice(&0x1234u32.to_be_bytes());
    let req = request(METHOD_SET, ATTR_CLASS_PORT_INFO, 0, &cpi);
    let rsp = run(&mut port, &req);
    assert_eq!(status(&rsp), 0);
    assert_eq!(&rsp[40 + 60..40 + 64], &0x1234u32.to_be_bytes());
    assert_eq!(port.cpi.trap_lid, 0x1234);
    assert_eq!(be16(&rsp[40..], 2), 0xff01);
}

#[test]
fn vport_info_of_a_missing_vport_is_the_power_on_default() {
    let mut port = TestPort::default();
    let rsp = run(&mut port, &request(METHOD_GET, ATTR_VESWPORT_INFO, 3, &[]));
    assert_eq!(status(&rsp), 0);
    let vesw = &rsp[40..40 + 152];
    let vport = &rsp[40 + 152..40 + 280];
    assert_eq!(be16(vesw, 148), 1500, "eth_mtu");
    assert_eq!(be16(vport, 16), 2048, "max_mac_tbl_ent");
    assert_eq!(be16(vport, 18), 256, "max_smac_ent");
    assert_eq!(vport[15], 1, "oper_state drop-all");
    assert_eq!(vport[14], 1, "config_state drop-all");
    assert!(port.vports.is_empty(), "a Get creates nothing");
    assert_eq!(
        rsp[40 + 280..],
        vec![0u8; 2048 - 320][..],
        "nothing after the attribute"
    );
}

#[test]
fn set_vport_info_creates_the_vport_once() {
    let mut port = TestPort::default();
    let mut info = VeswPortInfo::vema_pod();
    info.vesw.vesw_id = 0x123;
    info.vesw.pkey = 0x8001;
    info.vesw.eth_mtu = 9000;
    info.vport.config_state = 3;
    info.vport.base_mac_addr = [2, 0, 0, 0, 0, 7];
    let req = request(METHOD_SET, ATTR_VESWPORT_INFO, 0x0105, &info.to_bytes());
    let rsp = run(&mut port, &req);
    check_header(&req, &rsp);
    assert_eq!(status(&rsp), 0);
    // The attribute modifier's low byte names the vport.
    assert!(port.has_vport(5));
    assert_eq!(port.adds, 1);
    let vesw = &rsp[40..];
    assert_eq!(be16(vesw, 2), 0x123, "vesw_id");
    assert_eq!(be16(vesw, 14), 0x8001, "pkey");
    assert_eq!(be16(vesw, 148), 9000, "eth_mtu");
    assert_eq!(rsp[40 + 152 + 14], 3, "config_state forwarding");

    run(&mut port, &req);
    assert_eq!(port.adds, 1, "the second Set reuses the vport");
}

#[test]
fn set_vport_info_reports_a_vport_that_cannot_be_added() {
    let mut port = TestPort {
        refuse_add: true,
        ..Default::default()
    };
    let info = VeswPortInfo::vema_pod().to_bytes();
    let rsp = run(
        &mut port,
        &request(METHOD_SET, ATTR_VESWPORT_INFO, 1, &info),
    );
    assert_eq!(status(&rsp), 0x001c);
}

#[test]
fn set_vport_info_that_cannot_be_made_is_answered_busy_and_changes_nothing() {
    let mut port = port_with_vport(4);
    port.vports.get_mut(&4).unwrap().busy = true;
    let before = port.vport_info(4);
    let mut info = VeswPortInfo::vema_pod();
    info.vesw.vesw_id = 0x42;
    info.vport.config_state = 3;
    let req = request(METHOD_SET, ATTR_VESWPORT_INFO, 4, &info.to_bytes());
    let rsp = run(&mut port, &req);
    check_header(&req, &rsp);
    assert_eq!(status(&rsp), MAD_STATUS_BUSY, "busy: the EM retries");
    assert_eq!(port.vport_info(4), before, "nothing changed");
    assert_eq!(
        rsp[40..],
        vec![0u8; 2048 - 40][..],
        "no attribute in a busy answer"
    );
}

#[test]
fn requests_on_missing_vports_are_invalid() {
    for (method, attr) in [
        (METHOD_GET, ATTR_VESWPORT_MAC_ENTRIES),
        (METHOD_SET, ATTR_VESWPORT_MAC_ENTRIES),
        (METHOD_SET, ATTR_DELETE_VESW),
        (METHOD_GET, ATTR_IFACE_UCAST_MACS),
        (METHOD_GET, ATTR_IFACE_MCAST_MACS),
        (METHOD_GET, ATTR_VESWPORT_SUMMARY_COUNTERS),
        (METHOD_GET, ATTR_VESWPORT_ERROR_COUNTERS),
    ] {
        let mut port = TestPort::default();
        let rsp = run(&mut port, &request(method, attr, 9, &[]));
        assert_eq!(status(&rsp), 0x001c, "method {method:#x} attr {attr:#x}");
        assert!(port.vports.is_empty());
    }
}
