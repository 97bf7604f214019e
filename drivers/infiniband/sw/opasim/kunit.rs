// SPDX-License-Identifier: GPL-2.0-only

//! KUnit suites of opasim: the P_Key rule, the VNIC wire format and the integrity checks of
//! the simulated HFI (the switch has its own suite, in `kunit_switch.rs`).

use crate::{
    integrity::{self, DropCounters, PortView, TxDrop, DEFAULT_SC2VL},
    pkey,
    port::Counters,
    vnic,
    wire::hdr16b::{self, Encap},
};
use kernel::{kunit_expect, kunit_expect_eq, prelude::*};

fn pkey_full_and_limited() {
    // Full to full, full to limited, limited to full: accepted.
    kunit_expect!(pkey::matches(0xffff, 0xffff));
    kunit_expect!(pkey::matches(0x8001, 0x0001));
    kunit_expect!(pkey::matches(0x0001, 0x8001));
    // Limited to limited: refused.
    kunit_expect!(!pkey::matches(0x0001, 0x0001));
    kunit_expect!(!pkey::matches(0x7fff, 0x7fff));
}

fn pkey_key_parts_differ() {
    kunit_expect!(!pkey::matches(0x8001, 0x8002));
    kunit_expect!(!pkey::matches(0xffff, 0x8001));
    // The invalid P_Key matches nothing, not even itself as a full member.
    kunit_expect!(!pkey::matches(0x8000, 0x8000));
    kunit_expect!(!pkey::matches(0x0000, 0x8000));
}

fn pkey_find_index() {
    let table = [0xffff, 0x0001, 0x8002, 0];
    kunit_expect_eq!(pkey::find(&table, 0xffff), Some(0));
    kunit_expect_eq!(pkey::find(&table, 0x7fff), Some(0));
    kunit_expect_eq!(pkey::find(&table, 0x8001), Some(1));
    kunit_expect_eq!(pkey::find(&table, 0x0001), None);
    kunit_expect_eq!(pkey::find(&table, 0x0002), Some(2));
    kunit_expect_eq!(pkey::find(&table, 0x8003), None);
}

/// The index a MAD reports, as hfi1's `hfi1_lookup_pkey_idx()`: a limited management MAD is
/// on 0x7fff's entry even when 0xffff comes first and accepts it too (`find()` gave 0).
fn pkey_mad_index() {
    let table = [0xffff, 0x7fff, 0x8001, 0];
    kunit_expect_eq!(pkey::mad_index(&table, 0x7fff), Some(1));
    kunit_expect_eq!(pkey::mad_index(&table, 0xffff), Some(0));
    kunit_expect_eq!(pkey::mad_index(&table[1..], 0xffff), Some(0));
    kunit_expect_eq!(pkey::mad_index(&table[2..], 0x7fff), None);
    kunit_expect_eq!(pkey::mad_index(&table, 0x0001), Some(2));
}

kernel::kunit_suite!(
    opasim_pkey,
    [
        pkey_full_and_limited,
        pkey_key_parts_differ,
        pkey_find_index,
        pkey_mad_index
    ]
);

/// A 16B packet for a frame of `eth_len` bytes, as the VNIC client builds it (header and
/// frame, no pad or tail).
fn client_packet(eth_len: usize) -> Option<KVec<u8>> {
    client_packet_sc(eth_len, 0)
}

/// [`client_packet`] with SC `sc`.
fn client_packet_sc(eth_len: usize, sc: u8) -> Option<KVec<u8>> {
    let enc = Encap {
        slid: 1,
        dlid: 2,
        sc,
        rc: 0,
        pkey: 0x8001,
        entropy: 0x11,
        vesw_id: 3,
    };
    let hdr = enc.header(eth_len).ok()?;
    let mut pkt = KVec::new();
    pkt.extend_from_slice(&hdr.to_bytes().ok()?, GFP_KERNEL)
        .ok()?;
    for i in 0..eth_len {
        pkt.push(i as u8, GFP_KERNEL).ok()?;
    }
    Some(pkt)
}

