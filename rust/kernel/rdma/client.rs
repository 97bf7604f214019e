// SPDX-License-Identifier: GPL-2.0

//! IB clients: upper layer protocols that attach to RDMA devices.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! A client is told about every RDMA device, present and future, through [`Client::add`], and
//! keeps a typed context per device it accepted, which it gets back in [`Client::remove`] when
//! the device goes away or the client unregisters. `add` gets the device as a
//! [`DeviceScope`]: the per-device objects of the client (MAD agents, event handlers, VNIC
//! netdevs) hold one, and the removal of the device waits for them (see [`super::scope`]).
//!
//! # Examples
//!
//! ```
//! use kernel::{c_str, prelude::*};
//! use kernel::rdma::{client, device::Device, scope::DeviceScope};
//!
//! struct Logger;
//!
//! kernel::ib_client_vtable!(static LOGGER: Logger);
//!
//! impl client::Client for Logger {
//!     const NAME: &'static CStr = c_str!("logger");
//!     type DeviceData = KBox<u32>;
//!
//!     fn add(device: &DeviceScope) -> Result<KBox<u32>> {
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

use super::{
    device::Device,
    scope::{DeviceScope, ScopeOwner},
};
use crate::{
    alloc::{flags::GFP_KERNEL, KBox},
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
    type DeviceData: Send + Sync + 'static;

    /// Called for each RDMA device, at registration and whenever a device appears.
    ///
    /// Returning an error means the client does not drive this device: it gets no further
    /// callbacks for it. Return `EOPNOTSUPP` for devices the client does not handle.
    ///
    /// The device's per-device objects are made from `device` (a [`DeviceScope`], which derefs
    /// to the [`Device`]).
    fn add(device: &DeviceScope) -> Result<Self::DeviceData>;

    /// Called when an accepted device goes away or the client unregisters; gets back the
    /// context [`Client::add`] returned. Once `data` is dropped, the removal waits until every
    /// other object that holds the device's [`DeviceScope`] is gone.
    fn remove(device: &Device, data: Self::DeviceData);
}

/// What the client abstraction keeps per device: the client's context and the device's scope.
struct Attached<T: Client> {
    data: T::DeviceData,
    scope: ScopeOwner,
}

/// The static [`ClientVTable`] of a [`Client`], declared by [`ib_client_vtable!`].
///
/// The IB core's `add` callback gets only the device, so the callbacks find the client's
/// `struct ib_client` (needed to store the context) through [`HasClientVTable::vtable`].
///
/// # Safety
///
/// [`HasClientVTable::vtable`] returns the same `static` every time, and it is the only
/// [`ClientVTable`] of `Self` that is ever registered. [`ib_client_vtable!`] implements it so.
///
/// [`ib_client_vtable!`]: crate::ib_client_vtable
pub unsafe trait HasClientVTable: Client {
    /// The client's one `struct ib_client`.
    fn vtable() -> &'static ClientVTable<Self>;
}

/// Declares the static [`ClientVTable`] of a [`Client`] and ties the client to it:
/// `ib_client_vtable!(static NAME: Type);`.
#[macro_export]
macro_rules! ib_client_vtable {
    ($vis:vis static $name:ident: $t:ty) => {
        $vis static $name: $crate::rdma::client::ClientVTable<$t> =
            $crate::rdma::client::ClientVTable::new();

        // SAFETY: `$name` is a static, the only `ClientVTable` of the type a registration
        // uses (a second expansion for the type would be a conflicting implementation).
        unsafe impl $crate::rdma::client::HasClientVTable for $t {
            fn vtable() -> &'static $crate::rdma::client::ClientVTable<Self> {
                &$name
            }
        }
    };
}

