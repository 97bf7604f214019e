// SPDX-License-Identifier: GPL-2.0

//! Wire formats of Omni-Path VNIC (Ethernet over Omni-Path): the single
//! source of every byte that crosses the fabric.
//!
//! This module is `core` only (no allocation, no raw pointers, no panics on
//! any input) and is compiled into the `opa_vnic_rs` kernel module, the
//! `opasim` kernel module, the `vnic-em` tool and the host tests. It covers:
//!
//! - [`hdr16b`]: the 16B header of an encapsulated Ethernet frame, its
//!   length, padding and tail byte;
//! - [`encap`]: the transmit decisions (entropy, default port, SC, VL, RC,
//!   DLID, MAC table hash, MAC list checksum);
//! - [`mad`]: the common MAD header, the vendor (VEMA) MAD, methods, status
//!   codes (and the status each error maps to), attribute ids and request
//!   classification;
//! - [`vema_info`], [`vema_mac`], [`vema_counters`]: every VEMA attribute;
//! - [`vema_info_bytes`]: the VESW port info in its wire form, as the agent keeps it;
//! - [`trap`]: the VNIC trap and its Notice;
//! - [`tx_plan`]: the transmit decisions of a vport, as tables made when it changes, and
//!   [`vl_table`]: the VLs of those, as queue selection reads them;
//! - [`error`]: the typed errors.
//!
//! Multi-byte MAD fields are big-endian; the 16B header is made of
//! little-endian words, as the HFI reads it.

#[macro_use]
mod codec;

pub mod encap;
pub mod error;
pub mod hdr16b;
pub mod mad;
pub mod trap;
pub mod tx_plan;
pub mod vema_counters;
pub mod vema_info;
pub mod vema_info_bytes;
pub mod vema_mac;
pub mod vl_table;

pub use error::WireError;
