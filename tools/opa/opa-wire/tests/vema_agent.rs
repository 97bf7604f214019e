// SPDX-License-Identifier: GPL-2.0

//! The VEMA agent's answers, checked byte by byte against the offsets of the VEMA MAD layout
//! (vendor header 40 bytes, then the attribute data), over a backend made of plain values.

use opa_wire::mad::*;
use opa_wire::vema_agent::{process, VportBackend, RESPONSE_LEN};
use opa_wire::vema_counters::{ErrorCounters, SummaryCounters};
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo};
use opa_wire::vema_mac::{MacTable, MacTableEntry};
use opa_wire::WireError;
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};

#[derive(Default)]
struct Vport {
    info: VeswPortInfo,
    macs: BTreeMap<u16, MacTableEntry>,
    ucast: Vec<[u8; 6]>,
    mcast: Vec<[u8; 6]>,
    refuse_update: bool,
}

#[derive(Default)]
struct TestPort {
    cpi: ClassPortInfo,
    vports: HashMap<u8, Vport>,
    refuse_add: bool,
    adds: usize,
}

impl VportBackend for TestPort {
    fn class_port_info(&self) -> ClassPortInfo {
        self.cpi
    }
    fn set_class_port_info(&mut self, info: &ClassPortInfo) {
        self.cpi = *info;
    }
    fn has_vport(&self, vport: u8) -> bool {
        self.vports.contains_key(&vport)
    }
    fn add_vport(&mut self, vport: u8) -> Result<(), WireError> {
        if self.refuse_add {
            return Err(WireError::NoSuchVport(vport));
        }
        self.adds += 1;
        self.vports.insert(
            vport,
            Vport {
                info: VeswPortInfo::adapter_pod(),
                ..Default::default()
            },
        );
        Ok(())
    }
    fn vport_info(&self, vport: u8) -> VeswPortInfo {
        self.vports[&vport].info
    }
    fn set_vport_info(&mut self, vport: u8, info: &VeswPortInfo) {
        self.vports.get_mut(&vport).unwrap().info.apply_set(info);
    }
    fn for_each_mac_entry(&self, vport: u8, f: &mut dyn FnMut(u16, &MacTableEntry)) {
        for (i, e) in &self.vports[&vport].macs {
            f(*i, e);
        }
    }
    fn update_mac_table(&mut self, vport: u8, table: &MacTable<'_>) -> Result<(), WireError> {
        let v = self.vports.get_mut(&vport).unwrap();
        if v.refuse_update {
            return Err(WireError::NoSpace);
        }
        for (i, e) in table.entries().enumerate() {
            let index = table.hdr.offset + i as u16;
            if e.is_delete() {
                v.macs.remove(&index);
            } else {
                v.macs.insert(index, e);
            }
        }
        v.info.vport.mac_tbl_digest = table.hdr.mac_tbl_digest;
        Ok(())
    }
    fn release_mac_table(&mut self, vport: u8) {
        let v = self.vports.get_mut(&vport).unwrap();
        v.macs.clear();
        v.info.vport.mac_tbl_digest = 0;
    }
    fn for_each_iface_mac(&self, vport: u8, mcast: bool, f: &mut dyn FnMut([u8; 6])) -> u16 {
        let v = &self.vports[&vport];
        let list = if mcast { &v.mcast } else { &v.ucast };
        list.iter().for_each(|m| f(*m));
        if mcast {
            7
        } else {
            3
        }
    }
    fn summary_counters(&self, _vport: u8) -> SummaryCounters {
        let mut c = SummaryCounters::ZERO;
        c.tx_unicast = 0x1122;
        c.rx_unicast = 0x3344;
        c
    }
    fn error_counters(&self, _vport: u8) -> ErrorCounters {
        let mut c = ErrorCounters::ZERO;
        c.rx_runt = 9;
        c
    }
}

const TID: [u8; 8] = [0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 42];

/// A request with the vendor header written out field by field.
fn request(method: u8, attr_id: u16, attr_mod: u32, data: &[u8]) -> Vec<u8> {
    let mut m = vec![0u8; 2048];
    m[0] = 0x80; // base version
    m[1] = 0x34; // class: Intel EMA
    m[2] = 0x80; // class version
    m[3] = method;
    m[8..16].copy_from_slice(&TID);
    m[16..18].copy_from_slice(&attr_id.to_be_bytes());
    m[20..24].copy_from_slice(&attr_mod.to_be_bytes());
    m[37..40].copy_from_slice(&[0x00, 0x06, 0x6a]); // Intel OUI
    m[40..40 + data.len()].copy_from_slice(data);
    m
}

fn run(port: &mut TestPort, req: &[u8]) -> Vec<u8> {
    let mut rsp = vec![0xffu8; RESPONSE_LEN];
    assert_eq!(process(port, req, &mut rsp), Ok(RESPONSE_LEN));
    rsp
}

