// SPDX-License-Identifier: GPL-2.0

//! The verbs objects of software RDMA devices: CQs, UD QPs, address handles and work requests.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! The IB core allocates every object (zeroed, with the size the ops table gives) and calls
//! the device's `create_*` op to initialise the driver's part, which follows the core's
//! `struct ib_*` at offset 0; `destroy_*` drops it before the core frees the memory. Here the
//! driver's part is generic:
//!
//! - [`Cq`]: a ring of work completions under a spinlock, polled by `poll_cq`, and the arming
//!   state of `req_notify_cq`.
//! - [`Qp`]: UD semantics for QP0 (SMI), QP1 (GSI) and UD QPs: the QP state and Q_Key from
//!   `modify_qp`, the receive queue filled by `post_recv`, and the provider's data. Sends go
//!   to [`Provider::post_send`]; the provider delivers into a receiving QP with
//!   [`Qp::deliver_ud`].
//! - [`Ah`]: the address (DLID, SL, port) of a UD destination.
//!
//! Memory is addressed virtually: the device is registered without a DMA device, so the
//! `addr` of every scatter/gather entry is a kernel virtual address (`ib_uses_virt_dma`).

use super::irqlock::IrqSpinLock;
use super::provider::{errno, Device, Provider};
use crate::{
    alloc::{flags::*, KVec},
    bindings,
    error::{code::*, Result},
    init::PinInit,
    types::{AlwaysRefCounted, Opaque},
};
use core::{
    ffi::c_int,
    ptr::{addr_of_mut, NonNull},
    sync::atomic::{fence, AtomicUsize, Ordering},
};

/// The most scatter/gather entries of a work request.
pub const MAX_SGE: usize = 4;

/// The bytes a UD receive buffer reserves for the GRH before the payload.
pub const GRH_LEN: usize = 40;

/// The Q_Key of QP1 (`IB_QP1_QKEY`).
pub const QP1_QKEY: u32 = 0x8001_0000;

/// A fixed-capacity FIFO, allocated up front so that pushing never allocates (pushes happen
/// in atomic context).
struct Ring<T> {
    slots: KVec<Option<T>>,
    head: usize,
    len: usize,
}

impl<T> Ring<T> {
    fn new(capacity: usize) -> Result<Self> {
        let mut slots = KVec::with_capacity(capacity, GFP_KERNEL)?;
        for _ in 0..capacity {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            slots,
            head: 0,
            len: 0,
        })
    }

    fn push(&mut self, v: T) -> Result<(), T> {
        let cap = self.slots.len();
        if self.len == cap {
            return Err(v);
        }
        self.slots[(self.head + self.len) % cap] = Some(v);
        self.len += 1;
        Ok(())
    }

    fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.slots[self.head].take();
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        v
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The status of a work completion (`enum ib_wc_status`, the ones a software device uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcStatus {
    /// The work request succeeded.
    Success,
    /// A local length error: the message did not fit the receive buffer.
    LocalLengthError,
    /// A general error.
    GeneralError,
}

impl WcStatus {
    fn raw(self) -> bindings::ib_wc_status {
        match self {
            Self::Success => bindings::ib_wc_status_IB_WC_SUCCESS,
            Self::LocalLengthError => bindings::ib_wc_status_IB_WC_LOC_LEN_ERR,
            Self::GeneralError => bindings::ib_wc_status_IB_WC_GENERAL_ERR,
        }
    }
}

/// The `struct ib_qp` of a completion: only handed back to the core, never dereferenced.
#[derive(Clone, Copy)]
struct QpPtr(*mut bindings::ib_qp);

// SAFETY: The pointer is only copied into `struct ib_wc` for the core, never dereferenced.
unsafe impl Send for QpPtr {}

/// A work completion waiting in a [`Cq`].
#[derive(Clone, Copy)]
struct WorkCompletion {
    /// The `wr_id` / `wr_cqe` union of the work request, as its bits.
    wr_id: u64,
    status: bindings::ib_wc_status,
    opcode: bindings::ib_wc_opcode,
    byte_len: u32,
    qp: QpPtr,
    src_qp: u32,
    slid: u32,
    wc_flags: c_int,
    imm: u32,
    pkey_index: u16,
    sl: u8,
    port_num: u32,
    solicited: bool,
}

/// The arming state of a CQ.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Armed {
    No,
    Solicited,
    Next,
}

struct CqState {
    ring: Ring<WorkCompletion>,
    armed: Armed,
}

/// A completion queue: the core's `struct ib_cq` and the completions waiting to be polled.
///
/// # Invariants
///
/// `ib` is a `struct ib_cq` the core allocated with the size of `Self`, and `state` is
/// initialised, from a successful `create_cq` until `destroy_cq`.
#[repr(C)]
pub struct Cq {
    ib: Opaque<bindings::ib_cq>,
    state: IrqSpinLock<CqState>,
}

// SAFETY: The CQ's state is behind its spinlock; the core's part is used under the core's
// rules (the comp_handler is only called, never changed, by this code).
unsafe impl Send for Cq {}
// SAFETY: See above.
unsafe impl Sync for Cq {}

