// SPDX-License-Identifier: GPL-2.0

//! RDMA devices as the IB core hands them to clients.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::{bindings, error::to_result, prelude::*, str::CStr, types::Opaque};
use core::{fmt, ops::Deref, ops::RangeInclusive};

/// The size of a device's name, NUL included (`IB_DEVICE_NAME_MAX`).
const NAME_LEN: usize = bindings::IB_DEVICE_NAME_MAX as usize;

/// A copy of a device's name ([`Device::name`]); derefs to the [`CStr`].
///
/// # Invariants
///
/// The last byte of the array is 0.
pub struct DeviceName([u8; NAME_LEN]);

impl DeviceName {
    /// Copies the name of `ibdev`, which a rename may be writing meanwhile.
    ///
    /// # Safety
    ///
    /// `ibdev` points to a valid `struct ib_device`.
    pub(crate) unsafe fn read(ibdev: *const bindings::ib_device) -> Self {
        // INVARIANT: The last byte is 0 and the loop below does not write it.
        let mut name = DeviceName([0; NAME_LEN]);
        // SAFETY: The device is valid (the caller guarantees it), so its `name` array is.
        let src = unsafe { core::ptr::addr_of!((*ibdev).name) }.cast::<u8>();
        // The last byte stays 0: the copy ends with a NUL whatever it reads.
        for (i, byte) in name.0[..NAME_LEN - 1].iter_mut().enumerate() {
            // SAFETY: `i` is within the array. `ib_device_rename()` may write the array at the
            // same time (`strscpy()` under the core's `devices_rwsem`, which is private to the
            // core and not taken here); a volatile byte read, the `READ_ONCE()` of a byte, is
            // how the kernel reads what others write concurrently, and a torn read gives a mix
            // of the old and the new name, never bytes outside the array.
            *byte = unsafe { core::ptr::read_volatile(src.add(i)) };
            if *byte == 0 {
                break;
            }
        }
        name
    }
}

impl Default for DeviceName {
    /// The empty name.
    fn default() -> Self {
        // INVARIANT: All zeroes: the last byte is 0.
        Self([0; NAME_LEN])
    }
}

impl Deref for DeviceName {
    type Target = CStr;

    fn deref(&self) -> &CStr {
        let len = self.0.iter().position(|&b| b == 0).unwrap_or(NAME_LEN - 1);
        // The bytes up to the first NUL, which the type invariant guarantees, and that NUL.
        CStr::from_bytes_with_nul(&self.0[..=len]).unwrap_or(crate::c_str!(""))
    }
}

impl fmt::Display for DeviceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl fmt::Debug for DeviceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// A capability mask of a port, as [`Device::modify_port_caps`] changes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortCapMask {
    /// The InfiniBand `CapabilityMask` of PortInfo (`IB_PORT_*_SUP` bits).
    Ib,
    /// OPA's `CapabilityMask3` (`OPA_CAP_MASK3_*` bits).
    Opa3,
}

/// `CapabilityMask3` bit of an OPA port that carries Ethernet over the fabric (VNIC).
pub const OPA_CAP_MASK3_IS_ETH_ON_FABRIC_SUPPORTED: u32 =
    bindings::OPA_CAP_MASK3_IsEthOnFabricSupported;

/// An RDMA device (`struct ib_device`).
///
/// Clients only ever see devices by reference, from the IB core's callbacks, which keep the
/// device registered for as long as the reference lives.
///
/// # Invariants
///
/// `self.0` is a valid, registered `struct ib_device` for the lifetime of any reference to
/// `Self`.
#[repr(transparent)]
pub struct Device(Opaque<bindings::ib_device>);

impl Device {
    /// Creates a reference to a [`Device`] from a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a registered `struct ib_device` that stays registered for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // INVARIANT: The caller guarantees that the device stays registered for `'a`.
        // SAFETY: `Device` is a transparent wrapper of `ib_device`, and the caller guarantees
        // that `ptr` is valid for `'a`, which is the type invariant.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// Returns the raw `struct ib_device` pointer, for abstractions of the IB core.
    pub fn as_raw(&self) -> *mut bindings::ib_device {
        self.0.get()
    }

    /// The device's name, as in `/sys/class/infiniband/` (for example `opasim0`): a copy, since
    /// the device may be renamed at any time (`rdma dev set NAME name NEW`).
    pub fn name(&self) -> DeviceName {
        // SAFETY: By the type invariant the device is valid.
        unsafe { DeviceName::read(self.as_raw()) }
    }

    /// The port numbers of the device: `1..=phys_port_cnt` (or `0..=0` for a switch).
    pub fn ports(&self) -> RangeInclusive<u32> {
        // SAFETY: By the type invariant `self.as_raw()` is a valid device.
        let (start, end) = unsafe {
            (
                bindings::rdma_start_port(self.as_raw()),
                bindings::rdma_end_port(self.as_raw()),
            )
        };
        start..=end
    }

    /// Whether `port` is one of [`Device::ports`].
    pub fn is_port_valid(&self, port: u32) -> bool {
        self.ports().contains(&port)
    }

    /// Whether the device supports OPA VNIC (`rdma_cap_opa_vnic()`): it can allocate
    /// `RDMA_NETDEV_OPA_VNIC` netdevs.
    pub fn cap_opa_vnic(&self) -> bool {
        // SAFETY: By the type invariant `self.as_raw()` is a valid device.
        unsafe { bindings::rdma_cap_opa_vnic(self.as_raw()) }
    }

    /// The index of `pkey` in the P_Key table of `port` (`ib_find_pkey()`), if there.
    pub fn find_pkey(&self, port: u32, pkey: u16) -> Option<u16> {
        if !self.is_port_valid(port) {
            return None;
        }
        let mut index = 0u16;
        // SAFETY: By the type invariant the device is valid; `port` is one of its ports.
        let ret = unsafe { bindings::ib_find_pkey(self.as_raw(), port, pkey, &mut index) };
        (ret == 0).then_some(index)
    }

    /// Whether `port` speaks OPA MADs (`rdma_cap_opa_mad()`); `false` for an invalid port.
    pub fn cap_opa_mad(&self, port: u32) -> bool {
        if !self.is_port_valid(port) {
            return false;
        }
        // SAFETY: By the type invariant `self.as_raw()` is a valid device, and `port` was
        // checked to be one of its ports, so the core's `port_data[port]` access is in bounds.
        unsafe { bindings::rdma_cap_opa_mad(self.as_raw(), port) }
    }

    /// Sets the bits `set`, then clears the bits `clear`, of the capability mask `mask` of
    /// `port` (`ib_modify_port()`); the device tells the subnet manager. `EINVAL` for an
    /// invalid port, `EOPNOTSUPP` if the device cannot change its capabilities.
    pub fn modify_port_caps(&self, port: u32, mask: PortCapMask, set: u32, clear: u32) -> Result {
        let flags = match mask {
            PortCapMask::Ib => 0,
            PortCapMask::Opa3 => bindings::ib_port_modify_flags_IB_PORT_OPA_MASK_CHG,
        };
        let mut change = bindings::ib_port_modify {
            set_port_cap_mask: set,
            clr_port_cap_mask: clear,
            init_type: 0,
        };
        // SAFETY: By the type invariant the device is valid; `ib_modify_port` checks the port
        // and only reads `change`, which lives across the call.
        to_result(unsafe {
            bindings::ib_modify_port(self.as_raw(), port, flags as core::ffi::c_int, &mut change)
        })
    }
}