/// The `struct ib_client` of a [`Client`]: its name and callbacks.
///
/// It lives in a `static` (the IB core keeps a pointer to it while the client is registered),
/// declared with [`ib_client_vtable!`].
///
/// # Invariants
///
/// `client` is a valid `struct ib_client` whose `name` is [`Client::NAME`] and whose `add` and
/// `remove` are the trampolines of `T`. `registered` is true while a [`Registration`] of it
/// exists.
///
/// [`ib_client_vtable!`]: crate::ib_client_vtable
pub struct ClientVTable<T: Client> {
    client: Opaque<bindings::ib_client>,
    registered: AtomicBool,
    _client: PhantomData<T>,
}

// SAFETY: The `struct ib_client` is only written by the IB core, under its own locking, while
// the client is registered; Rust code only passes its address around.
unsafe impl<T: Client> Sync for ClientVTable<T> {}

impl<T: HasClientVTable> ClientVTable<T> {
    /// Creates the vtable of `T`, for the `static` of [`ib_client_vtable!`].
    ///
    /// [`ib_client_vtable!`]: crate::ib_client_vtable
    #[doc(hidden)]
    pub const fn new() -> Self {
        // INVARIANT: `client` is a valid `ib_client` with `T`'s name and trampolines, and the
        // vtable starts unregistered.
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
        // SAFETY: The device stays registered until `remove_callback` has closed the scope
        // (the core calls `remove` before it unregisters the device), or, if `add` fails,
        // until the scope is closed below.
        let scope = match unsafe { ScopeOwner::new(device) } {
            Ok(scope) => scope,
            Err(e) => return e.to_errno(),
        };
        let Some(handle) = scope.handle() else {
            return crate::error::code::EINVAL.to_errno();
        };
        let added = T::add(handle).and_then(|data| {
            KBox::new(Attached::<T> { data, scope }, GFP_KERNEL).map_err(Into::into)
        });
        match added {
            Ok(attached) => {
                let data = attached.into_foreign();
                // SAFETY: `ibdev` is valid (see above) and the core has reserved this
                // client's slot in the device before calling `add`, which is where
                // `ib_set_client_data` must be called. `T::vtable()` is the `ib_client` being
                // added: the only one of `T` that is registered (`HasClientVTable`).
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
        // SAFETY: The core calls `remove` (from `disable_device()` or `ib_unregister_client()`)
        // before it tears down anything of the device that clients use: clients are removed
        // in the reverse order of their registration, so the MAD layer's own client (the
        // ports the agents use) goes after this one, and the device's memory stays until
        // `ib_dealloc_device()`. So the device is valid, as `Device` needs, until this returns.
        let device = unsafe { Device::from_raw(ibdev) };
        // SAFETY: `remove` is only called for devices whose `add` returned 0, after which
        // `data` is what `add_callback` stored from `into_foreign`; the core calls `remove`
        // once, and nothing borrows the data any more at that point.
        let attached = unsafe { KBox::<Attached<T>>::from_foreign(data) };
        let Attached { data, scope } = KBox::into_inner(attached);
        T::remove(device, data);
        // Every object of the device has to be gone before the core goes on with the removal.
        scope.close();
    }
}

impl<T: HasClientVTable> Default for ClientVTable<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// A registered IB client; unregisters it when dropped.
///
/// Unregistering calls [`Client::remove`] for every device the client accepted, and waits for
/// callbacks in progress: so the client's own callbacks must not drop it (nor make one:
/// registering holds the core's client and device lists while it calls [`Client::add`]).
///
/// # Invariants
///
/// `vtable` is registered with the IB core and `vtable.registered` is true.
pub struct Registration<T: HasClientVTable> {
    vtable: &'static ClientVTable<T>,
}

impl<T: HasClientVTable> Registration<T> {
    /// Registers the client `T` through its [`ClientVTable`]: [`Client::add`] is called for
    /// every present device before this returns.
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
        // INVARIANT: `vtable` was registered just above, and `registered` set before.
        Ok(Self { vtable })
    }
}

impl<T: HasClientVTable> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the client is registered.
        unsafe { bindings::ib_unregister_client(self.vtable.as_raw()) };
        self.vtable.registered.store(false, Ordering::Release);
    }
}