impl Cq {
    /// # Safety
    ///
    /// `ptr` must be a CQ of a device of this abstraction, between `create_cq` and
    /// `destroy_cq`, for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::ib_cq) -> &'a Self {
        // SAFETY: `ib` is the first field of the `repr(C)` `Self`, and the caller guarantees
        // the memory is an initialised `Self` for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// Queues a completion and calls the CQ's completion handler if the CQ is armed for it.
    ///
    /// A full CQ drops the completion (an overrun) and returns `ENOSPC`.
    fn complete(&self, wc: WorkCompletion) -> Result {
        let fire = {
            let mut st = self.state.lock();
            if st.ring.push(wc).is_err() {
                return Err(ENOSPC);
            }
            let fire = match st.armed {
                Armed::Next => true,
                Armed::Solicited => wc.solicited,
                Armed::No => false,
            };
            if fire {
                st.armed = Armed::No;
            }
            fire
        };
        if fire {
            let cq = self.ib.get();
            // SAFETY: The CQ is alive (type invariant; callers hold a QP that uses it, so the
            // core cannot destroy it). The core sets `comp_handler` before it arms the CQ,
            // and the arming happened before (under the lock taken above).
            unsafe {
                if let Some(handler) = (*cq).comp_handler {
                    handler(cq, (*cq).cq_context);
                }
            }
        }
        Ok(())
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a zeroed CQ of the size of `Self`.
    pub(crate) unsafe extern "C" fn create_cq_callback(
        cq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        _attrs: *mut bindings::uverbs_attr_bundle,
    ) -> c_int {
        // SAFETY: `attr` is valid for the call, by the op's contract.
        let attr = unsafe { &*attr };
        if attr.flags != 0 || attr.cqe == 0 || attr.cqe > 65536 {
            return EINVAL.to_errno();
        }
        let ring = match Ring::new(attr.cqe as usize) {
            Ok(r) => r,
            Err(e) => return e.to_errno(),
        };
        let this = cq.cast::<Self>();
        let init = crate::new_irq_spinlock!(
            CqState {
                ring,
                armed: Armed::No,
            },
            "opa_sw_cq"
        );
        // SAFETY: `this` is the core's zeroed allocation of the size of `Self`, and `state` is
        // not initialised yet; the core does not move the CQ.
        let Ok(()) = unsafe { PinInit::__pinned_init(init, addr_of_mut!((*this).state)) };
        // SAFETY: The core's `ib_cq` is valid; `cqe` tells the user the actual size.
        unsafe { (*cq).cqe = attr.cqe as c_int };
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a CQ `create_cq_callback` initialised and no QP using
    /// it any more.
    pub(crate) unsafe extern "C" fn destroy_cq_callback(
        cq: *mut bindings::ib_cq,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        let this = cq.cast::<Self>();
        // SAFETY: The CQ is initialised and unused (no QP references it, so no delivery can
        // touch it); the core frees the memory after this returns.
        unsafe { core::ptr::drop_in_place(addr_of_mut!((*this).state)) };
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised CQ and `wc` valid for `num` entries.
    pub(crate) unsafe extern "C" fn poll_cq_callback(
        cq: *mut bindings::ib_cq,
        num: c_int,
        wc: *mut bindings::ib_wc,
    ) -> c_int {
        // SAFETY: The core polls initialised CQs only.
        let this = unsafe { Self::from_raw(cq) };
        let mut st = this.state.lock();
        let mut n = 0;
        while n < num {
            let Some(c) = st.ring.pop() else { break };
            // SAFETY: `wc` has room for `num` entries, by the op's contract, and `n < num`.
            let out = unsafe { &mut *wc.add(n as usize) };
            // SAFETY: A zeroed `ib_wc` is valid.
            *out = unsafe { core::mem::MaybeUninit::zeroed().assume_init() };
            out.__bindgen_anon_1.wr_id = c.wr_id;
            out.status = c.status;
            out.opcode = c.opcode;
            out.byte_len = c.byte_len;
            out.qp = c.qp.0;
            out.src_qp = c.src_qp;
            out.slid = c.slid;
            out.wc_flags = c.wc_flags;
            out.ex.imm_data = c.imm.to_be();
            out.pkey_index = c.pkey_index;
            out.sl = c.sl;
            out.port_num = c.port_num;
            n += 1;
        }
        n
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised CQ.
    pub(crate) unsafe extern "C" fn req_notify_cq_callback(
        cq: *mut bindings::ib_cq,
        flags: bindings::ib_cq_notify_flags,
    ) -> c_int {
        // SAFETY: The core arms initialised CQs only.
        let this = unsafe { Self::from_raw(cq) };
        let mut st = this.state.lock();
        let solicited = flags & bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK
            == bindings::ib_cq_notify_flags_IB_CQ_SOLICITED;
        if st.armed != Armed::Next {
            st.armed = if solicited {
                Armed::Solicited
            } else {
                Armed::Next
            };
        }
        if flags & bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0
            && !st.ring.is_empty()
        {
            1
        } else {
            0
        }
    }
}

/// The type of a QP this abstraction supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpType {
    /// QP0, the subnet management interface.
    Smi,
    /// QP1, the general services interface.
    Gsi,
    /// An unreliable datagram QP.
    Ud,
}

/// What a QP is created with (from `struct ib_qp_init_attr`).
#[derive(Clone, Copy, Debug)]
pub struct QpInit {
    /// The QP's type.
    pub qp_type: QpType,
    /// The port of QP0/QP1; 0 for UD QPs (their port comes with `modify_qp`).
    pub port: u32,
    /// The send queue's depth.
    pub max_send_wr: u32,
    /// The receive queue's depth.
    pub max_recv_wr: u32,
}

/// The state of a QP (`enum ib_qp_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpState {
    /// Reset.
    Reset,
    /// Initialised: receives may be posted.
    Init,
    /// Ready to receive.
    Rtr,
    /// Ready to send.
    Rts,
    /// Send queue drained.
    Sqd,
    /// Send queue error.
    Sqe,
    /// Error.
    Err,
}

impl QpState {
    fn from_raw(s: bindings::ib_qp_state) -> Option<Self> {
        Some(match s {
            bindings::ib_qp_state_IB_QPS_RESET => Self::Reset,
            bindings::ib_qp_state_IB_QPS_INIT => Self::Init,
            bindings::ib_qp_state_IB_QPS_RTR => Self::Rtr,
            bindings::ib_qp_state_IB_QPS_RTS => Self::Rts,
            bindings::ib_qp_state_IB_QPS_SQD => Self::Sqd,
            bindings::ib_qp_state_IB_QPS_SQE => Self::Sqe,
            bindings::ib_qp_state_IB_QPS_ERR => Self::Err,
            _ => return None,
        })
    }

    fn raw(self) -> bindings::ib_qp_state {
        match self {
            Self::Reset => bindings::ib_qp_state_IB_QPS_RESET,
            Self::Init => bindings::ib_qp_state_IB_QPS_INIT,
            Self::Rtr => bindings::ib_qp_state_IB_QPS_RTR,
            Self::Rts => bindings::ib_qp_state_IB_QPS_RTS,
            Self::Sqd => bindings::ib_qp_state_IB_QPS_SQD,
            Self::Sqe => bindings::ib_qp_state_IB_QPS_SQE,
            Self::Err => bindings::ib_qp_state_IB_QPS_ERR,
        }
    }
}

/// A posted receive buffer: the work request's id and its scatter list.
///
/// # Invariants
///
/// Each of the first `num_sge` entries is a kernel virtual address range (virtual DMA) that
/// the poster keeps valid and writable until this receive completes or the QP is destroyed;
/// a `RecvBuffer` only lives in the receive queue of its QP, or on the stack of
/// [`Qp::deliver_ud`] while that QP is alive.
#[derive(Clone, Copy)]
struct RecvBuffer {
    wr_id: u64,
    sges: [(u64, u32); MAX_SGE],
    num_sge: usize,
}

impl RecvBuffer {
    /// The total length of the buffer.
    fn len(&self) -> usize {
        self.sges[..self.num_sge].iter().map(|s| s.1 as usize).sum()
    }

    /// Writes `parts`, one after the other, from `offset` in the buffer; the caller has
    /// checked that they fit.
    fn scatter(&self, mut offset: usize, parts: &[&[u8]]) {
        for part in parts {
            self.write_at(offset, part);
            offset += part.len();
        }
    }

    /// Writes `bytes` at `pos` of the buffer (the concatenation of its entries).
    fn write_at(&self, mut pos: usize, mut bytes: &[u8]) {
        for &(addr, len) in &self.sges[..self.num_sge] {
            if bytes.is_empty() {
                return;
            }
            let len = len as usize;
            if pos >= len {
                pos -= len;
                continue;
            }
            let n = (len - pos).min(bytes.len());
            // SAFETY: By the type invariant `addr..addr + len` is writable kernel memory for
            // this receive, and `pos + n <= len`; `bytes` is a distinct Rust slice.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    (addr as usize as *mut u8).add(pos),
                    n,
                )
            };
            bytes = &bytes[n..];
            pos = 0;
        }
    }
}

