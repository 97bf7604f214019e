// SPDX-License-Identifier: GPL-2.0

//! A provider's devices: their registration with the IB core, and the events they raise.

use super::{adapter::Adapter, Provider};
use crate::sync::rcu::{self, Guard};
use crate::{
    bindings,
    device::Device,
    error::{code::*, to_result, Result},
    rdma::device::DeviceName,
    str::CStr,
    types::Opaque,
    ThisModule,
};
use core::{
    mem::size_of,
    ptr::{addr_of_mut, NonNull},
    sync::atomic::{AtomicBool, Ordering},
};

#[cfg(CONFIG_RUST_KERNEL_DOCTESTS)]
#[path = "device_kunit.rs"]
mod kunit;

/// A software RDMA device of the provider `T`: a `struct ib_device` and the driver's data.
///
/// # Invariants
///
/// `ib` is a `struct ib_device` allocated by `_ib_alloc_device` with the size of `Self`, its
/// ops are the ones of `T` (see `Adapter`), and `data` is initialised, for as long as a
/// reference to `Self` exists. `events` is true only from the end of a successful
/// `ib_register_device()` until the start of its unregistration, and is read under RCU.
#[repr(C)]
pub struct ProviderDevice<T: Provider> {
    pub(super) ib: Opaque<bindings::ib_device>,
    pub(super) data: T::Data,
    /// Whether the device's port events reach the core; see [`ProviderDevice::port_event`].
    events: AtomicBool,
}

// SAFETY: The `ib_device` is used from any thread by the IB core, under its own locking; the
// driver's data is `Send`.
unsafe impl<T: Provider> Send for ProviderDevice<T> {}
// SAFETY: Shared references only give `&T::Data`, which is `Sync`, and read the `ib_device`
// fields the core does not change after registration.
unsafe impl<T: Provider> Sync for ProviderDevice<T> {}

impl<T: Provider> ProviderDevice<T> {
    /// Creates a reference to the device from the `struct ib_device` the core passes.
    ///
    /// # Safety
    ///
    /// `ptr` must be a device of `T` (allocated by [`Registration::new`]) that stays
    /// allocated, with its data initialised, for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // SAFETY: `ib` is the first field of the `repr(C)` `Self`, and the caller guarantees
        // that the memory is a complete `Self` for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The raw `struct ib_device`.
    pub fn as_raw(&self) -> *mut bindings::ib_device {
        self.ib.get()
    }

    /// The driver's data of the device.
    pub fn data(&self) -> &T::Data {
        &self.data
    }

    /// The device's name (for example `opasim0`): a copy, since the device may be renamed at
    /// any time (`rdma dev set NAME name NEW`).
    pub fn name(&self) -> DeviceName {
        // SAFETY: By the type invariant the device is valid.
        unsafe { DeviceName::read(self.as_raw()) }
    }

    /// The number of ports.
    pub fn port_count(&self) -> u32 {
        // SAFETY: By the type invariant the device is valid; `phys_port_cnt` is set before
        // registration and never changes.
        unsafe { (*self.as_raw()).phys_port_cnt }
    }

    /// Offers the MAD `mad` of `port` to the provider as the core does (`process_mad`, through
    /// the same path), and returns the result flags, the answer's size and P_Key index, with
    /// the answer in `out`: for tests that craft MADs byte by byte.
    ///
    /// `mad` must have the size of its base version on the port (256 bytes, or 2048 for an OPA
    /// MAD on an OPA port) and `out` at least as many bytes: `EINVAL` otherwise, or if the port
    /// does not exist, or if the provider has no `process_mad`.
    pub fn process_mad(
        &self,
        port: u32,
        mad: &[u8],
        source: Option<super::mad::MadSource>,
        ignore_mkey: bool,
        out: &mut [u8],
    ) -> Result<super::mad::MadOutcome> {
        if !T::HAS_PROCESS_MAD {
            return Err(EINVAL);
        }
        Adapter::<T>::call_process_mad(self, port, mad, source, ignore_mkey, out)
    }

    /// Tells the IB core's clients that `port` became active (`true`) or went down (`false`)
    /// (`ib_dispatch_event` with `IB_EVENT_PORT_ACTIVE` / `IB_EVENT_PORT_ERR`), so that they
    /// and the core's caches read the port again.
    pub fn port_event(&self, port: u32, active: bool) {
        self.dispatch(
            port,
            if active {
                bindings::ib_event_type_IB_EVENT_PORT_ACTIVE
            } else {
                bindings::ib_event_type_IB_EVENT_PORT_ERR
            },
        );
    }

