// SPDX-License-Identifier: GPL-2.0

//! The hashed MAC table transmit reads, checked against a plain model: a map from table index
//! to entry, updated as `opa_vnic_update_mac_tbl()` does, searched in index order.

use opa_wire::mac_table::{merge, MacIndex, MacSlot};
use opa_wire::vema_mac::{MacTable, MacTableEntry, MacTableHdr, DLID_SD_SRC_MAC};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn entry(mac: [u8; 6], dlid: u32, sd: u32) -> MacTableEntry {
    MacTableEntry {
        mac_addr: mac,
        mac_addr_mask: [0xff; 6],
        dlid_sd: dlid << 8 | sd,
    }
}

/// Encodes a Set of `entries` at `offset`.
fn request(offset: u16, entries: &[MacTableEntry]) -> Vec<u8> {
    let hdr = MacTableHdr {
        offset,
        num_entries: entries.len() as u16,
        mac_tbl_digest: 0x1234,
    };
    let mut buf = vec![0u8; 8 + 16 * entries.len()];
    MacTable::encode(&hdr, entries, &mut buf).unwrap();
    buf
}

/// Applies the Set `req` to `old` through [`merge`] and indexes the result.
fn update(old: &MacIndex<Vec<MacSlot>>, req: &[u8]) -> MacIndex<Vec<MacSlot>> {
    let req = MacTable::decode(req).unwrap();
    let mut slots = Vec::with_capacity(old.len() + req.len());
    merge(old.slots().iter(), &req, &mut |s| {
        slots.push(s);
        Ok(())
    })
    .unwrap();
    assert!(slots.len() <= old.len() + req.len());
    MacIndex::new(slots)
}

/// The model's lookup: the lowest index whose entry is `dmac` and not a source MAC.
fn model_lookup(model: &BTreeMap<u16, MacTableEntry>, dmac: &[u8; 6]) -> u32 {
    model
        .values()
        .find(|e| e.dlid_sd & DLID_SD_SRC_MAC == 0 && e.mac_addr == *dmac)
        .map_or(0, |e| e.dlid_sd >> 8)
}

#[test]
fn empty_table_finds_nothing() {
    let t = MacIndex::new(Vec::new());
    assert!(t.is_empty());
    assert_eq!(t.lookup(&[0; 6]), 0);
    assert_eq!(t.lookup(&[2, 0, 0, 0, 0, 0xff]), 0);
}

#[test]
fn same_bucket_entries_are_told_apart() {
    // Three addresses ending in 0x07 share a bucket.
    let a = [0x02, 0, 0, 0, 0x01, 0x07];
    let b = [0x02, 0, 0, 0, 0x02, 0x07];
    let c = [0x02, 0, 0, 0, 0x03, 0x07];
    let t = update(
        &MacIndex::new(Vec::new()),
        &request(
            10,
            &[entry(a, 0x11, 0), entry(b, 0x22, 0), entry(c, 0x33, 0)],
        ),
    );
    assert_eq!(t.len(), 3);
    assert_eq!(t.lookup(&a), 0x11);
    assert_eq!(t.lookup(&b), 0x22);
    assert_eq!(t.lookup(&c), 0x33);
    assert_eq!(t.lookup(&[0x02, 0, 0, 0, 0x04, 0x07]), 0);
}

#[test]
fn source_mac_entries_never_match() {
    let a = [0x02, 0, 0, 0, 0, 0x40];
    let t = update(
        &MacIndex::new(Vec::new()),
        &request(0, &[entry(a, 0x50, DLID_SD_SRC_MAC), entry(a, 0x60, 0)]),
    );
    assert_eq!(t.lookup(&a), 0x60);
}

#[test]
fn update_replaces_only_its_window() {
    let mac = |i: u8| [0x02, 0, 0, 0, 0, i];
    let t = update(
        &MacIndex::new(Vec::new()),
        &request(
            0,
            &(0..8)
                .map(|i| entry(mac(i), 0x100 + u32::from(i), 0))
                .collect::<Vec<_>>(),
        ),
    );
    // Indices 2-4: a zero MAC deletes 2, 3 becomes a new address, 4 gets a new DLID.
    let t = update(
        &t,
        &request(
            2,
            &[
                entry([0; 6], 0x999, 0),
                entry(mac(0x33), 0x333, 0),
                entry(mac(4), 0x444, 0),
            ],
        ),
    );
    assert_eq!(t.len(), 7);
    assert_eq!(t.lookup(&mac(0)), 0x100);
    assert_eq!(t.lookup(&mac(2)), 0);
    assert_eq!(t.lookup(&mac(3)), 0);
    assert_eq!(t.lookup(&mac(0x33)), 0x333);
    assert_eq!(t.lookup(&mac(4)), 0x444);
    assert_eq!(t.lookup(&mac(7)), 0x107);
    let mut indices: Vec<u16> = t.slots().iter().map(|s| s.index).collect();
    indices.sort();
    assert_eq!(indices, [0, 1, 3, 4, 5, 6, 7]);
}

#[test]
fn a_failing_store_stops_the_merge() {
    let req = request(
        0,
        &[
            entry([2, 0, 0, 0, 0, 1], 1, 0),
            entry([2, 0, 0, 0, 0, 2], 2, 0),
        ],
    );
    let req = MacTable::decode(&req).unwrap();
    let mut n = 0;
    let r = merge([].iter(), &req, &mut |_| {
        n += 1;
        Err(opa_wire::WireError::NoSpace)
    });
    assert_eq!(r, Err(opa_wire::WireError::NoSpace));
    assert_eq!(n, 1);
}

/// A request: an offset and entries over a few addresses, so that updates hit earlier
/// entries, share buckets and repeat addresses.
fn arb_request() -> impl Strategy<Value = (u16, Vec<MacTableEntry>)> {
    let mac = (0u8..4, 0u8..6).prop_map(|(a, b)| {
        if a == 0 && b == 0 {
            [0; 6]
        } else {
            [0x02, 0, 0, 0, a, b]
        }
    });
    let e = (mac, 0u32..0x20, prop::bool::weighted(0.1))
        .prop_map(|(m, dlid, src)| entry(m, dlid, if src { DLID_SD_SRC_MAC } else { 0 }));
    (0u16..40, prop::collection::vec(e, 0..20))
}

proptest! {
    #[test]
    fn updates_and_lookups_match_the_model(reqs in prop::collection::vec(arb_request(), 1..8)) {
        let mut model: BTreeMap<u16, MacTableEntry> = BTreeMap::new();
        let mut t = MacIndex::new(Vec::new());
        for (offset, entries) in &reqs {
            t = update(&t, &request(*offset, entries));
            for (i, e) in entries.iter().enumerate() {
                let index = offset + i as u16;
                if e.is_delete() {
                    model.remove(&index);
                } else {
                    model.insert(index, *e);
                }
            }
            prop_assert_eq!(t.len(), model.len());
            let mut got: Vec<(u16, MacTableEntry)> =
                t.slots().iter().map(|s| (s.index, s.entry)).collect();
            got.sort_by_key(|s| s.0);
            let want: Vec<(u16, MacTableEntry)> = model.iter().map(|(i, e)| (*i, *e)).collect();
            prop_assert_eq!(got, want);
            for a in 0u8..4 {
                for b in 0u8..6 {
                    let dmac = [0x02, 0, 0, 0, a, b];
                    prop_assert_eq!(t.lookup(&dmac), model_lookup(&model, &dmac));
                }
            }
        }
    }
}