struct QpInner {
    qps: QpState,
    qkey: u32,
    pkey_index: u16,
    port: u32,
    sig_all: bool,
    rq: Ring<RecvBuffer>,
    max_send_wr: u32,
    max_recv_wr: u32,
}

/// A UD queue pair of the provider `T`.
///
/// Shared with [`ARef`](crate::types::ARef): the provider keeps references to the QPs that
/// can receive (in its port tables); destroying the QP waits until they are all dropped.
///
/// # Invariants
///
/// `ib` is a `struct ib_qp` of a device of `T` that the core allocated with the size of
/// `Self`; `refs`, `released`, `inner` and `data` are initialised from the end of a
/// successful `create_qp` until `destroy_qp` has seen `refs` drop to zero. The QP's CQs stay
/// alive as long as it does (the core refuses to destroy a CQ that QPs use).
#[repr(C)]
pub struct Qp<T: Provider> {
    ib: Opaque<bindings::ib_qp>,
    refs: AtomicUsize,
    released: Opaque<bindings::completion>,
    inner: IrqSpinLock<QpInner>,
    qp_type: QpType,
    data: T::Qp,
}

// SAFETY: The mutable state is behind the spinlock or atomic; the core's part is only read
// for fields fixed at creation (number, type, CQs, device).
unsafe impl<T: Provider> Send for Qp<T> {}
// SAFETY: See above.
unsafe impl<T: Provider> Sync for Qp<T> {}