fn vnic_wire_tail() {
    // Every pad count: frames of 60 to 67 bytes.
    for eth_len in 60..68 {
        let Some(pkt) = client_packet(eth_len) else {
            kunit_expect!(false);
            return;
        };
        let Ok((hdr, wire)) = vnic::wire_packet(&pkt) else {
            kunit_expect!(false);
            return;
        };
        kunit_expect_eq!(wire.len(), usize::from(hdr.len_qw) * 8);
        kunit_expect_eq!(wire.len() % 8, 0);
        kunit_expect_eq!(wire[..pkt.len()], pkt[..]);
        // The receive side takes it apart into the same frame.
        match hdr16b::decap(&wire) {
            Ok(d) => {
                kunit_expect_eq!(d.eth, &pkt[hdr16b::HDR_LEN..]);
                kunit_expect_eq!(d.icrc, 0);
                kunit_expect_eq!(
                    usize::from(d.pad),
                    wire.len() - pkt.len() - hdr16b::ICRC_TAIL_LEN
                );
                kunit_expect_eq!(d.hdr.vesw_id(), 3);
                // The tail byte: pad count, and LT 01b (tail flit) as the format gives it.
                kunit_expect_eq!(d.tail >> 6, 1);
                kunit_expect_eq!(d.tail & hdr16b::TAIL_PAD_MASK, d.pad);
            }
            Err(_) => kunit_expect!(false),
        }
    }
}

fn vnic_wire_bad_length() {
    let Some(mut pkt) = client_packet(60) else {
        kunit_expect!(false);
        return;
    };
    // A frame longer than the header says: no room for the tail.
    let _ = pkt.extend_from_slice(&[0; 16], GFP_KERNEL);
    kunit_expect!(vnic::wire_packet(&pkt).is_err());
    // No header at all.
    kunit_expect!(vnic::wire_packet(&[0u8; 8]).is_err());
}

fn vnic_size_histogram() {
    let g = crate::vnic_stats::GrpCounters::default();
    let mut frame = [0u8; 14];
    // Unicast, untagged: the thresholds of hfi1 (lengths without FCS).
    for len in [60, 61, 123, 124, 251, 252, 507, 508, 1019, 1020, 1514, 1515] {
        g.count(&frame, len, true);
    }
    kunit_expect_eq!(g.sizes(), [1, 2, 2, 2, 2, 2, 1]);
    kunit_expect_eq!(g.kinds(), [12, 0, 12, 0]);
    // Broadcast and VLAN-tagged frames; a bad frame counts its size only.
    frame[0] = 0xff;
    frame[12] = 0x81;
    g.count(&frame, 64, true);
    g.count(&frame, 64, false);
    kunit_expect_eq!(g.kinds(), [12, 1, 12, 1]);
    kunit_expect_eq!(g.sizes()[1], 4);
}

kernel::kunit_suite!(
    opasim_vnic,
    [vnic_wire_tail, vnic_wire_bad_length, vnic_size_histogram]
);

/// Port LID 1, hfi1's SC-to-VL table after reset.
fn port_view() -> PortView {
    PortView {
        lid: 1,
        lmc: 0,
        sc2vl: DEFAULT_SC2VL,
        vl_mtu: integrity::DEFAULT_VL_MTUS,
    }
}

fn integrity_accepts_good_packets() {
    let p = port_view();
    // Every SC on its VL of the default table, and frames from 60 bytes to jumbo on the data
    // VLs; VL15's MTU is 2048 (`MAX_MAD_PACKET`).
    for (sc, vl) in [(0u8, 0u8), (1, 1), (7, 7), (8, 0), (15, 15), (31, 0)] {
        for eth_len in [60, 61, 1514, 9018] {
            let want = if vl == integrity::VL15 && eth_len > 2048 {
                Err(TxDrop::TooLong)
            } else {
                Ok(())
            };
            match client_packet_sc(eth_len, sc) {
                Some(pkt) => kunit_expect_eq!(integrity::check(&p, vl, &pkt).map(|_| ()), want),
                None => kunit_expect!(false),
            }
        }
    }
}