    /// Tells the clients that the P_Key table of `port` changed (`IB_EVENT_PKEY_CHANGE`).
    pub fn pkey_event(&self, port: u32) {
        self.dispatch(port, bindings::ib_event_type_IB_EVENT_PKEY_CHANGE);
    }

    /// Tells the clients that the LID of `port` changed (`IB_EVENT_LID_CHANGE`).
    pub fn lid_event(&self, port: u32) {
        self.dispatch(port, bindings::ib_event_type_IB_EVENT_LID_CHANGE);
    }

    /// Tells the clients that the subnet manager of `port` changed: its LID, its SL, or
    /// which port it is (`IB_EVENT_SM_CHANGE`), so that they read the port's SM LID again.
    pub fn sm_event(&self, port: u32) {
        self.dispatch(port, bindings::ib_event_type_IB_EVENT_SM_CHANGE);
    }

    /// Tells the clients that the subnet manager asks them to register again with the SA
    /// (`IB_EVENT_CLIENT_REREGISTER`: multicast groups, event subscriptions).
    pub fn client_reregister_event(&self, port: u32) {
        self.dispatch(port, bindings::ib_event_type_IB_EVENT_CLIENT_REREGISTER);
    }

    /// Dispatches the port event `kind` of `port` (ignored for a port the device does not
    /// have). `ib_dispatch_event()` only queues it, so any context may call this.
    ///
    /// Ignored too outside the device's registration: the event's work (`ib_wq`) reads the
    /// port's cache and calls the device's ops, which neither a device still registering (or
    /// failing to: it is freed without that work flushed) nor one unregistering has.
    fn dispatch(&self, port: u32, kind: bindings::ib_event_type) {
        if port == 0 || port > self.port_count() {
            return;
        }
        // The unregistration clears `events`, then waits for this section to end before it
        // flushes the core's event work: an event queued here is flushed with it.
        let _section = Guard::new();
        if !self.events.load(Ordering::Acquire) {
            return;
        }
        let mut event = bindings::ib_event {
            device: self.as_raw(),
            event: kind,
            // SAFETY: The rest of `struct ib_event` (the element union) is valid zeroed.
            ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
        };
        event.element.port_num = port;
        // SAFETY: `event` is a valid port event of this registered device (`port` checked).
        unsafe { bindings::ib_dispatch_event(&event) };
    }
}

/// Whether the core can take `name` as a device name: `assign_name()` passes one with a `%` to
/// `sscanf()` and `snprintf()` as their format, with one `int`; so a `%` must be the one `%d`.
fn is_name_pattern(name: &CStr) -> bool {
    let b = name.as_bytes();
    let mut conversions = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'%' {
            if b.get(i + 1) != Some(&b'd') {
                return false;
            }
            conversions += 1;
        }
    }
    conversions <= 1
}

/// A registered software RDMA device; unregisters and frees it when dropped.
///
/// Unregistering removes every client from the device first (the MAD stack, umad, the VNIC
/// drivers), which destroy their QPs, CQs and PDs on it; the device's data is dropped after
/// that.
///
/// # Invariants
///
/// `dev` points to a registered device of `T` whose data is initialised.
pub struct Registration<T: Provider> {
    pub(super) dev: NonNull<ProviderDevice<T>>,
}

// SAFETY: The registration only owns the device, which is `Send` and `Sync`.
unsafe impl<T: Provider> Send for Registration<T> {}
// SAFETY: See above.
unsafe impl<T: Provider> Sync for Registration<T> {}

