// SPDX-License-Identifier: GPL-2.0

//! `opasim-sa`: the subnet administrator (SA) of opasim's simulated fabric.
//!
//! On an OPA fabric the subnet manager (opa-fm's `fm_sm`) assigns the LIDs and answers
//! Subnet Administration queries from user space over umad; an EM asks it which ports exist,
//! what they are called and which LIDs they have now. opasim's fabric has no SM of its own:
//! this program is its SA, run on one port of the fabric (the "SM node"). It claims the role
//! in opasim's `sm` debugfs file, so every port reports its LID as the SMLID, and answers
//! from the fabric as the kernel shows it at the moment of each query: the devices opasim
//! lists, their GUIDs, node descriptions and port states in sysfs, and the capability masks
//! the VNIC drivers set (`CapabilityMask3` bit `IsEthOnFabricSupported`) in opasim's
//! debugfs. A LID changed in debugfs is answered at the next query, as a real SA answers
//! after its next sweep.
//!
//! - [`fabric`]: the snapshot of the fabric and how it is read;
//! - [`answer`]: the answers to NodeRecord, PortInfoRecord, McMemberRecord and PathRecord
//!   queries, and to joins.

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs, rust_2018_idioms)]

pub mod answer;
pub mod fabric;
