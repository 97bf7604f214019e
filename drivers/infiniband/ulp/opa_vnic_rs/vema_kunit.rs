// SPDX-License-Identifier: GPL-2.0-only

//! KUnit suite of the VEMA handlers: requests crafted byte by byte go through
//! [`vema_agent::process`], the request processing the driver's agents run, over a port of
//! plain values whose MAC tables are the driver's [`MacIndex`]; the responses are checked byte
//! by byte (vendor header at 0, attribute data at 40).

use crate::mac_table::{merge, MacIndex, MacSlot};
use crate::vema_agent::{self, VportBackend, RESPONSE_LEN};
use crate::wire::{
    mad::*,
    vema_counters::{ErrorCounters, SummaryCounters},
    vema_info::{ClassPortInfo, VeswPortInfo},
    vema_info_bytes::VeswPortInfoRef,
    vema_mac::{MacTable, MacTableEntry},
    WireError,
};
use kernel::{kunit_expect, kunit_expect_eq, prelude::*};

/// The vport numbers a [`TestPort`] can hold.
const VPORTS: usize = 4;

struct TestVport {
    info: VeswPortInfo,
    macs: MacIndex<KVec<MacSlot>>,
}

/// A port of plain values.
#[derive(Default)]
struct TestPort {
    cpi: Option<ClassPortInfo>,
    vports: [Option<TestVport>; VPORTS],
}

impl TestPort {
    fn vport(&self, n: u8) -> Option<&TestVport> {
        self.vports.get(usize::from(n)).and_then(|v| v.as_ref())
    }

    fn vport_mut(&mut self, n: u8) -> Option<&mut TestVport> {
        self.vports.get_mut(usize::from(n)).and_then(|v| v.as_mut())
    }
}

impl VportBackend for TestPort {
    fn class_port_info(&self) -> ClassPortInfo {
        self.cpi.unwrap_or(ClassPortInfo::ZERO)
    }
    fn set_class_port_info(&mut self, info: &ClassPortInfo) {
        self.cpi = Some(*info);
    }
    fn has_vport(&self, vport: u8) -> bool {
        self.vport(vport).is_some()
    }
    fn add_vport(&mut self, vport: u8) -> Result<(), WireError> {
        let slot = self
            .vports
            .get_mut(usize::from(vport))
            .ok_or(WireError::NoSuchVport(vport))?;
        *slot = Some(TestVport {
            info: VeswPortInfo::adapter_pod(),
            macs: MacIndex::new(KVec::new()),
        });
        Ok(())
    }
    fn vport_info(&self, vport: u8) -> VeswPortInfo {
        self.vport(vport)
            .map_or_else(VeswPortInfo::vema_pod, |v| v.info)
    }
    fn set_vport_info(
        &mut self,
        vport: u8,
        info: &VeswPortInfoRef<'_>,
        out: &mut [u8],
    ) -> Result<(), WireError> {
        if let Some(v) = self.vport_mut(vport) {
            v.info.apply_set(&info.info());
        }
        self.vport_info(vport).encode(out)
    }
    fn for_each_mac_entry(&self, vport: u8, f: &mut dyn FnMut(u16, &MacTableEntry)) {
        for s in self.vport(vport).map_or(&[][..], |v| v.macs.slots()) {
            f(s.index, &s.entry);
        }
    }
    fn update_mac_table(&mut self, vport: u8, table: &MacTable<'_>) -> Result<(), WireError> {
        let v = self.vport_mut(vport).ok_or(WireError::NoSuchVport(vport))?;
        let mut slots = KVec::with_capacity(v.macs.len() + table.len(), GFP_KERNEL)
            .map_err(|_| WireError::NoSpace)?;
        merge(v.macs.slots().iter(), table, &mut |s| {
            slots.push(s, GFP_KERNEL).map_err(|_| WireError::NoSpace)
        })?;
        v.macs = MacIndex::new(slots);
        v.info.vport.mac_tbl_digest = table.hdr.mac_tbl_digest;
        Ok(())
    }
    fn reset_vport(&mut self, vport: u8) -> Result<(), WireError> {
        if let Some(v) = self.vport_mut(vport) {
            v.info.apply_set(&VeswPortInfo::vema_pod());
            v.macs = MacIndex::new(KVec::new());
            v.info.vport.mac_tbl_digest = 0;
        }
        Ok(())
    }
    fn for_each_iface_mac(&self, _vport: u8, mcast: bool, f: &mut dyn FnMut([u8; 6])) -> u16 {
        if mcast {
            f([0x01, 0x00, 0x5e, 0, 0, 1]);
            7
        } else {
            3
        }
    }
    fn summary_counters(&self, _vport: u8) -> SummaryCounters {
        let mut c = SummaryCounters::ZERO;
        c.tx_unicast = 0x1122;
        c
    }
    fn error_counters(&self, _vport: u8) -> ErrorCounters {
        let mut c = ErrorCounters::ZERO;
        c.rx_runt = 9;
        c
    }
}

