// SPDX-License-Identifier: GPL-2.0

//! Host build of the OPA VNIC wire formats.
//!
//! The code is the kernel driver's own `wire` and `vema_agent` modules,
//! included from `drivers/infiniband/ulp/opa_vnic_rs/`; this crate only compiles it
//! for the host (for `vnic-em`, the tests, the fuzzers and the bench) and
//! makes clippy prove it free of panicking operations.

#![no_std]
#![forbid(unsafe_code)]
#![deny(
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::unreachable,
    clippy::todo,
    clippy::unimplemented,
    clippy::panic_in_result_fn
)]
#![warn(missing_docs, unreachable_pub, rust_2018_idioms)]

#[cfg(test)]
extern crate std;

#[path = "../../../../drivers/infiniband/ulp/opa_vnic_rs/wire/mod.rs"]
pub mod wire;

pub use wire::*;

// The VEMA agent's request processing, as the kernel driver runs it. Its docs are the file's
// own (`//!`): an outer doc here would make rustdoc resolve the file's links from this crate's
// root, where `process` and `VportBackend` do not exist.
#[path = "../../../../drivers/infiniband/ulp/opa_vnic_rs/vema_agent.rs"]
pub mod vema_agent;

// The MAC table of a virtual port as transmit reads it, as the kernel driver keeps it (docs:
// the file's own, as for `vema_agent`).
#[path = "../../../../drivers/infiniband/ulp/opa_vnic_rs/mac_table.rs"]
pub mod mac_table;

/// Subnet Administration MADs and records, as an EM and the simulated fabric's SA use them
/// (host only).
pub mod sa;
