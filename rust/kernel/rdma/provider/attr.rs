// SPDX-License-Identifier: GPL-2.0

//! What a provider reports of its devices and ports.

use super::PortCapMask;
use crate::{bindings, str::CStr};

/// The attributes a provider reports for its devices (`struct ib_device_attr`).
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceAttr {
    /// The system image GUID (host order).
    pub sys_image_guid: u64,
    /// The IEEE vendor id.
    pub vendor_id: u32,
    /// The vendor's part id.
    pub vendor_part_id: u32,
    /// Maximum number of QPs.
    pub max_qp: u32,
    /// Maximum number of outstanding work requests on a queue.
    pub max_qp_wr: u32,
    /// Maximum scatter/gather entries of a work request.
    pub max_sge: u32,
    /// Maximum number of CQs.
    pub max_cq: u32,
    /// Maximum entries of a CQ.
    pub max_cqe: u32,
    /// Maximum number of PDs.
    pub max_pd: u32,
    /// Maximum number of address handles.
    pub max_ah: u32,
    /// Size of the P_Key tables.
    pub max_pkeys: u16,
    /// Whether the device can allocate OPA VNIC netdevs (`IBK_RDMA_NETDEV_OPA`).
    pub opa_vnic: bool,
}

/// The logical state of a port (`enum ib_port_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortState {
    /// Down: no link.
    Down,
    /// Link up, not configured by a subnet manager.
    Init,
    /// Configured, not yet active.
    Armed,
    /// Active: passes data.
    Active,
}

/// The attributes of a port (`struct ib_port_attr`).
#[derive(Clone, Copy, Debug)]
pub struct PortAttr {
    /// The logical state; the physical state follows (LinkUp unless down).
    pub state: PortState,
    /// The port's LID.
    pub lid: u32,
    /// The LID of the subnet manager.
    pub sm_lid: u32,
    /// The SL to reach the subnet manager on.
    pub sm_sl: u8,
    /// The LID mask control.
    pub lmc: u8,
    /// Number of GIDs.
    pub gid_tbl_len: u32,
    /// Number of P_Keys.
    pub pkey_tbl_len: u16,
    /// `IB_PORT_*` capability mask bits.
    pub port_cap_flags: u32,
    /// Largest message, in bytes.
    pub max_msg_sz: u32,
    /// Packets dropped for a bad P_Key.
    pub bad_pkey_cntr: u32,
    /// Packets dropped for a bad Q_Key.
    pub qkey_viol_cntr: u32,
    /// The largest and the active MTU of InfiniBand transports.
    pub mtu: Mtu,
    /// The physical MTU, in bytes (for OPA ports, larger than [`PortAttr::mtu`]).
    pub phys_mtu: u32,
    /// The number of data VLs.
    pub max_vl_num: u8,
    /// The subnet timeout (4.096 us * 2^n).
    pub subnet_timeout: u8,
    /// The active link width (`IB_WIDTH_*`, see [`WIDTH_4X`]).
    pub active_width: u8,
    /// The active lane speed (`IB_SPEED_*`, see [`SPEED_EDR`]).
    pub active_speed: u16,
}

/// An InfiniBand path MTU (`enum ib_mtu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mtu {
    /// 256 bytes.
    Mtu256,
    /// 512 bytes.
    Mtu512,
    /// 1024 bytes.
    Mtu1024,
    /// 2048 bytes.
    Mtu2048,
    /// 4096 bytes.
    Mtu4096,
}

impl Mtu {
    pub(super) fn raw(self) -> bindings::ib_mtu {
        match self {
            Self::Mtu256 => bindings::ib_mtu_IB_MTU_256,
            Self::Mtu512 => bindings::ib_mtu_IB_MTU_512,
            Self::Mtu1024 => bindings::ib_mtu_IB_MTU_1024,
            Self::Mtu2048 => bindings::ib_mtu_IB_MTU_2048,
            Self::Mtu4096 => bindings::ib_mtu_IB_MTU_4096,
        }
    }
}

/// Link width 4X (`IB_WIDTH_4X`), the width of an OPA or InfiniBand HCA port.
pub const WIDTH_4X: u8 = bindings::ib_port_width_IB_WIDTH_4X as u8;

/// Lane speed EDR, 25 Gb/s (`IB_SPEED_EDR`), which OPA-100 ports report.
pub const SPEED_EDR: u16 = bindings::ib_port_speed_IB_SPEED_EDR as u16;

/// A change of a port's settings (`ib_modify_port()`): capability bits to set, then to
/// clear, in the mask [`PortCapMask`] names, and the requests of `IB_PORT_SHUTDOWN` and
/// `IB_PORT_RESET_QKEY_CNTR`.
#[derive(Clone, Copy, Debug)]
pub struct PortModify {
    /// Which capability mask `set` and `clear` apply to.
    pub mask: PortCapMask,
    /// The bits to set.
    pub set: u32,
    /// The bits to clear (after setting).
    pub clear: u32,
    /// Take the port down (`IB_PORT_SHUTDOWN`).
    pub shutdown: bool,
    /// Zero the Q_Key violation counter (`IB_PORT_RESET_QKEY_CNTR`).
    pub reset_qkey_cntr: bool,
}

/// What never changes about a port (`struct ib_port_immutable`).
#[derive(Clone, Copy, Debug)]
pub struct PortImmutable {
    /// An Omni-Path port (OPA MADs of 2048 bytes) rather than an InfiniBand one.
    pub opa: bool,
    /// Number of P_Keys.
    pub pkey_tbl_len: u16,
    /// Number of GIDs.
    pub gid_tbl_len: u32,
}

/// The name of a per-port counter (`struct rdma_stat_desc`), for
/// [`Provider::port_counter_descs`]: the IB core shows the counters in
/// `/sys/class/infiniband/<dev>/ports/<n>/hw_counters/` and `rdma statistic`.
///
/// # Invariants
///
/// `name` is a static C string, `priv` is null.
///
/// [`Provider::port_counter_descs`]: crate::rdma::provider::Provider::port_counter_descs
#[repr(transparent)]
pub struct StatDesc(bindings::rdma_stat_desc);

// SAFETY: The descriptor is immutable, and points only to static data.
unsafe impl Sync for StatDesc {}

impl StatDesc {
    /// A counter named `name`.
    pub const fn new(name: &'static CStr) -> Self {
        // INVARIANT: `name` is a static C string, `priv_` null.
        Self(bindings::rdma_stat_desc {
            name: name.as_char_ptr(),
            flags: 0,
            priv_: core::ptr::null(),
        })
    }
}
