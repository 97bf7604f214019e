// SPDX-License-Identifier: GPL-2.0

//! NAPI contexts of a driver's own.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! A [`Napi`] is a `struct napi_struct` on a dummy netdev of its own (`alloc_netdev_dummy()`),
//! as the receive queues of hfi1 (`netdev_rx.c`) have it: the driver schedules it
//! ([`Napi::schedule`]) when it has work, and the networking core then calls
//! [`NapiPoll::poll`] in softirq context, where transmit completions free their buffers.
//!
//! GRO keeps received frames across polls, and reads their device: a frame may only go to
//! GRO in a context that its device owns, and that is deleted before the device is freed.
//! So [`NapiCtx`] offers no receive of its own; a VNIC netdev's receive runs in the netdev's
//! own context ([`VnicRx`](crate::rdma::vnic::VnicRx)).

#[cfg(CONFIG_RUST_KERNEL_DOCTESTS)]
#[path = "napi_kunit.rs"]
mod kunit;

use crate::{net::skbuff::SkBuffMut, prelude::*, types::Opaque};
use core::{
    ffi::c_int,
    marker::PhantomData,
    mem::offset_of,
    ptr::{addr_of_mut, NonNull},
    sync::atomic::{AtomicBool, Ordering},
};

/// The work of a NAPI context.
pub trait NapiPoll: Send + Sync + 'static {
    /// Does at most `budget` units of work (received frames, by convention) and returns how
    /// many it did. Returning less than `budget` completes the context: it runs again when
    /// scheduled (a [`Napi::schedule`] that raced with the poll is not lost). Returning
    /// `budget` keeps it scheduled. Softirq context: must not sleep.
    fn poll(&self, ctx: &NapiCtx<'_>, budget: i32) -> i32;
}

/// The NAPI context a [`NapiPoll::poll`] runs in.
///
/// # Invariants
///
/// `self.0` is a NAPI context that is being polled on this CPU for `'a`.
pub struct NapiCtx<'a>(NonNull<bindings::napi_struct>, PhantomData<&'a ()>);

impl NapiCtx<'_> {
    /// Hands a received frame to GRO (`napi_gro_receive()`), which passes it, merged or not,
    /// to the stack, and may keep it past this poll.
    ///
    /// # Safety
    ///
    /// The buffer's device is set (`eth_type_trans()`: GRO reads `skb->dev`, null crashes)
    /// and stays alive until the context is deleted (GRO keeps buffers across polls), and its
    /// protocol is set. The buffer is a [`SkBuffMut`]: GRO moves a merged buffer's fragments
    /// out of its shared info and may take over its head, which no clone may share.
    pub(crate) unsafe fn gro_receive(&self, skb: SkBuffMut) {
        // SAFETY: The context is being polled here (type invariant), which is where GRO runs;
        // the buffer's ownership passes to GRO, and no clone shares its head or shared info
        // (`SkBuffMut`); its device is the caller's guarantee.
        unsafe {
            bindings::napi_gro_receive(self.0.as_ptr(), skb.into_inner().into_raw().as_ptr())
        };
    }
}

/// Schedules the NAPI context `napi` (`napi_schedule()`); see [`Napi::schedule`] for the
/// contexts.
///
/// # Safety
///
/// `napi` is a context that was added (`netif_napi_add()`) and is not deleted yet.
pub(crate) unsafe fn schedule(napi: *mut bindings::napi_struct) {
    // SAFETY: FFI call without preconditions.
    if unsafe { bindings::irqs_disabled() } {
        // SAFETY: The context was added and is alive (the caller's guarantee); scheduling a
        // disabled context does nothing. `napi_schedule()` raises the softirq, which is
        // allowed with interrupts off.
        unsafe { bindings::napi_schedule(napi) };
        return;
    }
    // SAFETY: As above. Interrupts are on, so `local_bh_enable()` may run the softirqs;
    // `local_bh_disable()` nests.
    unsafe {
        bindings::local_bh_disable();
        bindings::napi_schedule(napi);
        bindings::local_bh_enable();
    }
}

