// SPDX-License-Identifier: GPL-2.0

//! IB clients: upper layer protocols that attach to RDMA devices.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! A client is told about every RDMA device, present and future, through [`Client::add`], and
//! keeps a typed context per device it accepted, which it gets back in [`Client::remove`] when
//! the device goes away or the client unregisters.
//!
//! # Examples
//!
//! ```
//! use kernel::{c_str, prelude::*};
//! use kernel::rdma::{client, device::Device};
//!
//! struct Logger;
//!
//! static LOGGER: client::ClientVTable<Logger> = client::ClientVTable::new();
//!
//! impl client::Client for Logger {
//!     const NAME: &'static CStr = c_str!("logger");
//!     type DeviceData = KBox<u32>;
//!
//!     fn vtable() -> &'static client::ClientVTable<Self> {
//!         &LOGGER
//!     }
//!
//!     fn add(device: &Device) -> Result<KBox<u32>> {
//!         pr_info!("{}: {} ports\n", device.name(), device.ports().count());
//!         Ok(KBox::new(*device.ports().end(), GFP_KERNEL)?)
//!     }
//!
//!     fn remove(device: &Device, last_port: KBox<u32>) {
//!         pr_info!("{}: gone (last port {})\n", device.name(), *last_port);
//!     }
//! }
//!
//! let registration = client::Registration::<Logger>::new()?;
//! // A second registration of the same client is refused.
//! assert!(client::Registration::<Logger>::new().is_err());
//! drop(registration);
//! # Ok::<(), Error>(())
//! ```

use super::device::Device;
use crate::{
    bindings,
    error::{code::EBUSY, to_result, Result},
    str::CStr,
    types::{ForeignOwnable, Opaque},
};
use core::{
    ffi::{c_int, c_void},
    marker::PhantomData,
    sync::atomic::{AtomicBool, Ordering},
};

/// An IB client: an upper layer protocol with a context per RDMA device it drives.
pub trait Client: Sized + 'static {
    /// The client's name, as the IB core reports it.
    const NAME: &'static CStr;

    /// What the client keeps for each device it accepted.
    type DeviceData: ForeignOwnable + Send + Sync;

    /// The static [`ClientVTable`] this client registers through.
    ///
    /// The IB core's `add` callback gets only the device, so the callbacks find the client's
    /// `struct ib_client` (needed to store the context) through this function.
    fn vtable() -> &'static ClientVTable<Self>;

    /// Called for each RDMA device, at registration and whenever a device appears.
    ///
    /// Returning an error means the client does not drive this device: it gets no further
    /// callbacks for it. Return `EOPNOTSUPP` for devices the client does not handle.
    fn add(device: &Device) -> Result<Self::DeviceData>;

    /// Called when an accepted device goes away or the client unregisters; gets back the
    /// context [`Client::add`] returned.
    fn remove(device: &Device, data: Self::DeviceData);
}

/// The `struct ib_client` of a [`Client`]: its name and callbacks.
///
/// It must live in a `static`, since the IB core keeps a pointer to it while the client is
/// registered, and [`Client::vtable`] must return that static.
///
/// # Invariants
///
/// `client` is a valid `struct ib_client` whose `name` is [`Client::NAME`] and whose `add` and
/// `remove` are the trampolines of `T`. `registered` is true while a [`Registration`] of it
/// exists.
pub struct ClientVTable<T: Client> {
    client: Opaque<bindings::ib_client>,
    registered: AtomicBool,
    _client: PhantomData<T>,
}

// SAFETY: The `struct ib_client` is only written by the IB core, under its own locking, while
// the client is registered; Rust code only passes its address around.
unsafe impl<T: Client> Sync for ClientVTable<T> {}

impl<T: Client> ClientVTable<T> {
    /// Creates the vtable of `T`, for a `static`.
    pub const fn new() -> Self {
        Self {
            client: Opaque::new(bindings::ib_client {
                name: T::NAME.as_char_ptr(),
                add: Some(Self::add_callback),
                remove: Some(Self::remove_callback),
                // SAFETY: The rest of `struct ib_client` (optional callbacks, the core's
                // reference count, completion and id) is valid when zeroed:
                // `ib_register_client()` initialises what it uses.
                ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
            }),
            registered: AtomicBool::new(false),
            _client: PhantomData,
        }
    }

    fn as_raw(&self) -> *mut bindings::ib_client {
        self.client.get()
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a registered device.
    unsafe extern "C" fn add_callback(ibdev: *mut bindings::ib_device) -> c_int {
        // SAFETY: The core calls `add` with a registered device, and keeps it registered at
        // least until this callback returns.
        let device = unsafe { Device::from_raw(ibdev) };
        match T::add(device) {
            Ok(data) => {
                let data = data.into_foreign();
                // SAFETY: `ibdev` is valid (see above) and the core has reserved this
                // client's slot in the device before calling `add`, which is where
                // `ib_set_client_data` must be called. `T::vtable()` is the `ib_client` being
                // added, by the contract of `Client::vtable`.
                unsafe {
                    bindings::ib_set_client_data(ibdev, T::vtable().as_raw(), data.cast_mut())
                };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the IB core only, for a device `add_callback` accepted, with the data it set.
    unsafe extern "C" fn remove_callback(ibdev: *mut bindings::ib_device, data: *mut c_void) {
        // SAFETY: The core calls `remove` with a device that is still registered.
        let device = unsafe { Device::from_raw(ibdev) };
        // SAFETY: `remove` is only called for devices whose `add` returned 0, after which
        // `data` is what `add_callback` stored from `into_foreign`; the core calls `remove`
        // once, and nothing borrows the data any more at that point.
        let data = unsafe { T::DeviceData::from_foreign(data) };
        T::remove(device, data);
    }
}

impl<T: Client> Default for ClientVTable<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// A registered IB client; unregisters it when dropped.
///
/// Unregistering calls [`Client::remove`] for every device the client accepted, and waits for
/// callbacks in progress.
///
/// # Invariants
///
/// `vtable` is registered with the IB core and `vtable.registered` is true.
pub struct Registration<T: Client> {
    vtable: &'static ClientVTable<T>,
}

impl<T: Client> Registration<T> {
    /// Registers the client `T` through [`Client::vtable`]: [`Client::add`] is called for every
    /// present device before this returns.
    ///
    /// Fails with `EBUSY` if the client is registered already.
    pub fn new() -> Result<Self> {
        let vtable = T::vtable();
        if vtable.registered.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        // SAFETY: `vtable.as_raw()` is a valid `ib_client` (type invariant of `ClientVTable`)
        // in a static, so it outlives the registration, and it is not registered (checked
        // above).
        let ret = to_result(unsafe { bindings::ib_register_client(vtable.as_raw()) });
        if let Err(e) = ret {
            vtable.registered.store(false, Ordering::Release);
            return Err(e);
        }
        Ok(Self { vtable })
    }
}

impl<T: Client> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the client is registered.
        unsafe { bindings::ib_unregister_client(self.vtable.as_raw()) };
        self.vtable.registered.store(false, Ordering::Release);
    }
}