fn integrity_vl_mapping() {
    let mut p = port_view();
    let Some(pkt) = client_packet_sc(60, 3) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect_eq!(
        integrity::check(&p, 0, &pkt).err(),
        Some(TxDrop::BadVlMapping)
    );
    kunit_expect!(integrity::check(&p, 3, &pkt).is_ok());
    // A table the fabric manager changed.
    p.sc2vl[3] = 5;
    kunit_expect_eq!(
        integrity::check(&p, 3, &pkt).err(),
        Some(TxDrop::BadVlMapping)
    );
    kunit_expect!(integrity::check(&p, 5, &pkt).is_ok());
    // A VL the port does not have, whatever the table says.
    p.sc2vl[3] = 9;
    kunit_expect_eq!(integrity::check(&p, 9, &pkt).err(), Some(TxDrop::BadVl));
}

fn integrity_slid() {
    let mut p = port_view();
    let Some(pkt) = client_packet(60) else {
        kunit_expect!(false);
        return;
    };
    p.lid = 2;
    kunit_expect_eq!(integrity::check(&p, 0, &pkt).err(), Some(TxDrop::BadSlid));
    // Under an LMC of 1, LIDs 0 and 1 are the port's.
    p.lid = 0;
    p.lmc = 1;
    kunit_expect!(integrity::check(&p, 0, &pkt).is_ok());
}

fn integrity_lengths() {
    let p = port_view();
    let Some(mut pkt) = client_packet(60) else {
        kunit_expect!(false);
        return;
    };
    // Eight more bytes than the length field says.
    let _ = pkt.extend_from_slice(&[0; 8], GFP_KERNEL);
    kunit_expect_eq!(integrity::check(&p, 0, &pkt).err(), Some(TxDrop::BadLength));
    // Not a 16B header.
    kunit_expect_eq!(
        integrity::check(&p, 0, &[0u8; 24]).err(),
        Some(TxDrop::BadHeader)
    );
    // Longer than the VL's MTU and the largest header.
    let long = usize::from(integrity::DEFAULT_VL_MTU) + integrity::MAX_HDR_BYTES;
    match client_packet(long) {
        Some(pkt) => kunit_expect_eq!(integrity::check(&p, 0, &pkt).err(), Some(TxDrop::TooLong)),
        None => kunit_expect!(false),
    }
    // A VL whose MTU the fabric manager lowered to 4096: a 9000-byte frame no longer fits,
    // on that VL only.
    let mut small = port_view();
    small.vl_mtu[0] = 4096;
    match client_packet(9014) {
        Some(pkt) => {
            kunit_expect_eq!(
                integrity::check(&small, 0, &pkt).err(),
                Some(TxDrop::TooLong)
            );
            kunit_expect!(integrity::check(&p, 0, &pkt).is_ok());
        }
        None => kunit_expect!(false),
    }
    // Shorter than an Ethernet header.
    match client_packet(6) {
        Some(pkt) => kunit_expect_eq!(integrity::check(&p, 0, &pkt).err(), Some(TxDrop::TooSmall)),
        None => kunit_expect!(false),
    }
}

fn integrity_counters() {
    let c = DropCounters::default();
    Counters::inc(c.of(TxDrop::BadSlid));
    Counters::inc(c.of(TxDrop::BadSlid));
    Counters::inc(c.of(TxDrop::TooSmall));
    let counts = TxDrop::ALL.map(|d| Counters::get(c.of(d)));
    kunit_expect_eq!(counts, [0, 0, 0, 0, 2, 0, 0, 1]);
    kunit_expect_eq!(TxDrop::ALL.map(|d| d as usize), [0, 1, 2, 3, 4, 5, 6, 7]);
}

