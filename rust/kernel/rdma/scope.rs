// SPDX-License-Identifier: GPL-2.0

//! Device scopes: what keeps a client's per-device objects from outliving the device.
//!
//! C header: [`include/linux/completion.h`](srctree/include/linux/completion.h)
//!
//! A client's MAD agents, event handlers and VNIC netdevs use IB core state of their device
//! that goes away once the client's `remove` callback returns (the MAD layer, whose client
//! was registered before, closes the device's ports next). So each of them holds a
//! [`DeviceScope`], a counted handle that the client abstraction hands to [`Client::add`]: the
//! `remove` callback waits until every handle of the device is gone before it returns. An
//! object kept past `remove` (in a global, or in another device's context) makes the removal
//! wait for it (with a warning every 10 s), never use freed memory.
//!
//! [`Client::add`]: super::client::Client::add

use super::device::Device;
use crate::{bindings, prelude::*, types::Opaque};
use core::{
    ops::Deref,
    ptr::NonNull,
    sync::atomic::{AtomicUsize, Ordering},
};

/// The shared part of a device's scope: the device, the count of handles, and the completion
/// the removal waits on.
#[pin_data]
struct ScopeInner {
    device: NonNull<bindings::ib_device>,
    handles: AtomicUsize,
    #[pin]
    gone: Opaque<bindings::completion>,
}

/// A handle on the scope of a device a client accepted; derefs to the [`Device`].
///
/// # Invariants
///
/// `inner` points to a live `ScopeInner` whose `handles` counts this handle; the scope's owner
/// (`ScopeOwner`) frees it only after every handle is dropped, and the device stays
/// registered until then.
pub struct DeviceScope {
    inner: NonNull<ScopeInner>,
}

// SAFETY: A handle only reads the device pointer and counts atomically; the device may be used
// from any thread.
unsafe impl Send for DeviceScope {}
// SAFETY: As above.
unsafe impl Sync for DeviceScope {}

impl DeviceScope {
    fn inner(&self) -> &ScopeInner {
        // SAFETY: By the type invariant `inner` is live while `self` exists.
        unsafe { self.inner.as_ref() }
    }
}

impl Deref for DeviceScope {
    type Target = Device;

    fn deref(&self) -> &Device {
        // SAFETY: By the type invariant the device stays registered while a handle exists.
        unsafe { Device::from_raw(self.inner().device.as_ptr()) }
    }
}

impl Clone for DeviceScope {
    fn clone(&self) -> Self {
        // A new handle is made from a live one, so the count is not zero; `Relaxed` as for
        // `Arc`, since the new handle is passed on by means that synchronise.
        self.inner().handles.fetch_add(1, Ordering::Relaxed);
        // INVARIANT: The count includes the new handle.
        Self { inner: self.inner }
    }
}

impl Drop for DeviceScope {
    fn drop(&mut self) {
        let inner = self.inner();
        // `Release` so that the owner, which frees the scope after the completion, sees every
        // use of the device made through this handle as done.
        if inner.handles.fetch_sub(1, Ordering::Release) == 1 {
            // SAFETY: The completion was initialised with the scope; the owner frees the scope
            // only after `wait_for_completion` returns, which is after `complete` has released
            // the completion's lock.
            unsafe { bindings::complete(inner.gone.get()) };
        }
    }
}

/// The scope of a device, as the client abstraction keeps it between `add` and `remove`.
///
/// # Invariants
///
/// `inner` is the scope's allocation; `handle` is a handle on it while the scope is open.
pub(crate) struct ScopeOwner {
    inner: Pin<KBox<ScopeInner>>,
    handle: Option<DeviceScope>,
}

impl ScopeOwner {
    /// Opens the scope of `device`.
    ///
    /// # Safety
    ///
    /// `device` is registered, and stays registered until [`ScopeOwner::close`] returns.
    pub(crate) unsafe fn new(device: &Device) -> Result<Self> {
        let device = NonNull::new(device.as_raw()).ok_or(EINVAL)?;
        let inner = KBox::pin_init(
            pin_init!(ScopeInner {
                device,
                handles: AtomicUsize::new(1),
                // SAFETY: `init_completion` initialises the pinned slot in place.
                gone <- Opaque::ffi_init(|slot| unsafe { bindings::init_completion(slot) }),
            }),
            GFP_KERNEL,
        )?;
        let ptr = NonNull::from(&*inner);
        // INVARIANT: `inner` is the scope's allocation, and the count of 1 is the handle made
        // here, on it; the device stays registered until `close` (the caller's guarantee).
        Ok(Self {
            inner,
            handle: Some(DeviceScope { inner: ptr }),
        })
    }

    /// The owner's own handle, for `add`.
    pub(crate) fn handle(&self) -> Option<&DeviceScope> {
        self.handle.as_ref()
    }

    /// Drops the owner's handle and waits until every other handle is gone: after this, nothing
    /// of the client uses the device any more. Sleeps. (Dropping the owner does the same.)
    pub(crate) fn close(self) {
        drop(self);
    }
}

impl Drop for ScopeOwner {
    fn drop(&mut self) {
        drop(self.handle.take());
        // A handle kept in a global, or in another device's context, would make this wait
        // forever: say so every 10 s (as `netdev_wait_allrefs()` does for a netdev's
        // references) instead of hanging silently. Waiting is the only sound choice: a handle
        // stands for an object (a MAD agent, a netdev) that uses the device until it is
        // dropped, which its owner does, not the scope.
        // SAFETY: `__msecs_to_jiffies` has no precondition.
        let period = unsafe { bindings::__msecs_to_jiffies(10_000) };
        // SAFETY: The completion is initialised; the last handle completes it (possibly the one
        // dropped just above). The allocation is freed after this returns.
        while unsafe { bindings::wait_for_completion_timeout(self.inner.gone.get(), period) } == 0 {
            // SAFETY: The device stays registered until this returns (`ScopeOwner::new`).
            let device = unsafe { Device::from_raw(self.inner.device.as_ptr()) };
            crate::pr_warn!(
                "{}: removal waits for {} users of the device\n",
                device.name(),
                self.inner.handles.load(Ordering::Relaxed)
            );
        }
        // Pairs with the `Release` of the handles' drops.
        core::sync::atomic::fence(Ordering::Acquire);
    }
}
