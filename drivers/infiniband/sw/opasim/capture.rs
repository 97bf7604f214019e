// SPDX-License-Identifier: GPL-2.0-only

//! The capture point of the switch: the last packets it forwarded (or dropped for an unknown
//! LID), so that tests can assert on the exact bytes on the wire. Shown by the debugfs file
//! `capture`, one packet a line:
//!
//! ```text
//! 12 vnic dev 0 port 1 slid 0x1 dlid 0x2 pkey 0x8001 len 88 vl 0 <hex of the first 256 bytes>
//! ```
//!
//! `vl` is the VL the packet was sent on (the VL of the driver's metadata, which the HFI puts in
//! the PBC; `-` for a UD packet, whose VL opasim does not model).
//!
//! Writing `clear` to the file empties it.

use core::fmt::Write;
use kernel::{debugfs::Text, new_irq_spinlock, prelude::*, sync::IrqSpinLock};

/// How many packets the capture keeps.
pub(crate) const DEPTH: usize = 64;

/// How many bytes of each packet it keeps.
pub(crate) const SNAP: usize = 256;

/// What a captured packet is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A UD packet (a MAD on QP0/QP1); the bytes are the payload.
    Ud,
    /// A 16B VNIC packet; the bytes are the whole packet, header to tail.
    Vnic,
}

#[derive(Clone, Copy)]
struct Record {
    seq: u64,
    kind: Kind,
    dev: u32,
    port: u32,
    slid: u32,
    dlid: u32,
    pkey: u16,
    vl: Option<u8>,
    len: usize,
    bytes: [u8; SNAP],
}

struct Ring {
    /// [`DEPTH`] slots, on the heap (the ring is too large for a kernel stack).
    records: KVec<Option<Record>>,
    next: u64,
}

/// The capture ring.
#[pin_data]
pub(crate) struct Capture {
    #[pin]
    ring: IrqSpinLock<Ring>,
}

impl Capture {
    /// An empty capture.
    pub(crate) fn new() -> Result<impl PinInit<Self>> {
        let mut records = KVec::with_capacity(DEPTH, GFP_KERNEL)?;
        for _ in 0..DEPTH {
            records.push(None, GFP_KERNEL)?;
        }
        Ok(pin_init!(Self {
            ring <- new_irq_spinlock!(Ring { records, next: 0 }, "opasim_capture"),
        }))
    }

    /// Records a packet sent from port `port` of device `dev`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        kind: Kind,
        dev: u32,
        port: u32,
        slid: u32,
        dlid: u32,
        pkey: u16,
        vl: Option<u8>,
        data: &[u8],
    ) {
        let n = data.len().min(SNAP);
        let mut r = self.ring.lock();
        let seq = r.next;
        r.next += 1;
        let slot = &mut r.records[(seq % DEPTH as u64) as usize];
        // Written in place: a record is too large to build on the stack of every send.
        let rec = slot.get_or_insert(Record {
            seq,
            kind,
            dev,
            port,
            slid,
            dlid,
            pkey,
            vl,
            len: 0,
            bytes: [0; SNAP],
        });
        rec.seq = seq;
        rec.kind = kind;
        rec.dev = dev;
        rec.port = port;
        rec.slid = slid;
        rec.dlid = dlid;
        rec.pkey = pkey;
        rec.vl = vl;
        rec.len = data.len();
        rec.bytes[..n].copy_from_slice(&data[..n]);
    }

    /// Forgets every packet.
    pub(crate) fn clear(&self) {
        let mut r = self.ring.lock();
        r.records.iter_mut().for_each(|s| *s = None);
    }

    /// Writes the packets, oldest first, one a line.
    pub(crate) fn show(&self, out: &mut KVec<u8>) {
        // Room for every record first: the lock keeps interrupts off, so nothing may
        // allocate (or copy the whole ring to the stack) under it.
        let Ok(mut recs) = KVec::<Record>::with_capacity(DEPTH, GFP_KERNEL) else {
            return;
        };
        {
            let r = self.ring.lock();
            for rec in r.records.iter().flatten() {
                // Within the capacity: does not allocate.
                if recs.push(*rec, GFP_ATOMIC).is_err() {
                    break;
                }
            }
        }
        // Oldest first.
        let v = recs.as_mut_slice();
        v.sort_unstable_by_key(|r| r.seq);
        let mut w = Text(out);
        for r in v.iter() {
            let _ = write!(
                w,
                "{} {} dev {} port {} slid {:#x} dlid {:#x} pkey {:#06x} len {} vl ",
                r.seq,
                if r.kind == Kind::Vnic { "vnic" } else { "ud" },
                r.dev,
                r.port,
                r.slid,
                r.dlid,
                r.pkey,
                r.len
            );
            let _ = match r.vl {
                Some(vl) => write!(w, "{} ", vl),
                None => write!(w, "- "),
            };
            for b in &r.bytes[..r.len.min(SNAP)] {
                let _ = write!(w, "{:02x}", b);
            }
            let _ = writeln!(w);
        }
    }
}
