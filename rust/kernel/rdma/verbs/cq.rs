// SPDX-License-Identifier: GPL-2.0

//! The container of a provider's completion queues (`struct ib_cq`), and the deferred call of
//! their completion handler.

use super::wc::WcWriter;
use crate::rdma::provider::{Provider, ProviderDevice};
use crate::{
    bindings,
    error::{code::*, from_result, Result},
    init::PinInit,
    types::Opaque,
};
use core::{ffi::c_int, mem::offset_of, ptr::addr_of_mut};

/// What a consumer arms its CQ for (`req_notify_cq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CqNotify {
    /// Only a solicited completion is to call the handler (`IB_CQ_SOLICITED`); otherwise the
    /// next completion is (`IB_CQ_NEXT_COMP`).
    pub solicited_only: bool,
    /// The consumer wants to know whether completions are waiting already
    /// (`IB_CQ_REPORT_MISSED_EVENTS`).
    pub report_missed: bool,
}

/// The part of a CQ that does not depend on the provider: the core's `struct ib_cq` and the
/// work item that calls its completion handler.
///
/// # Invariants
///
/// `ib` is a `struct ib_cq` the core allocated for a [`Cq`], and `comp_work` an initialised
/// work item whose function is [`CqCore::comp_work_fn`], from the end of `create_cq` until
/// `destroy_cq` flushed it.
#[repr(C)]
pub(super) struct CqCore {
    pub(super) ib: Opaque<bindings::ib_cq>,
    pub(super) comp_work: Opaque<bindings::work_struct>,
}

impl CqCore {
    /// Initialises `comp_work` of the CQ at `this`.
    ///
    /// # Safety
    ///
    /// `this` must be a CQ the core allocated, during `create_cq`, its `comp_work` not
    /// initialised.
    pub(super) unsafe fn init_work(this: *mut Self) {
        // INVARIANT: `comp_work` is initialised here, with `comp_work_fn`.
        // SAFETY: `comp_work` is valid for writing (the caller's guarantee); the name and the
        // lock class are static, as `init_work_with_key()` wants them.
        unsafe {
            bindings::init_work_with_key(
                Opaque::raw_get(addr_of_mut!((*this).comp_work)),
                Some(Self::comp_work_fn),
                false,
                crate::c_str!("opa_sw_cq_comp").as_char_ptr(),
                crate::static_lock_class!().as_ptr(),
            )
        };
    }

    /// Queues the call of the completion handler (once, however often it is asked before it
    /// runs), on `system_highpri_wq` as rdmavt's `rvt_cq_enter()` queues `comptask` on its
    /// high-priority `comp_vector_wq`.
    pub(super) fn notify(&self) {
        // SAFETY: `comp_work` is initialised and the CQ alive (type invariant, and `&self`);
        // `pre_destroy_cq` (or `destroy_cq`) disables the work before the core frees the CQ,
        // after which this queues nothing, whoever calls it (the core's own poll work may
        // still arm the CQ then). `system_highpri_wq` is set at boot, before any module runs.
        unsafe {
            bindings::queue_work_on(
                bindings::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
                bindings::system_highpri_wq,
                self.comp_work.get(),
            )
        };
    }

    /// Cancels the completion handler's call if queued, waits for one running, and makes
    /// [`CqCore::notify`] queue nothing from then on (`disable_work_sync()`); process context.
    pub(super) fn disable(&self) {
        // SAFETY: `comp_work` is initialised and the CQ alive (type invariant, and `&self`).
        unsafe { bindings::disable_work_sync(self.comp_work.get()) };
    }

    /// Waits until the completion handler's work item is neither queued nor running
    /// (`flush_work()`); process context.
    pub(super) fn flush(&self) {
        // SAFETY: `comp_work` is initialised and the CQ alive (type invariant, and `&self`).
        unsafe { bindings::flush_work(self.comp_work.get()) };
    }