/// Runs the poll `f` of the NAPI context `napi` with `budget` (made non-negative), and
/// completes the context if it did less than that (`napi_complete_done()`). Returns the work
/// done, between 0 and the budget.
///
/// # Safety
///
/// The core is polling `napi` (not null) on this CPU for the duration of the call.
pub(crate) unsafe fn run_poll(
    napi: *mut bindings::napi_struct,
    budget: c_int,
    f: impl FnOnce(&NapiCtx<'_>, i32) -> i32,
) -> c_int {
    // INVARIANT: The core is polling `napi` on this CPU for the duration of the call (the
    // caller's guarantee).
    // SAFETY: `napi` is not null (the caller's guarantee).
    let ctx = NapiCtx(unsafe { NonNull::new_unchecked(napi) }, PhantomData);
    let budget = budget.max(0);
    let done = f(&ctx, budget).clamp(0, budget);
    if done < budget {
        // SAFETY: The context is being polled and did less than its budget.
        unsafe { bindings::napi_complete_done(napi, done) };
    }
    done
}

/// A NAPI context, on a dummy netdev of its own, whose poll is `T`'s.
///
/// # Invariants
///
/// `napi` was added to `dev` with `Self::poll_callback` as its poll function, and is enabled
/// except while [`Napi::paused`] runs; `dev` is a dummy netdev that `Self` owns.
#[pin_data(PinnedDrop)]
pub struct Napi<T: NapiPoll> {
    #[pin]
    napi: Opaque<bindings::napi_struct>,
    dev: NonNull<bindings::net_device>,
    /// Set while [`Napi::paused`] runs, so that two never disable the context at once.
    pausing: AtomicBool,
    data: T,
}

// SAFETY: The context is driven by the networking core on any CPU; the data is `Send + Sync`.
unsafe impl<T: NapiPoll> Send for Napi<T> {}
// SAFETY: Every method takes `&self` and is safe from any thread; see `Send`.
unsafe impl<T: NapiPoll> Sync for Napi<T> {}

impl<T: NapiPoll> Napi<T> {
    /// A new NAPI context, enabled, with `data` as its poll's state. Process context.
    pub fn new(data: T) -> impl PinInit<Self, Error> {
        let init = move |slot: *mut Self| -> Result {
            // SAFETY: FFI call without preconditions.
            let dev = NonNull::new(unsafe { bindings::alloc_netdev_dummy(0) }).ok_or(ENOMEM)?;
            // SAFETY: `slot` is valid for writes and pinned (`pin_init_from_closure`): the
            // fields are written once each; the NAPI context is zeroed first, as
            // `netif_napi_add()` expects of the memory it sets up (drivers embed it in zeroed
            // allocations), then added to `dev` and enabled.
            unsafe {
                addr_of_mut!((*slot).dev).write(dev);
                addr_of_mut!((*slot).pausing).write(AtomicBool::new(false));
                addr_of_mut!((*slot).data).write(data);
                let napi = Opaque::raw_get(addr_of_mut!((*slot).napi));
                core::ptr::write_bytes(napi, 0, 1);
                bindings::netif_napi_add(dev.as_ptr(), napi, Some(Self::poll_callback));
                bindings::napi_enable(napi);
            }
            // INVARIANT: Added to `dev` with `poll_callback`, and enabled.
            Ok(())
        };
        // SAFETY: `init` initialises every field on success; on failure it wrote nothing that
        // needs dropping (it fails only before writing).
        unsafe { crate::init::pin_init_from_closure(init) }
    }

    /// The poll's state.
    pub fn data(&self) -> &T {
        &self.data
    }

    fn raw(&self) -> *mut bindings::napi_struct {
        self.napi.get()
    }

    /// Schedules the context (`napi_schedule()`): its poll runs soon on this CPU, in softirq
    /// context. Any context: in process context bottom halves are disabled around the call,
    /// so that the poll runs when they are enabled again rather than at the next interrupt.
    /// With interrupts off (under an [`IrqSpinLock`](crate::sync::irq_spinlock::IrqSpinLock),
    /// in netpoll) there is no such bracket: `local_bh_enable()` would run the pending
    /// softirqs and turn interrupts on under the caller; the poll runs when they come back.
    pub fn schedule(&self) {
        // SAFETY: The context was added and is alive (type invariant).
        unsafe { schedule(self.raw()) };
    }

    /// Runs `f` with the context disabled (`napi_disable()`, which waits for a running poll
    /// to finish, then `napi_enable()`): no poll runs meanwhile. Process context (it sleeps).
    /// `EBUSY` if another call is running.
    pub fn paused<R>(&self, f: impl FnOnce() -> R) -> Result<R> {
        if self.pausing.swap(true, Ordering::Acquire) {
            return Err(EBUSY);
        }
        // SAFETY: The context is enabled (type invariant), and only this call disables it
        // (`pausing`).
        unsafe { bindings::napi_disable(self.raw()) };
        let r = f();
        // INVARIANT: Enabled again before `pausing` is cleared.
        // SAFETY: Disabled above.
        unsafe { bindings::napi_enable(self.raw()) };
        self.pausing.store(false, Ordering::Release);
        Ok(r)
    }

    /// # Safety
    ///
    /// Called by the networking core only, for a context of this type, while polling it.
    unsafe extern "C" fn poll_callback(napi: *mut bindings::napi_struct, budget: c_int) -> c_int {
        // SAFETY: The context is the `napi` field of a `Self` (only `new` adds this callback),
        // which lives until its drop disables and deletes the context.
        let this = unsafe { &*napi.cast::<u8>().sub(offset_of!(Self, napi)).cast::<Self>() };
        // SAFETY: The core is polling `napi` on this CPU for the duration of the call.
        unsafe { run_poll(napi, budget, |ctx, budget| this.data.poll(ctx, budget)) }
    }
}

#[pinned_drop]
impl<T: NapiPoll> PinnedDrop for Napi<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: The context is enabled (type invariant: `paused` borrows `self`, so it is not
        // running), was added to `dev`, which `Self` owns: disable it (waiting for a running
        // poll), delete it (`netif_napi_del()` waits for an RCU grace period, so the drop is
        // for process context), then free the dummy netdev.
        unsafe {
            bindings::napi_disable(self.raw());
            bindings::netif_napi_del(self.raw());
            bindings::free_netdev(self.dev.as_ptr());
        }
    }
}
