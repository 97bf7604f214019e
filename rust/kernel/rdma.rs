// SPDX-License-Identifier: GPL-2.0

//! RDMA (InfiniBand and Omni-Path) support.
//!
//! C headers: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h),
//! [`include/rdma/opa_vnic.h`](srctree/include/rdma/opa_vnic.h).
//!
//! The IB core sits between RDMA device drivers (which register `ib_device`s) and upper layer
//! protocols, the "clients" (which are told about every device and attach their own state to
//! it). [`client`] registers a client whose callbacks get a [`device::Device`] and keep a typed
//! per-device context; [`mad`] registers MAD agents on a device's ports.

pub mod client;
pub mod device;
pub mod event;
pub mod mad;
pub mod netdev;
pub mod provider;
pub mod scope;
pub mod verbs;
pub mod vnic;