    /// The work item's function: calls the CQ's completion handler.
    ///
    /// # Safety
    ///
    /// Called by the workqueue only, with the `comp_work` of a live `CqCore`.
    unsafe extern "C" fn comp_work_fn(work: *mut bindings::work_struct) {
        // SAFETY: `work` is the `comp_work` field of a `CqCore` (container_of), which is alive
        // until `destroy_cq` has flushed this work.
        let this = unsafe {
            work.byte_sub(offset_of!(CqCore, comp_work))
                .cast::<CqCore>()
        };
        // SAFETY: `ib` is the first field of the `repr(C)` `CqCore`, a live `struct ib_cq`.
        // The core sets `comp_handler` and `cq_context` before it can arm the CQ (in
        // `__ib_alloc_cq()` and `__ib_create_cq()`) and never changes them afterwards; the
        // work was queued after the arming, and queueing orders the two. The handler runs
        // with bottom halves off, as rdmavt's `send_complete()` runs it (IPoIB's connected
        // mode takes it to run in softirq context); enabled again right after.
        unsafe {
            let cq = this.cast::<bindings::ib_cq>();
            if let Some(handler) = (*cq).comp_handler {
                bindings::local_bh_disable();
                handler(cq, (*cq).cq_context);
                bindings::local_bh_enable();
            }
        }
    }
}

/// A completion queue of the provider `T`: the core's `struct ib_cq`, the work item that calls
/// its completion handler, and the provider's data (its ring of completions and arming state).
///
/// # Invariants
///
/// `core` is valid as `CqCore` says and `data` is initialised, from the end of a successful
/// `create_cq` until `destroy_cq`. The core allocated `Self` with `kzalloc()` (aligned to at
/// least 8 bytes, enough for `Self`: checked at build time).
#[repr(C)]
pub struct Cq<T: Provider> {
    core: CqCore,
    data: T::Cq,
}

// SAFETY: The provider's data is `Send`; the core's part is only used to queue the work item,
// which any thread may do.
unsafe impl<T: Provider> Send for Cq<T> {}
// SAFETY: Shared references give `&T::Cq`, which is `Sync`, and queue the work item, which
// `queue_work_on()` allows from any context.
unsafe impl<T: Provider> Sync for Cq<T> {}

impl<T: Provider> Cq<T> {
    /// # Safety
    ///
    /// `ptr` must be a CQ of `T` (see the type invariant) between `create_cq` and
    /// `destroy_cq`, for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_cq) -> &'a Self {
        // SAFETY: `ib` is the first field of `CqCore`, the first field of the `repr(C)` `Self`,
        // and the caller guarantees the memory is an initialised `Self` for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The provider's data of the CQ.
    pub fn data(&self) -> &T::Cq {
        &self.data
    }

    /// Has the core's completion handler of the CQ called, from a work item: never in the
    /// caller's context, so a provider may ask for it while the poster's locks are held, as
    /// rdmavt's `rvt_cq_enter()` queues `comptask` rather than calling the handler.
    pub fn notify(&self) {
        self.core.notify();
    }

    /// Waits for a completion handler call this CQ has queued; process context.
    pub(super) fn flush_notify(&self) {
        self.core.flush();
    }

    /// # Safety
    ///
    /// Called by the IB core only, as `create_cq`, with a zeroed CQ of the size of `Self` on
    /// a device of `T`.
    pub(crate) unsafe extern "C" fn create_cq_callback(
        cq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        attrs: *mut bindings::uverbs_attr_bundle,
    ) -> c_int {
        from_result(|| {
            // SAFETY: The arguments are the core's, as this function's contract says.
            unsafe { Self::create_cq(cq, attr, attrs) }?;
            Ok(0)
        })
    }