impl<T: Provider> Registration<T> {
    /// Allocates and registers a device of `ports` ports named after `name` (a name, or a
    /// pattern with one `%d` such as `c"opasim%d"`, which the core numbers; `EINVAL` for any
    /// other `%`), whose GUID is `node_guid` and whose data is `data`, under `parent` in sysfs
    /// if given (hfi1's is its PCI device). The device's class devices (its umad and verbs
    /// files) and its ULPs' netdevs take the same parent, and the ULPs name it (`ethtool -i`'s
    /// bus).
    ///
    /// The IB core's clients are told about the device before this returns.
    pub fn new(
        module: &'static ThisModule,
        name: &CStr,
        parent: Option<&Device>,
        ports: u32,
        node_guid: u64,
        data: T::Data,
    ) -> Result<Self> {
        crate::build_assert!(core::mem::align_of::<ProviderDevice<T>>() <= 8);
        if ports == 0 || ports > 254 || !is_name_pattern(name) {
            return Err(EINVAL);
        }
        // SAFETY: The size is at least that of a `struct ib_device`, the first field.
        let ib = unsafe { bindings::_ib_alloc_device(size_of::<ProviderDevice<T>>()) };
        let dev = NonNull::new(ib.cast::<ProviderDevice<T>>()).ok_or(ENOMEM)?;
        let raw = dev.as_ptr();
        // SAFETY: `raw` is a fresh, zeroed allocation of the size of `ProviderDevice<T>`,
        // aligned to at least 8 bytes (kmalloc), which is enough (checked above); `data` is not
        // initialised yet, so writing it does not drop anything.
        unsafe {
            addr_of_mut!((*raw).data).write(data);
            addr_of_mut!((*raw).events).write(AtomicBool::new(false));
        }
        let mut ops = Adapter::<T>::OPS;
        ops.owner = module.as_ptr();
        // SAFETY: `ib` is a valid, unregistered device that only this function uses.
        unsafe {
            (*ib).node_type = bindings::RDMA_NODE_IB_CA as _;
            (*ib).phys_port_cnt = ports;
            (*ib).num_comp_vectors = 1;
            (*ib).node_guid = node_guid.to_be();
            (*ib).local_dma_lkey = 0;
            // The core takes its own reference to the parent when it adds the device, and
            // drops it when it removes it.
            (*ib).__bindgen_anon_1.dev.parent =
                parent.map_or(core::ptr::null_mut(), Device::as_raw);
            // The last byte stays NUL (the allocation is zeroed).
            let desc = &mut (*ib).node_desc;
            let n = desc.len() - 1;
            for (d, s) in desc[..n].iter_mut().zip(T::NODE_DESC.as_bytes().iter()) {
                *d = *s as _;
            }
            bindings::ib_set_device_ops(ib, &ops);
        }
        // SAFETY: The device is complete: its ops and data are set. A null DMA device makes
        // the core use virtual addressing, which the verbs of `Adapter` expect.
        let ret =
            unsafe { bindings::ib_register_device(ib, name.as_char_ptr(), core::ptr::null_mut()) };
        if let Err(e) = to_result(ret) {
            // SAFETY: The registration failed, so only this function knows the device: drop
            // its data and free it.
            unsafe {
                core::ptr::drop_in_place(addr_of_mut!((*raw).data));
                bindings::ib_dealloc_device(ib);
            }
            return Err(e);
        }
        // INVARIANT: Registered: its events may reach the core from now on.
        // SAFETY: `raw` is the device initialised above.
        unsafe { (*raw).events.store(true, Ordering::Release) };
        // INVARIANT: The device was allocated by `_ib_alloc_device` with the size of
        // `ProviderDevice<T>`, its ops are `Adapter::<T>::OPS` and its data is initialised (so
        // it is a `ProviderDevice<T>`), and it is registered; it stays so until `drop`.
        Ok(Self { dev })
    }

    /// The registered device.
    pub fn device(&self) -> &ProviderDevice<T> {
        // SAFETY: By the type invariant the device is registered and initialised while
        // `self` lives.
        unsafe { self.dev.as_ref() }
    }
}

impl<T: Provider> Drop for Registration<T> {
    fn drop(&mut self) {
        // INVARIANT: Unregistering: events stop. One being queued now (its check passed) is
        // queued by the end of the grace period, before the unregistration flushes the core's
        // event work.
        self.device().events.store(false, Ordering::Release);
        rcu::synchronize();
        let raw = self.dev.as_ptr();
        let ib = raw.cast::<bindings::ib_device>();
        // SAFETY: By the type invariant the device is registered. Unregistering removes all
        // clients (which destroy their objects on it) and waits until nobody uses the device,
        // so afterwards no op of `Adapter` runs any more and the data can be dropped before
        // the device is freed.
        unsafe {
            bindings::ib_unregister_device(ib);
            core::ptr::drop_in_place(addr_of_mut!((*raw).data));
            bindings::ib_dealloc_device(ib);
        }
    }
}
