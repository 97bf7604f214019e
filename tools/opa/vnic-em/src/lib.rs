// SPDX-License-Identifier: GPL-2.0

//! `vnic-em`: a standalone Ethernet Manager for Omni-Path VNIC.
//!
//! It configures virtual Ethernet switches and their ports on the VNIC
//! drivers of a fabric by sending VEMA MADs (Intel EMA class) to the
//! driver's MAD agent on each node port, using the wire formats of
//! `opa_wire`. See `Documentation/infiniband/vnic-em.rst`.

#![deny(unsafe_code)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs, rust_2018_idioms)]

pub mod args;
pub mod client;
pub mod commands;
pub mod config;
pub mod docs;
pub mod error;
pub mod fabric;
pub mod fake;
pub mod groups;
pub mod legacy;
pub mod mac;
pub mod mad;
pub mod names;
pub mod plan;
pub mod repair;
pub mod sa;
pub mod suggest;
pub mod umad;
pub mod view;