fn vnic_queue_choice() {
    use kernel::rdma::vnic::SkbMetadata;
    let m = |vl, entropy| SkbMetadata {
        vl,
        entropy,
        flags: 0,
    };
    // Flows of one VL spread over every queue; always a queue that exists.
    let mut seen = [false; 4];
    for e in 0..=255u8 {
        let q = usize::from(vnic::select_queue(&m(2, e), 4));
        kunit_expect!(q < 4);
        if let Some(s) = seen.get_mut(q) {
            *s = true;
        }
    }
    kunit_expect_eq!(seen, [true; 4]);
    kunit_expect_eq!(vnic::select_queue(&m(7, 200), 1), 0);
    kunit_expect_eq!(vnic::select_queue(&m(7, 200), 0), 0);
}

fn vl_mtu_writes() {
    use crate::control::parse_vl_mtu;
    use integrity::DEFAULT_VL_MTUS;
    let mut lowered = DEFAULT_VL_MTUS;
    lowered[2] = 4096;
    kunit_expect_eq!(
        parse_vl_mtu(b"2:4096\n", DEFAULT_VL_MTUS).ok(),
        Some(lowered)
    );
    kunit_expect_eq!(
        parse_vl_mtu(b"default", lowered).ok(),
        Some(DEFAULT_VL_MTUS)
    );
    kunit_expect_eq!(
        parse_vl_mtu(b"2048 2048 2048 2048 2048 2048 2048 8192", lowered).ok(),
        Some([2048, 2048, 2048, 2048, 2048, 2048, 2048, 8192])
    );
    // Not an OPA MTU, no such VL, too few or too many MTUs, nothing.
    for bad in [
        &b"2:5000"[..],
        b"8:4096",
        b"4096 4096",
        b"256 256 256 256 256 256 256 256 256",
        b"",
        b"2:",
    ] {
        kunit_expect!(parse_vl_mtu(bad, DEFAULT_VL_MTUS).is_err());
    }
}

fn sdma_ring_pushes_back() {
    use crate::vnic_dma::{Post, VnicDma};
    use kernel::net::skbuff::SkBuff;
    let Ok(dma) = VnicDma::new(2, 64) else {
        kunit_expect!(false);
        return;
    };
    let skb = || SkBuff::alloc(64, GFP_KERNEL).map(|s| s.into_inner());
    // A linear packet takes 3 descriptors: 21 fit a ring of 64, the 22nd does not.
    let mut queued = 0;
    let mut busy = 0;
    for _ in 0..22 {
        let Ok(s) = skb() else {
            kunit_expect!(false);
            return;
        };
        match dma.post(0, s, 0) {
            Post::Queued => queued += 1,
            Post::Busy(_) => busy += 1,
            Post::Dead(_) => {}
        }
    }
    kunit_expect_eq!((queued, busy), (21, 1));
    // The ring is deferred until completions free it: a post to it is dropped, while the
    // other queue's ring takes posts.
    kunit_expect!(!dma.write_avail(0));
    kunit_expect!(dma.write_avail(1));
    if let Ok(s) = skb() {
        kunit_expect!(matches!(dma.post(0, s, 0), Post::Dead(_)));
    }
    if let Ok(s) = skb() {
        kunit_expect!(matches!(dma.post(1, s, 0), Post::Queued));
    }
    // What `vnic_tx_hold` shows as held: every packet posted and not completed.
    kunit_expect_eq!(dma.queued(), 22);
}

fn fifo_order_and_bound() {
    use crate::fifo::Fifo;
    let Ok(mut f) = Fifo::new(3) else {
        kunit_expect!(false);
        return;
    };
    for i in 0..3 {
        kunit_expect!(f.push(i).is_ok());
    }
    kunit_expect_eq!(f.push(3), Err(3));
    kunit_expect_eq!(f.pop(), Some(0));
    kunit_expect!(f.push(3).is_ok());
    kunit_expect_eq!(
        [f.pop(), f.pop(), f.pop(), f.pop()],
        [Some(1), Some(2), Some(3), None]
    );
    kunit_expect_eq!(f.len(), 0);
}

