// SPDX-License-Identifier: GPL-2.0

//! Golden vectors of the VEMA MADs: for each attribute a byte array with
//! known field values placed by hand at the offsets of the C struct layout
//! (opa_vnic_encap.h, ib_mad.h), big-endian, never produced by the encoder.
//! Each test checks that decode reads those values from those offsets and
//! that encode gives back the same bytes.

use opa_wire::mad::*;
use opa_wire::trap::*;
use opa_wire::vema_counters::*;
use opa_wire::vema_info::*;
use opa_wire::vema_mac::*;
use opa_wire::WireError;

mod counters;
mod info;
mod mac;
mod mad;

/// Writes `bytes` at `off`.
fn at(buf: &mut [u8], off: usize, bytes: &[u8]) {
    buf[off..off + bytes.len()].copy_from_slice(bytes);
}

/// A buffer whose every byte differs from its neighbours, so that a field
/// read from the wrong offset shows.
fn pattern(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(0x11))
        .collect()
}
