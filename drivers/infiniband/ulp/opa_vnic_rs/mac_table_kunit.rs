// SPDX-License-Identifier: GPL-2.0-only

//! KUnit suite of the MAC table transmit reads: tables built in kernel memory (`KVec`) from
//! EM requests encoded as they arrive, updated window by window, and looked up.

use crate::mac_table::{merge, MacIndex, MacSlot};
use crate::wire::vema_mac::{MacTable, MacTableEntry, MacTableHdr, DLID_SD_SRC_MAC};
use kernel::{kunit_expect, kunit_expect_eq, prelude::*};

type Table = MacIndex<KVec<MacSlot>>;

fn mac(a: u8, b: u8) -> [u8; 6] {
    [0x02, 0x11, 0x22, 0x33, a, b]
}

fn entry(mac: [u8; 6], dlid: u32) -> MacTableEntry {
    MacTableEntry {
        mac_addr: mac,
        mac_addr_mask: [0xff; 6],
        dlid_sd: dlid << 8,
    }
}

/// Applies to `old` a Set of `entries` at `offset`, encoded as the EM sends it, as the driver
/// does: merged into a new `KVec` with room for both, then indexed.
fn update(old: &Table, offset: u16, entries: &[MacTableEntry]) -> Result<Table> {
    let hdr = MacTableHdr {
        offset,
        num_entries: entries.len() as u16,
        mac_tbl_digest: 0,
    };
    let mut buf = KVec::from_elem(0u8, 8 + 16 * entries.len(), GFP_KERNEL)?;
    MacTable::encode(&hdr, entries, &mut buf).map_err(|_| EINVAL)?;
    let req = MacTable::decode(&buf).map_err(|_| EINVAL)?;
    let mut slots = KVec::with_capacity(old.len() + req.len(), GFP_KERNEL)?;
    merge(old.slots().iter(), &req, &mut |s| {
        slots
            .push(s, GFP_KERNEL)
            .map_err(|_| crate::wire::WireError::NoSpace)
    })
    .map_err(|_| ENOMEM)?;
    Ok(MacIndex::new(slots))
}

/// A full request of 125 entries, all in one bucket and all in others, every address found.
fn lookup_full_request() {
    let empty = MacIndex::new(KVec::new());
    kunit_expect_eq!(empty.lookup(&mac(0, 0)), 0);
    let mut entries = KVec::new();
    for i in 0..125u32 {
        // Entries 0-59 share the bucket of last byte 0x42; the others spread.
        let m = if i < 60 {
            mac(i as u8, 0x42)
        } else {
            mac(0xf0, i as u8)
        };
        kunit_expect!(entries.push(entry(m, 0x100 + i), GFP_KERNEL).is_ok());
    }
    let Ok(t) = update(&empty, 100, &entries) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect_eq!(t.len(), 125);
    for i in 0..125u32 {
        let m = if i < 60 {
            mac(i as u8, 0x42)
        } else {
            mac(0xf0, i as u8)
        };
        kunit_expect_eq!(t.lookup(&m), 0x100 + i);
    }
    kunit_expect_eq!(t.lookup(&mac(61, 0x42)), 0);
    kunit_expect_eq!(t.lookup(&mac(0xf1, 70)), 0);
}

/// A second request replaces its window only; a zero MAC deletes; source MAC entries never
/// give a DLID.
fn update_window() {
    let empty = MacIndex::new(KVec::new());
    let first = [
        entry(mac(1, 1), 0x11),
        entry(mac(2, 2), 0x22),
        entry(mac(3, 3), 0x33),
        entry(mac(4, 4), 0x44),
    ];
    let Ok(t) = update(&empty, 0, &first) else {
        kunit_expect!(false);
        return;
    };
    let mut src = entry(mac(9, 9), 0x99);
    src.dlid_sd |= DLID_SD_SRC_MAC;
    let second = [entry([0; 6], 0x55), entry(mac(2, 2), 0x222), src];
    let Ok(t) = update(&t, 1, &second) else {
        kunit_expect!(false);
        return;
    };
    // Index 0 is outside the window (1-3) and stays; index 1 is deleted, 2 and 3 replaced.
    kunit_expect_eq!(t.len(), 3);
    kunit_expect_eq!(t.lookup(&mac(1, 1)), 0x11);
    kunit_expect_eq!(t.lookup(&mac(2, 2)), 0x222);
    kunit_expect_eq!(t.lookup(&mac(3, 3)), 0);
    kunit_expect_eq!(t.lookup(&mac(4, 4)), 0);
    // Index 3 is now a source MAC entry, which no frame is sent to.
    kunit_expect_eq!(t.lookup(&mac(9, 9)), 0);
    let mut indices = [false; 8];
    for s in t.slots() {
        if let Some(seen) = indices.get_mut(usize::from(s.index)) {
            *seen = true;
        }
    }
    kunit_expect_eq!(
        indices,
        [true, false, true, true, false, false, false, false]
    );
}

kernel::kunit_suite!(opa_vnic_rs_mac_table, [lookup_full_request, update_window]);