/// A VEMA request: the vendor MAD header written out field by field, then `data`.
fn request(method: u8, attr_id: u16, attr_mod: u32, data: &[u8]) -> Result<KVec<u8>> {
    let mut m = KVec::from_elem(0u8, OPA_MGMT_MAD_SIZE, GFP_KERNEL)?;
    m[0] = 0x80; // base version
    m[1] = 0x34; // class: Intel EMA
    m[2] = 0x80; // class version
    m[3] = method;
    m[8..16].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 42]); // TID
    m[16..18].copy_from_slice(&attr_id.to_be_bytes());
    m[20..24].copy_from_slice(&attr_mod.to_be_bytes());
    m[37..40].copy_from_slice(&[0x00, 0x06, 0x6a]); // Intel OUI
    m[40..40 + data.len()].copy_from_slice(data);
    Ok(m)
}

/// Processes `req` on `port`: the whole response, or an empty vector if there is none.
fn answer(port: &mut TestPort, req: &[u8]) -> KVec<u8> {
    let Ok(mut rsp) = KVec::from_elem(0xffu8, RESPONSE_LEN, GFP_KERNEL) else {
        return KVec::new();
    };
    match vema_agent::process(port, req, &mut rsp) {
        Ok(n) if n == RESPONSE_LEN => rsp,
        _ => KVec::new(),
    }
}

/// The MAD status of a response (0xffff if there is none).
fn status(rsp: &[u8]) -> u16 {
    match rsp.get(4..6) {
        Some(&[hi, lo]) => u16::from_be_bytes([hi, lo]),
        _ => 0xffff,
    }
}

/// A Get of ClassPortInfo before any Set: the whole vendor header and the attribute.
fn get_class_port_info() {
    let mut port = TestPort::default();
    let Ok(req) = request(METHOD_GET, ATTR_CLASS_PORT_INFO, 0, &[]) else {
        kunit_expect!(false);
        return;
    };
    let rsp = answer(&mut port, &req);
    kunit_expect_eq!(rsp.len(), RESPONSE_LEN);
    #[rustfmt::skip]
    let want: [u8; 48] = [
        // Base and class version, class, method GetResp; status 0; class specific 0.
        0x80, 0x34, 0x80, 0x81, 0x00, 0x00, 0x00, 0x00,
        // TID echoed.
        0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x2a,
        // Attribute 0x0001, reserved, modifier 0.
        0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        // RMPP header: none.
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        // Reserved, then the Intel OUI.
        0x00, 0x00, 0x06, 0x6a,
        // ClassPortInfo: base and class version, capability mask 0xff01 (trap
        // capable, 255 vports); response time value 18.
        0x80, 0x80, 0xff, 0x01, 0x00, 0x00, 0x00, 0x12,
    ];
    kunit_expect_eq!(rsp[..48], want);
    // Nothing after the 80 bytes of ClassPortInfo.
    kunit_expect!(rsp[120..].iter().all(|&b| b == 0));
}

