// SPDX-License-Identifier: GPL-2.0

//! Root devices (`include/linux/device.h`, `drivers/base/core.c`).
//!
//! A root device sits at the top of `/sys/devices`, on no bus and bound to no driver: what a
//! software device that has no hardware to stand on hangs its class devices under, as a PCI
//! driver hangs them under its PCI device (`root_device_register()`).

use crate::{
    bindings,
    device::Device,
    error::{code::ENOMEM, from_err_ptr, Result},
    str::CStr,
    ThisModule,
};
use core::ptr::NonNull;

/// A registered root device, `/sys/devices/<name>`; unregistered when dropped.
///
/// Devices registered with it as their parent hold a reference to it while they are, so it
/// stays valid memory for them; it should still outlive them, as a parent does in sysfs.
///
/// # Invariants
///
/// `dev` is a device registered by `__root_device_register()` and not yet unregistered.
pub struct RootDevice {
    dev: NonNull<bindings::device>,
}

// SAFETY: `RootDevice` only owns the registration; the core's device functions it calls may be
// called from any thread.
unsafe impl Send for RootDevice {}
// SAFETY: `&RootDevice` only gives a `&Device`, which is `Sync`.
unsafe impl Sync for RootDevice {}

impl RootDevice {
    /// Registers a root device named `name` (unique among them: `EEXIST` otherwise), owned
    /// by `module` (its `module` link in sysfs).
    pub fn new(name: &CStr, module: &'static ThisModule) -> Result<Self> {
        // SAFETY: `name` is a NUL-terminated string, which the core copies; `module` is a
        // module that is loaded (or null for built-in code), as the core expects.
        let dev = from_err_ptr(unsafe {
            bindings::__root_device_register(name.as_char_ptr(), module.as_ptr())
        })?;
        // INVARIANT: `__root_device_register()` returned a registered device.
        Ok(Self {
            dev: NonNull::new(dev).ok_or(ENOMEM)?,
        })
    }

    /// The device, to be another device's parent.
    pub fn device(&self) -> &Device {
        // SAFETY: By the type invariant the device is registered, so its reference count is
        // not zero while `self`, and so the returned reference, lives.
        unsafe { Device::as_ref(self.dev.as_ptr()) }
    }
}

impl Drop for RootDevice {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the device is registered and not yet unregistered;
        // nothing uses `self.dev` after this.
        unsafe { bindings::root_device_unregister(self.dev.as_ptr()) };
    }
}