    /// `create_cq`, with errors as `Result`.
    ///
    /// # Safety
    ///
    /// As [`Self::create_cq_callback`].
    unsafe fn create_cq(
        cq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        attrs: *mut bindings::uverbs_attr_bundle,
    ) -> Result {
        // The core allocates the CQ with `kzalloc()`, whose alignment (at least 8 bytes) must
        // do for `Self`.
        crate::build_assert!(core::mem::align_of::<Self>() <= 8);
        if !attrs.is_null() {
            // No user verbs.
            return Err(EOPNOTSUPP);
        }
        // SAFETY: `attr` is valid for the call, by the op's contract.
        let attr = unsafe { &*attr };
        if attr.flags != 0 || attr.cqe == 0 {
            return Err(EINVAL);
        }
        // SAFETY: The core passes a CQ of one of `T`'s devices, whose `device` it has set and
        // which is alive during the call.
        let dev = unsafe { ProviderDevice::<T>::from_raw((*cq).device) };
        let data = T::create_cq(dev, attr.cqe)?;
        let this = cq.cast::<Self>();
        // SAFETY: `this` is the core's zeroed allocation of the size of `Self` and aligned
        // enough (checked above); `data` is not initialised yet, and the core never moves the
        // CQ. On error `__pinned_init` leaves `data` uninitialised, and the core frees the CQ
        // without calling `destroy_cq`. Initialising pinned data in memory that C allocated
        // has no other way (`drm::Device::new` does the same).
        unsafe { data.__pinned_init(addr_of_mut!((*this).data)) }?;
        // SAFETY: The CQ is the core's, during `create_cq`, its `comp_work` not initialised.
        unsafe { CqCore::init_work(addr_of_mut!((*this).core)) };
        // SAFETY: The core's `ib_cq` is valid; `cqe` tells the consumer the CQ's size.
        unsafe { (*cq).cqe = attr.cqe as c_int };
        // INVARIANT: `data` and `comp_work` are initialised, in the core's allocation of the
        // size of `Self`, until `destroy_cq`.
        Ok(())
    }

    /// `ib_free_cq()` calls this before it cancels its own poll work, which may still arm the
    /// CQ and so run the provider's [`Provider::req_notify_cq`] and [`Provider::poll_cq`]:
    /// a handler call they queue then would queue that poll work again, after its cancel and
    /// past the CQ's free. So the handler's work is disabled first: a [`Cq::notify`] from
    /// then on does nothing.
    ///
    /// [`Provider::req_notify_cq`]: crate::rdma::provider::Provider::req_notify_cq
    /// [`Provider::poll_cq`]: crate::rdma::provider::Provider::poll_cq
    ///
    /// # Safety
    ///
    /// Called by the IB core only, as `pre_destroy_cq`, with a CQ `create_cq_callback`
    /// initialised.
    pub(crate) unsafe extern "C" fn pre_destroy_cq_callback(cq: *mut bindings::ib_cq) -> c_int {
        // SAFETY: The CQ is initialised (the core's contract), until `destroy_cq`.
        unsafe { Self::from_raw(cq) }.core.disable();
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, as `destroy_cq`, with a CQ `create_cq_callback` initialised
    /// and no QP using it any more.
    pub(crate) unsafe extern "C" fn destroy_cq_callback(
        cq: *mut bindings::ib_cq,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        let this = cq.cast::<Self>();
        // SAFETY: The CQ is initialised. Its handler's work is disabled (again, for the CQs
        // the core destroys without `pre_destroy_cq`): it neither runs nor can be queued any
        // more (rdmavt's `rvt_destroy_cq()` flushes its `comptask`). Then the provider's data
        // is dropped, once; the core frees the memory after this returns.
        unsafe {
            bindings::disable_work_sync(Opaque::raw_get(addr_of_mut!((*this).core.comp_work)));
            core::ptr::drop_in_place(addr_of_mut!((*this).data));
        }
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, as `poll_cq`, with an initialised CQ and `wc` valid for
    /// writing `num` entries.
    pub(crate) unsafe extern "C" fn poll_cq_callback(
        cq: *mut bindings::ib_cq,
        num: c_int,
        wc: *mut bindings::ib_wc,
    ) -> c_int {
        // SAFETY: The core polls initialised CQs only.
        let this = unsafe { Self::from_raw(cq) };
        let num = usize::try_from(num).unwrap_or(0);
        // SAFETY: `wc` has room for `num` entries during the call, by the op's contract.
        let mut out = unsafe { WcWriter::new(wc, num) };
        T::poll_cq(this, &mut out);
        out.written() as c_int
    }

    /// # Safety
    ///
    /// Called by the IB core only, as `req_notify_cq`, with an initialised CQ.
    pub(crate) unsafe extern "C" fn req_notify_cq_callback(
        cq: *mut bindings::ib_cq,
        flags: bindings::ib_cq_notify_flags,
    ) -> c_int {
        // SAFETY: The core arms initialised CQs only.
        let this = unsafe { Self::from_raw(cq) };
        let notify = CqNotify {
            solicited_only: flags & bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK
                == bindings::ib_cq_notify_flags_IB_CQ_SOLICITED,
            report_missed: flags & bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0,
        };
        c_int::from(T::req_notify_cq(this, &notify))
    }
}