fn status(rsp: &[u8]) -> u16 {
    u16::from_be_bytes([rsp[4], rsp[5]])
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The response echoes the request's header with method GetResp.
fn check_header(req: &[u8], rsp: &[u8]) {
    assert_eq!(rsp[0..3], req[0..3]);
    assert_eq!(rsp[3], 0x81, "method GetResp");
    assert_eq!(
        rsp[8..40],
        req[8..40],
        "TID, attribute, modifier, OUI copied"
    );
}

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

#[test]
fn unsupported_methods_and_attributes() {
    let mut port = TestPort::default();
    for (method, attr) in [
        (METHOD_GET, 0x0099),
        (METHOD_SET, ATTR_VESWPORT_SUMMARY_COUNTERS),
        (METHOD_GET, ATTR_DELETE_VESW),
        (METHOD_SEND, ATTR_CLASS_PORT_INFO),
        (METHOD_TRAP, ATTR_VESWPORT_INFO),
    ] {
        let rsp = run(&mut port, &request(method, attr, 0, &[]));
        assert_eq!(status(&rsp), 0x000c, "method {method:#x} attr {attr:#x}");
        assert_eq!(rsp[3], 0x81);
    }
}

#[test]
fn versions_and_oui_are_not_checked_as_in_c() {
    // The MAD layer filters class, class version and OUI before an agent sees a MAD; the C
    // agent checks none of them, and answers a base version 1 MAD like any other, the
    // request's header copied into the answer.
    let mut port = TestPort::default();
    for (at, value) in [(0, 0x01), (2, 0x01), (39, 0x6b)] {
        let mut req = request(METHOD_GET, ATTR_CLASS_PORT_INFO, 0, &[]);
        req[at] = value;
        let rsp = run(&mut port, &req);
        assert_eq!(status(&rsp), 0x0000, "byte {at} = {value:#x}");
        assert_eq!(rsp[at], value, "byte {at} copied into the answer");
        assert_eq!(rsp.len(), RESPONSE_LEN);
    }
    // Too short for a vendor header: nothing to answer.
    let req = request(METHOD_GET, ATTR_CLASS_PORT_INFO, 0, &[]);
    let mut rsp = vec![0u8; RESPONSE_LEN];
    assert!(process(&mut port, &req[..39], &mut rsp).is_err());
    assert!(process(&mut port, &req, &mut rsp[..100]).is_err());
}

fn mac_table(offset: u16, digest: u32, entries: &[([u8; 6], u32)]) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend_from_slice(&offset.to_be_bytes());
    d.extend_from_slice(&(entries.len() as u16).to_be_bytes());
    d.extend_from_slice(&digest.to_be_bytes());
    for (mac, dlid) in entries {
        d.extend_from_slice(mac);
        d.extend_from_slice(&[0; 6]);
        d.extend_from_slice(&(dlid << 8).to_be_bytes());
    }
    d
}

fn port_with_vport(vport: u8) -> TestPort {
    let mut port = TestPort::default();
    port.add_vport(vport).unwrap();
    port
}

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

#[test]
fn counters() {
    let mut port = port_with_vport(1);
    let rsp = run(
        &mut port,
        &request(METHOD_GET, ATTR_VESWPORT_SUMMARY_COUNTERS, 1, &[]),
    );
    assert_eq!(status(&rsp), 0);
    let expect = port.summary_counters(1).to_bytes();
    assert_eq!(rsp[40..40 + expect.len()], expect[..]);
    let rsp = run(
        &mut port,
        &request(METHOD_GET, ATTR_VESWPORT_ERROR_COUNTERS, 1, &[]),
    );
    let expect = port.error_counters(1).to_bytes();
    assert_eq!(rsp[40..40 + expect.len()], expect[..]);
}

proptest! {
    /// Any request is answered (or refused as too short) without a panic, and an answer is
    /// always a whole GetResp MAD.
    #[test]
    fn any_request_gets_a_whole_answer(
        method in prop_oneof![Just(1u8), Just(2u8), any::<u8>()],
        attr in prop_oneof![Just(0x11u16), Just(0x12u16), Just(0x13u16), any::<u16>()],
        attr_mod in any::<u32>(),
        data in proptest::collection::vec(any::<u8>(), 0..2008),
        len in 0usize..2100,
    ) {
        let mut port = port_with_vport(0);
        let mut req = request(method, attr, attr_mod, &data);
        req.resize(len.max(40), 0);
        let mut rsp = vec![0u8; RESPONSE_LEN];
        prop_assert_eq!(process(&mut port, &req, &mut rsp), Ok(RESPONSE_LEN));
        prop_assert_eq!(rsp[3], 0x81);
    }
}

/// A request with RMPP active (a segment of an RMPP transfer, which the
/// driver's agent gets as a plain MAD since it does not register for RMPP)
/// is answered as one MAD: the answer's RMPP header is all zero. A request
/// without RMPP keeps its RMPP bytes in the answer, as the C agent copies them.
#[test]
fn rmpp_header_is_cleared_only_for_an_active_request() {
    let mut port = TestPort::default();
    let mut req = request(METHOD_GET, 0x0001, 0, &[]);
    // Version 1, type DATA, flags Active|First|Last, segment 1, length 2008.
    req[24..36].copy_from_slice(&[1, 1, 0x07, 0, 0, 0, 0, 1, 0, 0, 0x07, 0xd8]);
    let rsp = run(&mut port, &req);
    assert_eq!(status(&rsp), 0);
    assert_eq!(rsp[24..36], [0u8; 12]);
    assert_eq!(rsp[36..40], req[36..40]);

    // Inactive: the bytes are copied, whatever they hold.
    req[26] = 0x06;
    let rsp = run(&mut port, &req);
    assert_eq!(rsp[24..36], req[24..36]);
}