/// A Set of VeswPortInfo creates the vport named by the modifier's low byte and answers what
/// it holds now; a Get of a vport that does not exist answers its power-on values.
fn set_and_get_vport_info() {
    let mut port = TestPort::default();
    let mut info = VeswPortInfo::vema_pod();
    info.vesw.vesw_id = 0x123;
    info.vesw.pkey = 0x8001;
    info.vesw.eth_mtu = 9000;
    info.vport.config_state = 3;
    info.vport.base_mac_addr = [0x02, 0, 0, 0, 0, 0x07];
    let Ok(req) = request(METHOD_SET, ATTR_VESWPORT_INFO, 0x0102, &info.to_bytes()) else {
        kunit_expect!(false);
        return;
    };
    let rsp = answer(&mut port, &req);
    kunit_expect_eq!(rsp.len(), RESPONSE_LEN);
    kunit_expect_eq!(status(&rsp), MAD_STATUS_SUCCESS);
    kunit_expect!(port.has_vport(2));
    kunit_expect!(!port.has_vport(1));
    let d = &rsp[40..];
    kunit_expect_eq!(d[2..4], [0x01, 0x23]); // vesw_id
    kunit_expect_eq!(d[14..16], [0x80, 0x01]); // pkey
    kunit_expect_eq!(d[148..150], [0x23, 0x28]); // eth_mtu 9000
    kunit_expect_eq!(d[152 + 8..152 + 14], [0x02, 0, 0, 0, 0, 0x07]); // base MAC
    kunit_expect_eq!(d[152 + 14], 3); // config_state forwarding

    let Ok(req) = request(METHOD_GET, ATTR_VESWPORT_INFO, 3, &[]) else {
        kunit_expect!(false);
        return;
    };
    let rsp = answer(&mut port, &req);
    kunit_expect_eq!(status(&rsp), MAD_STATUS_SUCCESS);
    let d = &rsp[40..];
    kunit_expect_eq!(d[148..150], [0x05, 0xdc]); // eth_mtu 1500
    kunit_expect_eq!(d[152 + 14..152 + 20], [1, 1, 0x08, 0x00, 0x01, 0x00]);
    kunit_expect!(!port.has_vport(3));
}

/// MAC entries set through a MAD reach the table transmit reads and are read back.
fn mac_entries() {
    let mut port = TestPort::default();
    kunit_expect!(port.add_vport(0).is_ok());
    #[rustfmt::skip]
    let table: [u8; 40] = [
        // Offset 100, 2 entries, digest 0xcafe.
        0x00, 0x64, 0x00, 0x02, 0x00, 0x00, 0xca, 0xfe,
        // 02:00:00:00:00:0a, mask, DLID 0x11.
        0x02, 0, 0, 0, 0, 0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x11, 0x00,
        // 02:00:00:00:00:0b, no mask, DLID 0x22.
        0x02, 0, 0, 0, 0, 0x0b, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x22, 0x00,
    ];
    let Ok(req) = request(METHOD_SET, ATTR_VESWPORT_MAC_ENTRIES, 0, &table) else {
        kunit_expect!(false);
        return;
    };
    let rsp = answer(&mut port, &req);
    kunit_expect_eq!(status(&rsp), MAD_STATUS_SUCCESS);
    kunit_expect_eq!(rsp[40..80], table);
    let Some(v) = port.vport(0) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect_eq!(v.macs.lookup(&[0x02, 0, 0, 0, 0, 0x0a]), 0x11);
    kunit_expect_eq!(v.macs.lookup(&[0x02, 0, 0, 0, 0, 0x0b]), 0x22);
    kunit_expect_eq!(v.info.vport.mac_tbl_digest, 0xcafe);

    // A Get of 1 entry from index 101: the second one, in slot 0.
    let Ok(req) = request(
        METHOD_GET,
        ATTR_VESWPORT_MAC_ENTRIES,
        0,
        &[0x00, 0x65, 0x00, 0x01, 0, 0, 0, 0],
    ) else {
        kunit_expect!(false);
        return;
    };
    let rsp = answer(&mut port, &req);
    kunit_expect_eq!(status(&rsp), MAD_STATUS_SUCCESS);
    kunit_expect_eq!(
        rsp[40..48],
        [0x00, 0x65, 0x00, 0x01, 0x00, 0x00, 0xca, 0xfe]
    );
    kunit_expect_eq!(rsp[48..64], table[24..40]);
}