// SAFETY: `inc_ref` and `dec_ref` keep `refs` exact; the object is not freed at zero but
// `destroy_qp` waits for zero (by `released`) before the core frees it.
unsafe impl<T: Provider> AlwaysRefCounted for Qp<T> {
    fn inc_ref(&self) {
        self.refs.fetch_add(1, Ordering::Relaxed);
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns a reference, so the QP is alive.
        let this = unsafe { obj.as_ref() };
        if this.refs.fetch_sub(1, Ordering::Release) == 1 {
            fence(Ordering::Acquire);
            // SAFETY: `released` is initialised (type invariant); `destroy_qp` frees the QP
            // only after this completion, and touches nothing of `this` after waiting.
            unsafe { bindings::complete(this.released.get()) };
        }
    }
}

/// The user-visible parts of a UD message for [`Qp::deliver_ud`].
#[derive(Clone, Copy, Debug)]
pub struct UdDelivery {
    /// The sender's LID.
    pub slid: u32,
    /// The sender's QP number.
    pub src_qp: u32,
    /// The service level.
    pub sl: u8,
    /// The index, in the receiving port's table, of the P_Key the packet matched.
    pub pkey_index: u16,
    /// The immediate data, if any.
    pub imm: Option<u32>,
    /// The sender asked for a solicited event.
    pub solicited: bool,
}

