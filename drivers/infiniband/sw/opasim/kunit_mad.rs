// SPDX-License-Identifier: GPL-2.0-only

//! What the KUnit suites of opasim's SMA and PMA share: a registered two-port device, MADs
//! crafted byte by byte and offered to it through `process_mad` as the IB core offers them.

use crate::{
    fabric::Fabric,
    hfi::{Hfi, HfiDevice},
    port::{Port, PortConfig},
    sim::{device_guid, port_guid},
};
use kernel::{
    c_str,
    prelude::*,
    rdma::provider::{
        mad::{MadOutcome, MadSource, OPA_MAD_SIZE},
        Registration,
    },
    sync::Arc,
};

/// `IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY`.
pub(crate) const REPLIED: u32 = 3;

/// A registered device of two ports, LIDs 0x41 and 0x42, P_Keys 0xffff and 0x8001.
pub(crate) struct Dev {
    /// The registration.
    pub(crate) reg: Registration<Hfi>,
    /// Its ports.
    pub(crate) ports: [Arc<Port>; 2],
    /// Its node GUID.
    pub(crate) guid: u64,
}

/// The device, registered.
pub(crate) fn device() -> Option<Dev> {
    let fabric = Fabric::new().ok()?;
    let guid = device_guid(0xee);
    let mk = |n: u32| {
        Port::new(
            0xee,
            n,
            port_guid(guid, n),
            PortConfig::new(0x40 + n, &[0xffff, 0x8001]),
        )
    };
    let ports = [mk(1).ok()?, mk(2).ok()?];
    let mut v = KVec::new();
    for p in &ports {
        fabric.attach(p.clone()).ok()?;
        v.push(p.clone(), GFP_KERNEL).ok()?;
    }
    let data = HfiDevice::new(guid, fabric, v);
    let reg = Registration::new(
        &crate::THIS_MODULE,
        c_str!("opasim_kunit%d"),
        None,
        2,
        guid,
        data,
    )
    .ok()?;
    Some(Dev { reg, ports, guid })
}

/// Writes `v` at `at` of `b`.
pub(crate) fn put(b: &mut [u8], at: usize, v: &[u8]) {
    if let Some(d) = b.get_mut(at..at + v.len()) {
        d.copy_from_slice(v);
    }
}

/// The big-endian 16-bit word at `at` of `b`.
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The big-endian 32-bit word at `at` of `b`.
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The big-endian 64-bit word at `at` of `b`.
pub(crate) fn be64(b: &[u8], at: usize) -> u64 {
    (u64::from(be32(b, at)) << 32) | u64::from(be32(b, at + 4))
}

/// An OPA directed-route SMP to the local port (hop count 0, permissive LIDs), as opamgt and
/// the SM send it.
pub(crate) fn opa_dr(method: u8, attr: u16, am: u32, mkey: u64) -> KVec<u8> {
    let mut m = KVec::new();
    let _ = m.extend_from_slice(&[0u8; OPA_MAD_SIZE], GFP_KERNEL);
    put(&mut m, 0, &[0x80, 0x81, 0x80, method]);
    put(&mut m, 8, &0x1234u64.to_be_bytes());
    put(&mut m, 16, &attr.to_be_bytes());
    put(&mut m, 20, &am.to_be_bytes());
    put(&mut m, 24, &mkey.to_be_bytes());
    put(&mut m, 32, &[0xff; 8]);
    m
}

/// The work completion the core makes for a local directed-route SMP (`build_smp_wc()`).
pub(crate) fn local_src(len: u32) -> Option<MadSource> {
    Some(MadSource {
        slid: 0xffff,
        pkey_index: 0,
        byte_len: len + 40,
    })
}

/// Offers `mad` to port `port`; the outcome and the answer.
pub(crate) fn offer(d: &Dev, port: u32, mad: &[u8], ignore_mkey: bool) -> (MadOutcome, KVec<u8>) {
    let mut out = KVec::new();
    let _ = out.extend_from_slice(&[0u8; OPA_MAD_SIZE], GFP_KERNEL);
    let src = local_src(mad.len() as u32);
    let r = d
        .reg
        .device()
        .process_mad(port, mad, src, ignore_mkey, &mut out);
    let o = r.unwrap_or(MadOutcome {
        flags: 0xdead,
        size: 0,
        pkey_index: 0,
    });
    (o, out)
}

/// The DR data offset of an OPA SMP.
pub(crate) const DR: usize = 176;
