// SPDX-License-Identifier: GPL-2.0

//! The VEMA agent's answers, checked byte by byte against the offsets of the VEMA MAD layout
//! (vendor header 40 bytes, then the attribute data), over a backend made of plain values.

use opa_wire::mad::*;
use opa_wire::vema_agent::{process, VportBackend, RESPONSE_LEN};
use opa_wire::vema_counters::{ErrorCounters, SummaryCounters};
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo};
use opa_wire::vema_info_bytes::VeswPortInfoRef;
use opa_wire::vema_mac::{MacTable, MacTableEntry};
use opa_wire::WireError;
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};

mod counters;
mod info;
mod mac;
mod requests;

#[derive(Default)]
struct Vport {
    info: VeswPortInfo,
    macs: BTreeMap<u16, MacTableEntry>,
    ucast: Vec<[u8; 6]>,
    mcast: Vec<[u8; 6]>,
    refuse_update: bool,
    /// Sets and resets of the info fail busy (what cannot allocate).
    busy: bool,
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
    fn set_vport_info(
        &mut self,
        vport: u8,
        info: &VeswPortInfoRef<'_>,
        out: &mut [u8],
    ) -> Result<(), WireError> {
        let v = self.vports.get_mut(&vport).unwrap();
        if v.busy {
            return Err(WireError::Busy);
        }
        v.info.apply_set(&info.info());
        v.info.encode(out)
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
    fn reset_vport(&mut self, vport: u8) -> Result<(), WireError> {
        let v = self.vports.get_mut(&vport).unwrap();
        if v.busy {
            return Err(WireError::Busy);
        }
        v.info.apply_set(&VeswPortInfo::vema_pod());
        v.macs.clear();
        v.info.vport.mac_tbl_digest = 0;
        Ok(())
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

/// The data of a MAC table Set: the header, then each entry's MAC (no mask) and DLID.
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

/// A port with one vport, `vport`.
fn port_with_vport(vport: u8) -> TestPort {
    let mut port = TestPort::default();
    port.add_vport(vport).unwrap();
    port
}