impl<T: Provider> Qp<T> {
    /// # Safety
    ///
    /// `ptr` must be an initialised QP of `T` (see the type invariant) for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::ib_qp) -> &'a Self {
        // SAFETY: `ib` is the first field of the `repr(C)` `Self`, and the caller guarantees
        // the memory is an initialised `Self` for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn raw(&self) -> *mut bindings::ib_qp {
        self.ib.get()
    }

    /// The provider's data of the QP.
    pub fn data(&self) -> &T::Qp {
        &self.data
    }

    /// The QP's number.
    pub fn qp_num(&self) -> u32 {
        // SAFETY: The QP is alive (type invariant); `qp_num` is fixed at creation.
        unsafe { (*self.raw()).qp_num }
    }

    /// The QP's type.
    pub fn qp_type(&self) -> QpType {
        self.qp_type
    }

    /// The device the QP belongs to.
    pub fn device(&self) -> &Device<T> {
        // SAFETY: The QP is alive, so its device is (the core destroys a device's QPs before
        // unregistering it), and it is a device of `T` (type invariant).
        unsafe { Device::from_raw((*self.raw()).device) }
    }

    /// The QP's port: fixed for QP0/QP1, from `modify_qp` for UD QPs (0 before).
    pub fn port(&self) -> u32 {
        self.inner.lock().port
    }

    /// The QP's state.
    pub fn state(&self) -> QpState {
        self.inner.lock().qps
    }

    /// The QP's Q_Key.
    pub fn qkey(&self) -> u32 {
        self.inner.lock().qkey
    }

    fn send_cq(&self) -> &Cq {
        // SAFETY: The QP is alive, its send CQ is a CQ of this abstraction, and the core keeps
        // it alive while the QP uses it.
        unsafe { Cq::from_raw((*self.raw()).send_cq) }
    }

    fn recv_cq(&self) -> &Cq {
        // SAFETY: As for `send_cq`.
        unsafe { Cq::from_raw((*self.raw()).recv_cq) }
    }

    /// Reports the completion of the send `wr` of this QP with `status`: queues a completion
    /// on the send CQ if the request is signaled (or the QP signals all requests).
    pub fn complete_send(&self, wr: &SendWr<'_>, status: WcStatus) {
        let sig_all = self.inner.lock().sig_all;
        if !(sig_all || wr.signaled() || status != WcStatus::Success) {
            return;
        }
        let port = self.port();
        let _ = self.send_cq().complete(WorkCompletion {
            wr_id: wr.wr_id(),
            status: status.raw(),
            opcode: bindings::ib_wc_opcode_IB_WC_SEND,
            byte_len: wr.len() as u32,
            qp: QpPtr(self.raw()),
            src_qp: 0,
            slid: 0,
            wc_flags: 0,
            imm: 0,
            pkey_index: 0,
            sl: 0,
            port_num: port,
            solicited: false,
        });
    }

    /// Delivers a UD message (the concatenated `parts`) to this QP: takes the oldest posted
    /// receive, writes the payload after the [`GRH_LEN`] bytes reserved for the GRH, and
    /// queues the receive completion on the receive CQ.
    ///
    /// Fails with `EAGAIN` when the QP cannot receive (not in RTR/RTS) or has no receive
    /// posted; the message is then dropped.
    pub fn deliver_ud(&self, parts: &[&[u8]], d: &UdDelivery) -> Result {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let (buf, port) = {
            let mut inner = self.inner.lock();
            if !matches!(inner.qps, QpState::Rtr | QpState::Rts | QpState::Sqd) {
                return Err(EAGAIN);
            }
            (inner.rq.pop().ok_or(EAGAIN)?, inner.port)
        };
        let status = if GRH_LEN + len > buf.len() {
            WcStatus::LocalLengthError
        } else {
            buf.scatter(GRH_LEN, parts);
            WcStatus::Success
        };
        let mut wc_flags = 0;
        if d.imm.is_some() {
            wc_flags |= bindings::ib_wc_flags_IB_WC_WITH_IMM as c_int;
        }
        self.recv_cq().complete(WorkCompletion {
            wr_id: buf.wr_id,
            status: status.raw(),
            opcode: bindings::ib_wc_opcode_IB_WC_RECV,
            byte_len: (GRH_LEN + len) as u32,
            qp: QpPtr(self.raw()),
            src_qp: d.src_qp,
            slid: d.slid,
            wc_flags,
            imm: d.imm.unwrap_or(0),
            pkey_index: d.pkey_index,
            sl: d.sl,
            port_num: port,
            solicited: d.solicited,
        })?;
        if status == WcStatus::Success {
            Ok(())
        } else {
            Err(E2BIG)
        }
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a zeroed QP of the size of `Self` on a device of `T`.
    pub(crate) unsafe extern "C" fn create_qp_callback(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        if !udata.is_null() {
            return EOPNOTSUPP.to_errno();
        }
        // SAFETY: `attr` is valid for the call, by the op's contract.
        let attr = unsafe { &mut *attr };
        let qp_type = match attr.qp_type {
            bindings::ib_qp_type_IB_QPT_SMI => QpType::Smi,
            bindings::ib_qp_type_IB_QPT_GSI => QpType::Gsi,
            bindings::ib_qp_type_IB_QPT_UD => QpType::Ud,
            _ => return EOPNOTSUPP.to_errno(),
        };
        if !attr.srq.is_null() || attr.create_flags != 0 || !attr.rwq_ind_tbl.is_null() {
            return EOPNOTSUPP.to_errno();
        }
        let cap = &mut attr.cap;
        if cap.max_send_sge as usize > MAX_SGE
            || cap.max_recv_sge as usize > MAX_SGE
            || cap.max_recv_wr > 16384
            || cap.max_send_wr > 16384
            || cap.max_inline_data != 0
        {
            return EINVAL.to_errno();
        }
        let init = QpInit {
            qp_type,
            port: if qp_type == QpType::Ud {
                0
            } else {
                attr.port_num
            },
            max_send_wr: cap.max_send_wr,
            max_recv_wr: cap.max_recv_wr,
        };
        // SAFETY: The core passes a QP of one of `T`'s devices, whose `device` it has set and
        // which is alive during the call.
        let dev = unsafe { Device::<T>::from_raw((*qp).device) };
        let (qpn, data) = match T::create_qp(dev, &init) {
            Ok(v) => v,
            Err(e) => return e.to_errno(),
        };
        let rq = match Ring::new(init.max_recv_wr.max(1) as usize) {
            Ok(r) => r,
            Err(e) => return e.to_errno(),
        };
        let this = qp.cast::<Self>();
        let lock = crate::new_irq_spinlock!(
            QpInner {
                qps: QpState::Reset,
                qkey: 0,
                pkey_index: 0,
                port: init.port,
                sig_all: attr.sq_sig_type == bindings::ib_sig_type_IB_SIGNAL_ALL_WR,
                rq,
                max_send_wr: init.max_send_wr,
                max_recv_wr: init.max_recv_wr,
            },
            "opa_sw_qp"
        );
        // SAFETY: `this` is the core's zeroed allocation of the size of `Self`, whose fields
        // after `ib` are not initialised yet; the core does not move the QP.
        let Ok(()) = unsafe { PinInit::__pinned_init(lock, addr_of_mut!((*this).inner)) };
        // SAFETY: As above, for the remaining fields.
        unsafe {
            addr_of_mut!((*this).refs).write(AtomicUsize::new(1));
            bindings::init_completion(Opaque::raw_get(addr_of_mut!((*this).released)));
            addr_of_mut!((*this).qp_type).write(qp_type);
            addr_of_mut!((*this).data).write(data);
            (*qp).qp_num = qpn;
        }
        // SAFETY: The QP is initialised now.
        let me = unsafe { Self::from_raw(qp) };
        if let Err(e) = T::qp_ready(me) {
            // SAFETY: The QP was initialised above and is not known to the core's users yet.
            unsafe { Self::release(qp) };
            return e.to_errno();
        }
        0
    }

    /// Drops the initial reference, waits for the others, and drops what `create_qp`
    /// initialised.
    ///
    /// # Safety
    ///
    /// `qp` must be initialised, and this must be its only teardown.
    unsafe fn release(qp: *mut bindings::ib_qp) {
        let this = qp.cast::<Self>();
        // SAFETY: The QP is initialised (caller's guarantee) and the initial reference is
        // owned by the core's handle, which is being destroyed.
        unsafe {
            Self::dec_ref(NonNull::new_unchecked(this));
            bindings::wait_for_completion(Opaque::raw_get(addr_of_mut!((*this).released)));
            core::ptr::drop_in_place(addr_of_mut!((*this).inner));
            core::ptr::drop_in_place(addr_of_mut!((*this).data));
        }
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised QP of `T`.
    pub(crate) unsafe extern "C" fn destroy_qp_callback(
        qp: *mut bindings::ib_qp,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        {
            // SAFETY: The core destroys initialised QPs only.
            let me = unsafe { Self::from_raw(qp) };
            T::destroy_qp(me);
            me.inner.lock().qps = QpState::Err;
        }
        // SAFETY: The QP is initialised, and the core calls `destroy_qp` once.
        unsafe { Self::release(qp) };
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised QP of `T`.
    pub(crate) unsafe extern "C" fn modify_qp_callback(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: c_int,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        if !udata.is_null() {
            return EOPNOTSUPP.to_errno();
        }
        // SAFETY: The core modifies initialised QPs only.
        let me = unsafe { Self::from_raw(qp) };
        // SAFETY: `attr` is valid for the call, by the op's contract.
        let attr = unsafe { &*attr };
        let mask = mask as u32;
        let allowed = bindings::ib_qp_attr_mask_IB_QP_STATE
            | bindings::ib_qp_attr_mask_IB_QP_CUR_STATE
            | bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX
            | bindings::ib_qp_attr_mask_IB_QP_PORT
            | bindings::ib_qp_attr_mask_IB_QP_QKEY
            | bindings::ib_qp_attr_mask_IB_QP_SQ_PSN
            | bindings::ib_qp_attr_mask_IB_QP_EN_SQD_ASYNC_NOTIFY;
        if mask & !allowed != 0 {
            return EOPNOTSUPP.to_errno();
        }
        let dev = me.device();
        let mut inner = me.inner.lock();
        let new_state = if mask & bindings::ib_qp_attr_mask_IB_QP_STATE != 0 {
            match QpState::from_raw(attr.qp_state) {
                Some(s) => s,
                None => return EINVAL.to_errno(),
            }
        } else {
            inner.qps
        };
        if mask & bindings::ib_qp_attr_mask_IB_QP_PORT != 0 {
            if attr.port_num == 0 || attr.port_num > dev.port_count() {
                return EINVAL.to_errno();
            }
            if me.qp_type != QpType::Ud && attr.port_num != inner.port {
                return EINVAL.to_errno();
            }
        }
        if mask & bindings::ib_qp_attr_mask_IB_QP_PORT != 0 {
            inner.port = attr.port_num;
        }
        if mask & bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX != 0 {
            inner.pkey_index = attr.pkey_index;
        }
        if mask & bindings::ib_qp_attr_mask_IB_QP_QKEY != 0 {
            inner.qkey = attr.qkey;
        }
        if new_state == QpState::Reset {
            while inner.rq.pop().is_some() {}
        }
        inner.qps = new_state;
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised QP of `T`.
    pub(crate) unsafe extern "C" fn query_qp_callback(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        _mask: c_int,
        init: *mut bindings::ib_qp_init_attr,
    ) -> c_int {
        // SAFETY: The core queries initialised QPs only.
        let me = unsafe { Self::from_raw(qp) };
        // SAFETY: `attr` and `init` are valid for writing, by the op's contract.
        let (attr, init) = unsafe { (&mut *attr, &mut *init) };
        let inner = me.inner.lock();
        attr.qp_state = inner.qps.raw();
        attr.cur_qp_state = inner.qps.raw();
        attr.qkey = inner.qkey;
        attr.pkey_index = inner.pkey_index;
        attr.port_num = inner.port;
        attr.path_mtu = bindings::ib_mtu_IB_MTU_4096;
        attr.cap.max_send_wr = inner.max_send_wr;
        attr.cap.max_recv_wr = inner.max_recv_wr;
        attr.cap.max_send_sge = MAX_SGE as u32;
        attr.cap.max_recv_sge = MAX_SGE as u32;
        init.cap = attr.cap;
        init.port_num = inner.port;
        init.sq_sig_type = if inner.sig_all {
            bindings::ib_sig_type_IB_SIGNAL_ALL_WR
        } else {
            bindings::ib_sig_type_IB_SIGNAL_REQ_WR
        };
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised QP of `T` and a valid chain of work
    /// requests.
    pub(crate) unsafe extern "C" fn post_send_callback(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_send_wr,
        bad: *mut *const bindings::ib_send_wr,
    ) -> c_int {
        // SAFETY: The core posts to initialised QPs only.
        let me = unsafe { Self::from_raw(qp) };
        let mut cur = wr;
        while !cur.is_null() {
            // SAFETY: Every request of the chain of a UD QP is the `wr` of a valid
            // `struct ib_ud_wr` (the posting contract of UD QPs), valid during the call.
            let w = unsafe { SendWr::from_raw(cur) };
            let ret = if me.state() != QpState::Rts {
                Err(EINVAL)
            } else {
                w.check().and_then(|()| T::post_send(me, &w))
            };
            if let Err(e) = ret {
                // SAFETY: `bad` is valid for writing, by the op's contract.
                unsafe { *bad = cur };
                return e.to_errno();
            }
            // SAFETY: `cur` is valid (see above).
            cur = unsafe { (*cur).next };
        }
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised QP of `T` and a valid chain of work
    /// requests.
    pub(crate) unsafe extern "C" fn post_recv_callback(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_recv_wr,
        bad: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        // SAFETY: The core posts to initialised QPs only.
        let me = unsafe { Self::from_raw(qp) };
        let mut cur = wr;
        while !cur.is_null() {
            // SAFETY: `cur` is a valid request of the chain, during the call.
            let w = unsafe { &*cur };
            let ret = (|| -> Result {
                let n = usize::try_from(w.num_sge).map_err(|_| EINVAL)?;
                if n > MAX_SGE {
                    return Err(EINVAL);
                }
                let mut buf = RecvBuffer {
                    // SAFETY: Both members of the union are 64 bits wide; this reads whichever
                    // the poster wrote as its bits, which is all the completion returns.
                    wr_id: unsafe { w.__bindgen_anon_1.wr_id },
                    sges: [(0, 0); MAX_SGE],
                    num_sge: n,
                };
                for (i, s) in buf.sges[..n].iter_mut().enumerate() {
                    // SAFETY: `sg_list` has `num_sge` entries, by the posting contract.
                    let sge = unsafe { &*w.sg_list.add(i) };
                    *s = (sge.addr, sge.length);
                }
                let mut inner = me.inner.lock();
                if inner.qps == QpState::Reset || inner.qps == QpState::Err {
                    return Err(EINVAL);
                }
                // The buffers stay valid until completion or destruction: the invariant of
                // `RecvBuffer`, by the contract of `post_recv`.
                inner.rq.push(buf).map_err(|_| ENOMEM)
            })();
            if let Err(e) = ret {
                // SAFETY: `bad` is valid for writing, by the op's contract.
                unsafe { *bad = cur };
                return errno(Err(e));
            }
            cur = w.next;
        }
        0
    }
}

/// A UD send work request, during [`Provider::post_send`].
///
/// # Invariants
///
/// `wr` is a valid `struct ib_ud_wr` whose AH belongs to a device of this abstraction, and
/// whose scatter list gives kernel virtual addresses (virtual DMA) readable during the call.
pub struct SendWr<'a> {
    wr: &'a bindings::ib_ud_wr,
}

impl<'a> SendWr<'a> {
    /// # Safety
    ///
    /// `wr` must be the `wr` of a valid `struct ib_ud_wr` posted to a UD QP of this
    /// abstraction, valid for `'a`.
    unsafe fn from_raw(wr: *const bindings::ib_send_wr) -> Self {
        Self {
            // SAFETY: `wr` is the first field of `ib_ud_wr` (container_of with offset 0),
            // valid for `'a` by the caller's guarantee.
            wr: unsafe { &*wr.cast::<bindings::ib_ud_wr>() },
        }
    }

    fn check(&self) -> Result {
        let op = self.wr.wr.opcode;
        if op != bindings::ib_wr_opcode_IB_WR_SEND
            && op != bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM
        {
            return Err(EOPNOTSUPP);
        }
        let n = usize::try_from(self.wr.wr.num_sge).map_err(|_| EINVAL)?;
        if n > MAX_SGE || self.wr.ah.is_null() {
            return Err(EINVAL);
        }
        Ok(())
    }

    fn sges(&self) -> &[bindings::ib_sge] {
        let n = self.wr.wr.num_sge.clamp(0, MAX_SGE as c_int) as usize;
        if n == 0 {
            return &[];
        }
        // SAFETY: `sg_list` has `num_sge` valid entries during the call (type invariant).
        unsafe { core::slice::from_raw_parts(self.wr.wr.sg_list, n) }
    }

    fn wr_id(&self) -> u64 {
        // SAFETY: Both members of the union are 64 bits wide; the completion returns the bits.
        unsafe { self.wr.wr.__bindgen_anon_1.wr_id }
    }

    fn signaled(&self) -> bool {
        self.wr.wr.send_flags & bindings::ib_send_flags_IB_SEND_SIGNALED as c_int != 0
    }

    /// Whether the sender asked for a solicited event at the receiver.
    pub fn solicited(&self) -> bool {
        self.wr.wr.send_flags & bindings::ib_send_flags_IB_SEND_SOLICITED as c_int != 0
    }

    /// The immediate data, for a send with immediate.
    pub fn imm(&self) -> Option<u32> {
        if self.wr.wr.opcode == bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM {
            // SAFETY: `ex` holds the immediate data for this opcode.
            Some(u32::from_be(unsafe { self.wr.wr.ex.imm_data }))
        } else {
            None
        }
    }

    /// The destination.
    pub fn ah(&self) -> &AhAttr {
        // SAFETY: The AH of a posted request is an AH of this abstraction, alive at least
        // until the request completes (type invariant).
        unsafe { &(*self.wr.ah.cast::<Ah>()).attr }
    }

    /// The destination QP number.
    pub fn remote_qpn(&self) -> u32 {
        self.wr.remote_qpn
    }

    /// The Q_Key to send with: the request's, or the QP's if the request's has the high bit
    /// set (IBA 10.2.5).
    pub fn qkey<T: Provider>(&self, qp: &Qp<T>) -> u32 {
        if self.wr.remote_qkey & 0x8000_0000 != 0 {
            qp.qkey()
        } else {
            self.wr.remote_qkey
        }
    }

    /// The index of the P_Key to send with, in the sending port's table (QP0/QP1 give it per
    /// request; UD QPs use the QP's).
    pub fn pkey_index<T: Provider>(&self, qp: &Qp<T>) -> u16 {
        match qp.qp_type {
            QpType::Smi | QpType::Gsi => self.wr.pkey_index,
            QpType::Ud => qp.inner.lock().pkey_index,
        }
    }

    /// The total length of the message.
    pub fn len(&self) -> usize {
        self.sges().iter().map(|s| s.length as usize).sum()
    }

    /// Whether the message is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the message to `out` (which must have room: this never allocates).
    pub fn gather(&self, out: &mut KVec<u8>) -> Result {
        if out.capacity() - out.len() < self.len() {
            return Err(ENOSPC);
        }
        for sge in self.sges() {
            if sge.length == 0 {
                continue;
            }
            // SAFETY: By the type invariant, `addr` is a kernel virtual address of `length`
            // readable bytes during the call.
            let src = unsafe {
                core::slice::from_raw_parts(sge.addr as usize as *const u8, sge.length as usize)
            };
            out.extend_from_slice(src, GFP_ATOMIC)?;
        }
        Ok(())
    }
}

/// A UD destination (from `struct rdma_ah_attr`).
#[derive(Clone, Copy, Debug)]
pub struct AhAttr {
    /// The destination LID.
    pub dlid: u32,
    /// The service level.
    pub sl: u8,
    /// The source path bits.
    pub src_path_bits: u8,
    /// The static rate.
    pub static_rate: u8,
    /// The local port.
    pub port: u32,
    kind: bindings::rdma_ah_attr_type,
}

/// An address handle: the core's `struct ib_ah` and the destination.
///
/// # Invariants
///
/// `ib` is a `struct ib_ah` the core allocated with the size of `Self`, and `attr` is
/// initialised from a successful `create_ah` until `destroy_ah`.
#[repr(C)]
pub struct Ah {
    ib: Opaque<bindings::ib_ah>,
    attr: AhAttr,
}

impl Ah {
    /// # Safety
    ///
    /// Called by the IB core only, with a zeroed AH of the size of `Self`.
    pub(crate) unsafe extern "C" fn create_ah_callback(
        ah: *mut bindings::ib_ah,
        init: *mut bindings::rdma_ah_init_attr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `init` and its `ah_attr` are valid for the call, by the op's contract.
        let a = unsafe { &*(*init).ah_attr };
        if a.ah_flags & bindings::ib_ah_flags_IB_AH_GRH as u8 != 0 {
            // Global routing is not simulated.
            return EOPNOTSUPP.to_errno();
        }
        let dlid = match a.type_ {
            // SAFETY: The union member matches the type.
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_IB => unsafe {
                a.__bindgen_anon_1.ib.dlid.into()
            },
            // SAFETY: The union member matches the type.
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_OPA => unsafe {
                a.__bindgen_anon_1.opa.dlid
            },
            _ => return EINVAL.to_errno(),
        };
        // SAFETY: As for `dlid` (both members keep the path bits at the same place, but read
        // the one of the type).
        let src_path_bits = unsafe {
            if a.type_ == bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_IB {
                a.__bindgen_anon_1.ib.src_path_bits
            } else {
                a.__bindgen_anon_1.opa.src_path_bits
            }
        };
        let attr = AhAttr {
            dlid,
            sl: a.sl,
            src_path_bits,
            static_rate: a.static_rate,
            port: a.port_num,
            kind: a.type_,
        };
        // SAFETY: `ah` is the core's zeroed allocation of the size of `Ah`; `attr` is plain
        // data.
        unsafe { addr_of_mut!((*ah.cast::<Ah>()).attr).write(attr) };
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised AH.
    pub(crate) unsafe extern "C" fn query_ah_callback(
        ah: *mut bindings::ib_ah,
        out: *mut bindings::rdma_ah_attr,
    ) -> c_int {
        // SAFETY: The AH is initialised (type invariant of `Ah`, created by this code).
        let attr = unsafe { (*ah.cast::<Ah>()).attr };
        // SAFETY: `out` is valid for writing, by the op's contract.
        let out = unsafe { &mut *out };
        // SAFETY: A zeroed `rdma_ah_attr` is valid (no GRH, no sgid_attr).
        *out = unsafe { core::mem::MaybeUninit::zeroed().assume_init() };
        out.type_ = attr.kind;
        out.sl = attr.sl;
        out.static_rate = attr.static_rate;
        out.port_num = attr.port;
        if attr.kind == bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_OPA {
            out.__bindgen_anon_1.opa.dlid = attr.dlid;
            out.__bindgen_anon_1.opa.src_path_bits = attr.src_path_bits;
        } else {
            out.__bindgen_anon_1.ib.dlid = attr.dlid as u16;
            out.__bindgen_anon_1.ib.src_path_bits = attr.src_path_bits;
        }
        0
    }

    /// AHs own nothing.
    ///
    /// # Safety
    ///
    /// Called by the IB core only, as `destroy_ah`.
    pub(crate) unsafe extern "C" fn destroy_ah_callback(
        _ah: *mut bindings::ib_ah,
        _flags: u32,
    ) -> c_int {
        0
    }
}