/// A port's injected receive errors: the debugfs syntax, the bound, and the order packets
/// are flagged in.
fn rx_error_injection() {
    use crate::rx_errors::{parse, RxErr, RxErrors, MAX_PENDING};
    kunit_expect_eq!(parse(b"icrc 2\n").ok(), Some((RxErr::Icrc, 2)));
    kunit_expect_eq!(parse(b"frame 1").ok(), Some((RxErr::Frame, 1)));
    for bad in [
        &b"icrc"[..],
        b"icrc 0",
        b"crc 1",
        b"frame 1 2",
        b"frame -1",
        b"frame 1000001",
        b"",
        b"\xff 1",
    ] {
        kunit_expect!(parse(bad).is_err());
    }
    let e = RxErrors::default();
    kunit_expect!(e.inject(RxErr::Frame, 1).is_ok());
    kunit_expect!(e.inject(RxErr::Icrc, 2).is_ok());
    // Past the bound: refused, nothing added.
    kunit_expect!(e.inject(RxErr::Icrc, MAX_PENDING).is_err());
    kunit_expect_eq!(e.pending(), [(RxErr::Icrc, 2), (RxErr::Frame, 1)]);
    kunit_expect_eq!(
        [e.take(), e.take(), e.take(), e.take()],
        [
            Some(RxErr::Icrc),
            Some(RxErr::Icrc),
            Some(RxErr::Frame),
            None
        ]
    );
}

/// A port's injected faults: the debugfs syntax, the bound, one fault consumed per operation
/// and counted, and the transmit hold.
fn fault_injection() {
    use crate::faults::{parse_count, parse_hold, Fault, Faults, MAX_PENDING};
    kunit_expect_eq!(parse_count(b"2\n").ok(), Some(2));
    kunit_expect_eq!(parse_count(b"0").ok(), Some(0));
    for bad in [&b""[..], b"-1", b"1 2", b"x", b"1000001", b"0x1", b"\xff"] {
        kunit_expect!(parse_count(bad).is_err());
    }
    kunit_expect_eq!(parse_hold(b"hold\n").ok(), Some(true));
    kunit_expect_eq!(parse_hold(b"release").ok(), Some(false));
    for bad in [&b""[..], b"held", b"hold 1", b"1"] {
        kunit_expect!(parse_hold(bad).is_err());
    }
    let f = Faults::default();
    kunit_expect!(f.inject(Fault::Open, 2).is_ok());
    kunit_expect!(f.inject(Fault::MadSend, 1).is_ok());
    // Past the bound: refused, nothing added.
    kunit_expect!(f.inject(Fault::Open, MAX_PENDING).is_err());
    kunit_expect_eq!(f.counts(Fault::Open), (2, 0));
    // Each operation consumes one, of its own kind only.
    kunit_expect!(!f.take(Fault::SetId));
    kunit_expect!(f.fail(Fault::Open, 1).is_err());
    kunit_expect_eq!(f.fail(Fault::Open, 1).err(), Some(ENOMEM));
    kunit_expect!(f.fail(Fault::Open, 1).is_ok());
    kunit_expect_eq!(f.counts(Fault::Open), (0, 2));
    kunit_expect_eq!(f.counts(Fault::SetId), (0, 0));
    // 0 clears what is pending; what was injected stays counted.
    kunit_expect!(f.inject(Fault::MadSend, 0).is_ok());
    kunit_expect!(!f.take(Fault::MadSend));
    kunit_expect_eq!(f.counts(Fault::MadSend), (0, 0));
    // The hold: counted when it starts, not when it is written again.
    kunit_expect!(!f.tx_held());
    kunit_expect!(!f.hold_tx(true));
    kunit_expect!(f.hold_tx(true));
    kunit_expect!(f.tx_held());
    kunit_expect!(f.hold_tx(false));
    kunit_expect!(!f.tx_held());
    kunit_expect_eq!(f.holds(), 1);
}

kernel::kunit_suite!(
    opasim_integrity,
    [
        integrity_accepts_good_packets,
        integrity_vl_mapping,
        integrity_slid,
        integrity_lengths,
        integrity_counters,
        vnic_queue_choice,
        vl_mtu_writes,
        sdma_ring_pushes_back,
        fifo_order_and_bound,
        rx_error_injection,
        fault_injection
    ]
);
