// SPDX-License-Identifier: GPL-2.0

//! Asynchronous events of an RDMA device's ports.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::scope::DeviceScope;
use crate::{bindings, prelude::*, types::Opaque};

/// A port event a ULP acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortEvent {
    /// The port became active (`IB_EVENT_PORT_ACTIVE`).
    Active,
    /// The port went down (`IB_EVENT_PORT_ERR`).
    Error,
    /// The port's P_Key table changed (`IB_EVENT_PKEY_CHANGE`).
    PkeyChange,
}

/// What receives a device's port events.
pub trait EventHandler: Send + Sync + 'static {
    /// `port` of the device changed state. Runs in process context, possibly at the same time
    /// as other callbacks of the device's users, with the device's event handler list held
    /// for reading (`ib_dispatch_event_clients()`): it must not create or drop an
    /// [`EventRegistration`] of the same device, which waits to write that list (hand such
    /// work to a work item).
    fn port_event(&self, port: u32, event: PortEvent);
}

/// An event handler registered with a device (`struct ib_event_handler`); unregistered when
/// dropped.
///
/// # Invariants
///
/// `handler` is registered with its device, with `Self::dispatch` as its callback, for as long
/// as `self` lives.
#[pin_data(PinnedDrop)]
pub struct EventRegistration<H: EventHandler> {
    data: H,
    #[pin]
    handler: Opaque<bindings::ib_event_handler>,
    /// Keeps the device until the handler is unregistered (dropped after `PinnedDrop`).
    _scope: DeviceScope,
}

// SAFETY: The C side only uses the handler under the device's locks; `H` is `Send + Sync`.
unsafe impl<H: EventHandler> Send for EventRegistration<H> {}
// SAFETY: As above.
unsafe impl<H: EventHandler> Sync for EventRegistration<H> {}

impl<H: EventHandler> EventRegistration<H> {
    /// Registers `data` to receive the port events of `device`.
    pub fn new(device: &DeviceScope, data: H) -> impl PinInit<Self, Error> + '_ {
        // INVARIANT: `handler` is registered with `device` and `Self::dispatch` by its
        // initialiser, the last one (so nothing can fail after it), and `PinnedDrop`
        // unregisters it.
        try_pin_init!(Self {
            _scope: device.clone(),
            data,
            // SAFETY: `slot` is the pinned handler, whose `data` is initialised already
            // (fields are initialised in order). It is filled in as `INIT_IB_EVENT_HANDLER`
            // does and registered; `PinnedDrop` unregisters it before the memory goes.
            handler <- Opaque::ffi_init(move |slot: *mut bindings::ib_event_handler| unsafe {
                (*slot).device = device.as_raw();
                (*slot).handler = Some(Self::dispatch);
                let list = core::ptr::addr_of_mut!((*slot).list);
                (*list).next = list;
                (*list).prev = list;
                bindings::ib_register_event_handler(slot);
            }),
        }? Error)
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a handler registered by [`Self::new`] and a valid
    /// event.
    unsafe extern "C" fn dispatch(
        handler: *mut bindings::ib_event_handler,
        event: *mut bindings::ib_event,
    ) {
        // SAFETY: `handler` is the `handler` field of an `EventRegistration<H>` (type
        // invariant), alive while registered; `event` is valid for the call.
        unsafe {
            let this = &*crate::container_of!(handler, Self, handler);
            let kind = match (*event).event {
                bindings::ib_event_type_IB_EVENT_PORT_ACTIVE => PortEvent::Active,
                bindings::ib_event_type_IB_EVENT_PORT_ERR => PortEvent::Error,
                bindings::ib_event_type_IB_EVENT_PKEY_CHANGE => PortEvent::PkeyChange,
                _ => return,
            };
            this.data.port_event((*event).element.port_num, kind);
        }
    }
}

#[pinned_drop]
impl<H: EventHandler> PinnedDrop for EventRegistration<H> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant the handler is registered; once unregistered (which
        // waits for callbacks in progress) nothing uses it.
        unsafe { bindings::ib_unregister_event_handler(self.handler.get()) };
    }
}
