// SPDX-License-Identifier: GPL-2.0-only

//! The KUnit suite of opasim's PMA: performance MADs offered to a registered two-port device
//! through `process_mad`, answered as hfi1's `process_perf_opa()` and `process_perf()` do.

use crate::{
    kunit_mad::{be16, be32, be64, device, offer, opa_dr, put, REPLIED},
    port::Counters,
};
use kernel::{kunit_expect, kunit_expect_eq, prelude::*};

/// An OPA PM Get of `attr` (LID-routed from port 1's own LID).
fn pm(method: u8, attr: u16, am: u32) -> KVec<u8> {
    let mut m = opa_dr(method, attr, am, 0);
    m[1] = 0x04;
    m[32..40].fill(0);
    m
}

fn pma_counters() {
    let Some(d) = device() else {
        kunit_expect!(false);
        return;
    };
    let p = &d.ports[0];
    Counters::add(&p.counters.xmit_bytes, 8000);
    Counters::add(&p.counters.xmit_packets, 10);
    Counters::add(&p.counters.rcv_bytes, 800);
    Counters::add(&p.counters.rcv_packets, 2);
    let (o, a) = offer(&d, 1, &pm(1, 0x01, 0), false);
    kunit_expect_eq!(o.flags, REPLIED);
    kunit_expect_eq!(&a[24..26], &[0x80, 0x80]);
    kunit_expect_eq!(be32(&a, 28), 18);
    // PortStatus of port 1, VL0: flits of 8 bytes.
    let mut m = pm(1, 0x40, 0x0100_0000);
    m[24] = 1;
    put(&mut m, 28, &1u32.to_be_bytes());
    let (o, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(o.size, 24 + 216 + 112);
    kunit_expect_eq!(be64(&a, 24 + 8), 1000);
    kunit_expect_eq!(be64(&a, 24 + 16), 100);
    kunit_expect_eq!(be64(&a, 24 + 24), 10);
    kunit_expect_eq!(be64(&a, 24 + 32), 2);
    kunit_expect_eq!(a[24 + 209], 5);
    // VL 8 is not a VL of the port.
    put(&mut m, 28, &0x100u32.to_be_bytes());
    let (_, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(be16(&a, 4), 0x001c);
    // DataPortCounters for port 2 asked on port 1: invalid.
    let mut m = pm(1, 0x42, 0x0100_0000);
    put(&mut m, 24 + 24, &4u64.to_be_bytes());
    let (_, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(be16(&a, 4), 0x001c);
    put(&mut m, 24 + 24, &2u64.to_be_bytes());
    let (_, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(be16(&a, 4), 0);
    kunit_expect_eq!(be64(&a, 24 + 40 + 8), 1000);
    // ClearPortStatus of PortXmitData: zero; the packets stay.
    let mut m = pm(2, 0x41, 0x0100_0000);
    put(&mut m, 24 + 24, &2u64.to_be_bytes());
    put(&mut m, 24 + 32, &(1u32 << 31).to_be_bytes());
    let (o, _) = offer(&d, 1, &m, false);
    kunit_expect_eq!(o.flags, REPLIED);
    kunit_expect_eq!(Counters::get(&p.counters.xmit_bytes), 0);
    kunit_expect_eq!(Counters::get(&p.counters.xmit_packets), 10);
    // The IB PortCounters sysfs reads: data in 4-byte words.
    let mut ib = KVec::new();
    let _ = ib.extend_from_slice(&[0u8; 256], GFP_KERNEL);
    put(&mut ib, 0, &[1, 0x04, 1, 1]);
    put(&mut ib, 16, &0x12u16.to_be_bytes());
    ib[65] = 1;
    let mut out = [0u8; 256];
    let o = d.reg.device().process_mad(1, &ib, None, true, &mut out);
    kunit_expect_eq!(o.map(|o| o.flags).unwrap_or(0), REPLIED);
    kunit_expect_eq!(be32(&out, 64 + 28), 200);
    kunit_expect_eq!(be32(&out, 64 + 36), 2);
}

kernel::kunit_suite!(opasim_pma, [pma_counters]);
