// SPDX-License-Identifier: GPL-2.0

//! `opa-umad`: the kernel's user MAD interface (`/dev/infiniband/umadN`,
//! `include/uapi/rdma/ib_user_mad.h`, `drivers/infiniband/core/user_mad.c`)
//! for the OPA user-space tools.
//!
//! - [`sysfs`]: the umad devices of a system (`/sys/class/infiniband_mad`)
//!   and the state of their ports, and how one is picked.
//! - [`hdr`]: `struct ib_user_mad_hdr`, the 64-byte header before every
//!   MAD written to or read from the device.
//! - [`dev`]: one open umad device with any number of MAD agents
//!   registered on it (`IB_USER_MAD_REGISTER_AGENT2`), sending MADs and
//!   reading what arrives, RMPP transfers included.
//!
//! The only `unsafe` code of the crate, and of the tools' MAD path, is in
//! [`dev`]: the register ioctl and `poll()`.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, rust_2018_idioms)]

pub mod dev;
#[cfg(any(test, feature = "test-support"))]
pub mod fake_sysfs;
pub mod hdr;
pub mod sysfs;

pub use dev::{AgentId, Device, Recv, RecvError, Registration, SendError};
pub use hdr::{RecvHdr, SendHdr, QP1_QKEY, UMAD_HDR_SIZE};
pub use sysfs::{
    list_ports, mgmt_pkey_index, parse_sysfs_gid_guid, parse_sysfs_guid, parse_sysfs_lid,
    parse_sysfs_num, select_port, umad_dev_path, DiscoveryError, PortSelect, UmadPort,
    UMAD_ABI_VERSION,
};