/// Bad requests get the status of their fault and change nothing; a request too short for a
/// vendor header gets no answer.
fn bad_requests() {
    let mut port = TestPort::default();
    kunit_expect!(port.add_vport(0).is_ok());
    let cases: [(u8, u16, u32, &[u8], u16); 6] = [
        // Unknown attribute; Set of a read-only attribute; a Trap to the agent.
        (
            METHOD_GET,
            0x0099,
            0,
            &[],
            MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB,
        ),
        (
            METHOD_SET,
            ATTR_VESWPORT_SUMMARY_COUNTERS,
            0,
            &[],
            MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB,
        ),
        (
            METHOD_TRAP,
            ATTR_VESWPORT_INFO,
            0,
            &[],
            MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB,
        ),
        // A vport that does not exist.
        (
            METHOD_GET,
            ATTR_VESWPORT_MAC_ENTRIES,
            2,
            &[],
            MAD_STATUS_INVALID_ATTRIB_VALUE,
        ),
        // 126 MAC entries: more than one MAD holds.
        (
            METHOD_GET,
            ATTR_VESWPORT_MAC_ENTRIES,
            0,
            &[0, 0, 0, 126, 0, 0, 0, 0],
            MAD_STATUS_INVALID_ATTRIB_VALUE,
        ),
        // A window past the table's 2048 entries.
        (
            METHOD_SET,
            ATTR_VESWPORT_MAC_ENTRIES,
            0,
            &[0x07, 0xff, 0, 2, 0, 0, 0, 0],
            MAD_STATUS_INVALID_ATTRIB_VALUE,
        ),
    ];
    for (method, attr, attr_mod, data, want) in cases {
        let Ok(req) = request(method, attr, attr_mod, data) else {
            kunit_expect!(false);
            return;
        };
        let rsp = answer(&mut port, &req);
        kunit_expect_eq!(rsp.len(), RESPONSE_LEN);
        kunit_expect_eq!(rsp[3], METHOD_GET_RESP);
        kunit_expect_eq!(status(&rsp), want);
    }
    kunit_expect!(!port.has_vport(2));
    kunit_expect!(port.vport(0).is_some_and(|v| v.macs.is_empty()));

    let Ok(mut req) = request(METHOD_GET, ATTR_CLASS_PORT_INFO, 0, &[]) else {
        kunit_expect!(false);
        return;
    };
    // Versions and OUI are the MAD layer's to filter: answered as the C agent does.
    req[0] = 0x01; // base version 1: an InfiniBand-sized MAD
    let rsp = answer(&mut port, &req);
    kunit_expect_eq!(status(&rsp), MAD_STATUS_SUCCESS);
    kunit_expect_eq!(rsp.first().copied(), Some(0x01));
    req[0] = 0x80;
    req[39] = 0x6b; // not Intel's OUI
    kunit_expect_eq!(status(&answer(&mut port, &req)), MAD_STATUS_SUCCESS);
    kunit_expect_eq!(answer(&mut port, &req[..39]).len(), 0);
}

kernel::kunit_suite!(
    opa_vnic_rs_vema,
    [
        get_class_port_info,
        set_and_get_vport_info,
        mac_entries,
        bad_requests
    ]
);
