// SPDX-License-Identifier: GPL-2.0

//! The container of a provider's QPs (`struct ib_qp`): the core's object, the reference count
//! that lets the provider share it, the consumer's posted receives, and the provider's data.

use super::{cq::Cq, qp_attr::QpInit, recv::RecvQueue};
use crate::rdma::provider::{Provider, ProviderDevice};
use crate::sync::IrqSpinLock;
use crate::{
    bindings, c_str,
    error::{Error, Result},
    init::PinInit,
    static_lock_class,
    str::CStr,
    try_pin_init,
    types::{AlwaysRefCounted, Opaque},
};
use core::{
    ptr::NonNull,
    sync::atomic::{fence, AtomicUsize, Ordering},
};
use macros::pin_data;

/// The lockdep name of every QP's receive queue lock. A `static`, read where the lock is made:
/// a literal in the generic [`QpPriv::new`] would be copied into each crate that instantiates
/// it (the kernel crate's KUnit provider and a provider module), with the one key of its
/// `static_lock_class!()`, and lockdep warns when a key comes with two names.
static RQ_LOCK_NAME: &CStr = c_str!("opa_sw_qp_rq");

/// The part of a [`Qp`] that follows the core's `struct ib_qp`, initialised by `create_qp`.
#[pin_data]
pub(super) struct QpPriv<T: Provider> {
    pub(super) refs: AtomicUsize,
    #[pin]
    pub(super) released: Opaque<bindings::completion>,
    #[pin]
    pub(super) rq: IrqSpinLock<RecvQueue>,
    pub(super) init: QpInit,
    #[pin]
    pub(super) data: T::Qp,
}

impl<T: Provider> QpPriv<T> {
    /// The initialiser of a new QP's part: one reference, the completion its release waits
    /// for, an empty receive queue of `init.max_recv_wr` requests, and the provider's `data`.
    pub(super) fn new(
        init: QpInit,
        data: impl PinInit<T::Qp, Error>,
    ) -> Result<impl PinInit<Self, Error>> {
        let rq = RecvQueue::new(init.max_recv_wr)?;
        let released = Opaque::ffi_init(|c| {
            // SAFETY: `c` is the completion's place, valid for writing; `init_completion()`
            // initialises it there, and it is pinned from then on.
            unsafe { bindings::init_completion(c) }
        });
        Ok(try_pin_init!(Self {
            refs: AtomicUsize::new(1),
            released <- released,
            rq <- IrqSpinLock::new(rq, RQ_LOCK_NAME, static_lock_class!()),
            init,
            data <- data,
        }? Error))
    }
}

/// A QP of the provider `T`: the core's `struct ib_qp` followed by `QpPriv`.
///
/// Shared with [`ARef`](crate::types::ARef): the provider keeps references to the QPs that
/// can receive (in its port tables); destroying the QP waits until they are all dropped.
///
/// # Invariants
///
/// `ib` is a `struct ib_qp` of a device of `T` that the core allocated with the size of
/// `Self` (aligned to at least 8 bytes, enough for `Self`: checked at build time), and `p` is
/// initialised, from the end of a successful `create_qp` until `destroy_qp` has seen `refs`
/// drop to zero. The QP's CQs are CQs of `T` and stay alive as long as the QP does (the core
/// refuses to destroy a CQ that QPs use).
#[repr(C)]
pub struct Qp<T: Provider> {
    pub(super) ib: Opaque<bindings::ib_qp>,
    pub(super) p: QpPriv<T>,
}

// SAFETY: The mutable state is behind a spinlock or atomic, the provider's data is `Send`;
// the core's part is only read for fields fixed at creation (number, CQs, device).
unsafe impl<T: Provider> Send for Qp<T> {}
// SAFETY: As above; shared references give `&T::Qp`, which is `Sync`.
unsafe impl<T: Provider> Sync for Qp<T> {}

// SAFETY: `inc_ref` and `dec_ref` keep `refs` exact; the object is not freed at zero but
// `destroy_qp` waits for zero (by `released`) before the core frees it.
unsafe impl<T: Provider> AlwaysRefCounted for Qp<T> {
    fn inc_ref(&self) {
        self.p.refs.fetch_add(1, Ordering::Relaxed);
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns a reference, so the QP is alive.
        let this = unsafe { obj.as_ref() };
        if this.p.refs.fetch_sub(1, Ordering::Release) == 1 {
            fence(Ordering::Acquire);
            // SAFETY: `released` is an initialised completion (type invariant). `destroy_qp`
            // frees the QP only after this `complete()` returns: `complete()` takes the
            // completion's own lock, and `wait_for_completion()` returns only after taking it
            // once `done` is set, so nothing of `this` is touched after the waiter can go on.
            unsafe { bindings::complete(this.p.released.get()) };
        }
    }
}

impl<T: Provider> Qp<T> {
    /// # Safety
    ///
    /// `ptr` must be an initialised QP of `T` (see the type invariant) for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_qp) -> &'a Self {
        // SAFETY: `ib` is the first field of the `repr(C)` `Self`, and the caller guarantees
        // the memory is an initialised `Self` for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    pub(super) fn raw(&self) -> *mut bindings::ib_qp {
        self.ib.get()
    }

    /// The provider's data of the QP.
    pub fn data(&self) -> &T::Qp {
        &self.p.data
    }

    /// What the QP was created with.
    pub fn init(&self) -> &QpInit {
        &self.p.init
    }

    /// The QP's number.
    pub fn qp_num(&self) -> u32 {
        // SAFETY: The QP is alive (type invariant); `create_qp` set `qp_num`, which never
        // changes afterwards.
        unsafe { (*self.raw()).qp_num }
    }

    /// The device the QP belongs to.
    pub fn device(&self) -> &ProviderDevice<T> {
        // SAFETY: The QP is alive, so its device is (the core destroys a device's QPs before
        // unregistering it), and it is a device of `T` (type invariant).
        unsafe { ProviderDevice::from_raw((*self.raw()).device) }
    }

    /// The CQ of the QP's send completions.
    pub fn send_cq(&self) -> &Cq<T> {
        // SAFETY: The QP is alive; its send CQ is a CQ of `T` that the core keeps alive while
        // the QP uses it (type invariant), and the core set `send_cq` before `create_qp`.
        unsafe { Cq::from_raw((*self.raw()).send_cq) }
    }

    /// The CQ of the QP's receive completions.
    pub fn recv_cq(&self) -> &Cq<T> {
        // SAFETY: As for `send_cq`.
        unsafe { Cq::from_raw((*self.raw()).recv_cq) }
    }
}
