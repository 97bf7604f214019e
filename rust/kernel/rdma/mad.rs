// SPDX-License-Identifier: GPL-2.0

//! MAD agents: management datagrams on a port's GSI queue pair.
//!
//! C header: [`include/rdma/ib_mad.h`](srctree/include/rdma/ib_mad.h)
//!
//! An [`Agent`] registers with the MAD layer for one management class (and, for vendor
//! classes, one OUI) and a set of methods on one port. Every MAD of that class and method that
//! arrives on the port is given to its [`MadHandler`], which can answer it with
//! [`RecvMad::respond`]. The abstraction owns the address handles and send buffers of the
//! answers and frees them when the MAD layer is done with them.

use super::scope::DeviceScope;
use crate::{
    bindings,
    error::{from_err_ptr, to_result},
    prelude::*,
};
use core::{ffi::c_void, ptr::NonNull};

/// Length of the header of a vendor MAD (common header, RMPP header, OUI): the part of a
/// response the MAD layer treats as header (`IB_MGMT_VENDOR_HDR`).
pub const VENDOR_HDR_LEN: usize = bindings::IB_MGMT_VENDOR_HDR as usize;

/// Length of an InfiniBand MAD (`sizeof(struct ib_mad)`), the largest MAD of base version 1.
pub const IB_MAD_LEN: usize = core::mem::size_of::<bindings::ib_mad>();

/// What an agent asks the MAD layer for (`struct ib_mad_reg_req`).
pub struct AgentSpec<'a> {
    /// The management class.
    pub class: u8,
    /// The class version.
    pub class_version: u8,
    /// The vendor OUI (vendor classes 0x30-0x4f only; ignored otherwise).
    pub oui: [u8; 3],
    /// The methods (each below 128) whose unsolicited MADs the agent receives.
    pub methods: &'a [u8],
    /// The RMPP version (0 for none).
    pub rmpp_version: u8,
}

/// The receiver of an agent's MADs.
pub trait MadHandler: Send + Sync + 'static {
    /// A MAD the agent registered for arrived. It is freed when this returns; answer it (at
    /// most once) with [`RecvMad::respond`].
    fn recv(&self, mad: &RecvMad<'_>);
}

/// A registered MAD agent; unregisters when dropped.
///
/// Unregistering waits for the handler's callbacks in progress and cancels the MADs the agent
/// still has in flight, so the handler outlives every callback.
///
/// # Invariants
///
/// `agent` is a registered `struct ib_mad_agent` whose `context` is the address of `*inner`,
/// and whose send and receive handlers are the trampolines of `H`.
pub struct Agent<H: MadHandler> {
    agent: NonNull<bindings::ib_mad_agent>,
    inner: Pin<KBox<AgentInner<H>>>,
}

/// What the MAD layer's callbacks of an agent get: the handler, and the scope of the device
/// (which keeps the device, and so the MAD layer's port, until the agent is unregistered).
#[pin_data]
struct AgentInner<H: MadHandler> {
    scope: DeviceScope,
    #[pin]
    handler: H,
}

// SAFETY: The MAD layer may call the handler from any thread, which `H: Send + Sync` allows;
// the agent pointer is only used to unregister, which the MAD layer allows from any thread.
unsafe impl<H: MadHandler> Send for Agent<H> {}

// SAFETY: `&Agent` only gives `&H`, which is `Sync`.
unsafe impl<H: MadHandler> Sync for Agent<H> {}

impl<H: MadHandler> Agent<H> {
    /// Registers an agent for `spec` on `port` of `device`'s GSI QP, whose MADs go to the
    /// handler that `handler` initialises.
    ///
    /// Fails with `EINVAL` if the port is not one of the device's, if a method is not below 128,
    /// or if another agent has registered the same class, version, OUI and method on the port
    /// already (the MAD layer logs which).
    pub fn register(
        device: &DeviceScope,
        port: u32,
        spec: &AgentSpec<'_>,
        handler: impl PinInit<H, Error>,
    ) -> Result<Self> {
        if !device.is_port_valid(port) {
            return Err(EINVAL);
        }
        // SAFETY: All-zero is a valid `ib_mad_reg_req` (no methods).
        let mut req: bindings::ib_mad_reg_req = unsafe { core::mem::zeroed() };
        req.mgmt_class = spec.class;
        req.mgmt_class_version = spec.class_version;
        req.oui = spec.oui;
        let bits = 8 * core::mem::size_of::<core::ffi::c_ulong>();
        for &method in spec.methods {
            let m = usize::from(method);
            if m >= bindings::IB_MGMT_MAX_METHODS as usize {
                return Err(EINVAL);
            }
            req.method_mask[m / bits] |= 1 << (m % bits);
        }
        let inner = KBox::pin_init(
            try_pin_init!(AgentInner {
                scope: device.clone(),
                handler <- handler,
            }? Error),
            GFP_KERNEL,
        )?;
        let context: *const AgentInner<H> = &*inner;
        // SAFETY: `device` is registered and `port` one of its ports (checked above); `req` is
        // a valid request that the MAD layer copies; the trampolines match the C handler
        // types; `context` points to the pinned handler and scope, which outlive the
        // registration because `Drop` unregisters before the box is freed.
        let agent = from_err_ptr(unsafe {
            bindings::ib_register_mad_agent(
                device.as_raw(),
                port,
                bindings::ib_qp_type_IB_QPT_GSI,
                &mut req,
                spec.rmpp_version,
                Some(Self::send_handler),
                Some(Self::recv_handler),
                context.cast_mut().cast::<c_void>(),
                0,
            )
        })?;
        // `from_err_ptr` let a null pointer through: the MAD layer never returns one.
        let agent = NonNull::new(agent).ok_or(EINVAL)?;
        Ok(Self { agent, inner })
    }

    /// The handler of the agent.
    pub fn handler(&self) -> &H {
        &self.inner.handler
    }

    /// The device the agent is registered on.
    pub fn device(&self) -> &DeviceScope {
        &self.inner.scope
    }

    /// The port the agent is registered on.
    pub fn port(&self) -> u32 {
        // SAFETY: By the type invariant the agent is registered; `port_num` is set at
        // registration and never changes.
        unsafe { u32::from((*self.agent.as_ptr()).port_num) }
    }

    /// # Safety
    ///
    /// Called by the MAD layer only, when a send of this agent completed.
    unsafe extern "C" fn send_handler(
        _agent: *mut bindings::ib_mad_agent,
        wc: *mut bindings::ib_mad_send_wc,
    ) {
        // SAFETY: The MAD layer passes a valid send completion whose `send_buf` is one that
        // `RecvMad::respond` or `Agent::send` posted: its `ah` is ours and nothing uses either
        // any more. Send completions run in the MAD layer's workqueue, where sleeping is fine.
        unsafe { free_send((*wc).send_buf, Context::Process) };
    }

    /// # Safety
    ///
    /// Called by the MAD layer only, with a MAD for this agent.
    unsafe extern "C" fn recv_handler(
        agent: *mut bindings::ib_mad_agent,
        _send_buf: *mut bindings::ib_mad_send_buf,
        wc: *mut bindings::ib_mad_recv_wc,
    ) {
        if wc.is_null() {
            return;
        }
        // SAFETY: `context` is the agent's `AgentInner` (type invariant), alive while the agent
        // is registered, which it is while its callbacks run.
        let inner = unsafe { &*(*agent).context.cast::<AgentInner<H>>() };
        // INVARIANT: The agent and the completion are valid during the callback.
        let mad = RecvMad {
            agent,
            wc,
            scope: &inner.scope,
        };
        inner.handler.recv(&mad);
        // SAFETY: The receive completion is ours to free once handled, and `mad` (the only
        // user of it) is not used any more.
        unsafe { bindings::ib_free_recv_mad(wc) };
    }
}

/// Where an unsolicited MAD goes.
pub struct Dest {
    /// Destination LID.
    pub dlid: u32,
    /// Service level.
    pub sl: u8,
    /// Index of the P_Key to send with, in the port's table.
    pub pkey_index: u16,
    /// Destination QP (1 for the GSI).
    pub remote_qpn: u32,
}

impl<H: MadHandler> Agent<H> {
    /// Sends `mad` (a whole MAD: vendor header and data, its first byte the base version) to
    /// `dest`, without waiting for an answer (a trap, for example). Usable in atomic context.
    ///
    /// The address handle and the send buffer are freed when the send completes.
    pub fn send(&self, dest: &Dest, mad: &[u8]) -> Result {
        let data_len = mad.len().checked_sub(VENDOR_HDR_LEN).ok_or(EINVAL)?;
        let data_len = i32::try_from(data_len).map_err(|_| EINVAL)?;
        let base_version = *mad.first().ok_or(EINVAL)?;
        let agent = self.agent.as_ptr();
        // SAFETY: All-zero is a valid `rdma_ah_attr`, which the helpers then fill in.
        let mut attr: bindings::rdma_ah_attr = unsafe { core::mem::zeroed() };
        // SAFETY: By the type invariant the agent is registered: its device, port, QP and PD
        // are valid. `attr` is a local.
        let ah = from_err_ptr(unsafe {
            let port = u32::from((*agent).port_num);
            attr.type_ = bindings::rdma_ah_find_type((*agent).device, port);
            bindings::rdma_ah_set_dlid(&mut attr, dest.dlid);
            bindings::rdma_ah_set_sl(&mut attr, dest.sl);
            bindings::rdma_ah_set_port_num(&mut attr, port);
            bindings::rdma_create_ah((*(*agent).qp).pd, &mut attr, 0)
        })?;
        // SAFETY: As above; the lengths describe `mad`.
        let buf = from_err_ptr(unsafe {
            bindings::ib_create_send_mad(
                agent,
                dest.remote_qpn,
                dest.pkey_index,
                0,
                VENDOR_HDR_LEN as i32,
                data_len,
                bindings::GFP_ATOMIC,
                base_version,
            )
        });
        let buf = match buf {
            Ok(buf) => buf,
            Err(e) => {
                // SAFETY: `ah` is ours and unused; the context may be atomic.
                unsafe { destroy_ah(ah, Context::Atomic) };
                return Err(e);
            }
        };
        // SAFETY: `buf` is a fresh send buffer whose `mad` holds `mad.len()` bytes.
        let ret = unsafe {
            core::ptr::copy_nonoverlapping(mad.as_ptr(), (*buf).mad.cast::<u8>(), mad.len());
            (*buf).ah = ah;
            to_result(bindings::ib_post_send_mad(buf, core::ptr::null_mut()))
        };
        if ret.is_err() {
            // SAFETY: The post failed, so the MAD layer does not hold `buf`; `ah` is ours. The
            // context may be atomic.
            unsafe { free_send(buf, Context::Atomic) };
        }
        ret
    }
}

impl<H: MadHandler> Drop for Agent<H> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the agent is registered; after this no callback runs,
        // so the handler can be freed with `self`.
        unsafe { bindings::ib_unregister_mad_agent(self.agent.as_ptr()) };
    }
}

/// Whether the caller of [`free_send`] or [`destroy_ah`] may sleep.
#[derive(Clone, Copy)]
enum Context {
    /// Process context: the device may sleep to destroy the address handle.
    Process,
    /// Possibly atomic (a send from a softirq or under a spinlock).
    Atomic,
}

/// Destroys an address handle of ours.
///
/// # Safety
///
/// `ah` is an address handle from `rdma_create_ah` or `ib_create_ah_from_wc` that nothing uses
/// any more; if `context` is [`Context::Process`], the caller may sleep.
unsafe fn destroy_ah(ah: *mut bindings::ib_ah, context: Context) {
    let flags = match context {
        Context::Process => bindings::rdma_destroy_ah_flags_RDMA_DESTROY_AH_SLEEPABLE,
        Context::Atomic => 0,
    };
    // SAFETY: As the caller guarantees; without `RDMA_DESTROY_AH_SLEEPABLE` the device does not
    // sleep.
    unsafe { bindings::rdma_destroy_ah_user(ah, flags, core::ptr::null_mut()) };
}

/// Frees a send buffer of ours and its address handle.
///
/// # Safety
///
/// `buf` is a send buffer from `ib_create_send_mad` that the MAD layer no longer uses, whose
/// `ah` is null or an address handle nothing else uses; if `context` is [`Context::Process`],
/// the caller may sleep.
unsafe fn free_send(buf: *mut bindings::ib_mad_send_buf, context: Context) {
    // SAFETY: `buf` is valid (the caller guarantees it).
    let ah = unsafe { (*buf).ah };
    if !ah.is_null() {
        // SAFETY: As the caller guarantees.
        unsafe { destroy_ah(ah, context) };
    }
    // SAFETY: As the caller guarantees; `ib_free_send_mad` does not sleep.
    unsafe { bindings::ib_free_send_mad(buf) };
}

/// A received MAD, while its handler runs.
///
/// # Invariants
///
/// `agent` is the registered agent the MAD arrived for and `wc` its receive completion, both
/// valid for `'a`.
pub struct RecvMad<'a> {
    agent: *mut bindings::ib_mad_agent,
    wc: *mut bindings::ib_mad_recv_wc,
    scope: &'a DeviceScope,
}

impl RecvMad<'_> {
    /// The received bytes of the MAD that the MAD layer's buffer holds (for an OPA port up to
    /// 2048, without the GRH).
    ///
    /// That is `mad_len` bytes, but never more than one segment (`mad_seg_size`): the buffer
    /// holds one segment, and a reassembled RMPP MAD is longer than its first segment.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: By the type invariant `wc` is valid; `recv_buf.mad` points to a buffer of at
        // least `mad_seg_size` bytes (the MAD layer allocates every receive buffer with the
        // port's largest MAD size, and `mad_seg_size` is at most that), of which the first
        // `mad_len` were received; it is unchanged until the completion is freed after the
        // handler.
        unsafe {
            let wc = &*self.wc;
            let len = usize::try_from(wc.mad_len).unwrap_or(0);
            let seg = wc.mad_seg_size;
            if wc.recv_buf.__bindgen_anon_1.mad.is_null() {
                return &[];
            }
            core::slice::from_raw_parts(wc.recv_buf.__bindgen_anon_1.mad.cast::<u8>(), len.min(seg))
        }
    }

    /// Copies the MAD into `out` and fills the rest of `out` with zeros: the MAD as a kernel
    /// agent that reads a whole MAD sees it.
    ///
    /// Managers may send a MAD trimmed to its header and attribute (opa-fm does), and an
    /// InfiniBand-sized MAD (base version 1) is 256 bytes; the MAD layer's receive buffers are
    /// zero-filled to the port's largest MAD, so the C agents read the missing tail as zeros.
    /// Returns the number of bytes that were received.
    pub fn read_padded(&self, out: &mut [u8]) -> usize {
        let b = self.bytes();
        let n = b.len().min(out.len());
        let (head, tail) = out.split_at_mut(n);
        head.copy_from_slice(&b[..n]);
        tail.fill(0);
        n
    }

    /// The device the MAD arrived on, whose per-device objects the handler may make.
    pub fn device(&self) -> &DeviceScope {
        self.scope
    }

    /// The port the MAD arrived on.
    pub fn port(&self) -> u32 {
        // SAFETY: By the type invariant the agent is valid; its port never changes.
        u32::from(unsafe { (*self.agent).port_num })
    }

    /// The LID the MAD came from.
    pub fn slid(&self) -> u32 {
        // SAFETY: By the type invariant `wc` and its work completion are valid.
        unsafe { (*(*self.wc).wc).slid }
    }

    /// Sends `rsp` (a whole MAD: vendor header and data) back to where this MAD came from,
    /// with the same P_Key index.
    ///
    /// An answer longer than an InfiniBand MAD (256 bytes) goes in an OPA-sized send buffer,
    /// whatever base version its header carries: an agent that copies the request's header
    /// into its answer (as every VEMA agent does) answers an InfiniBand-version request that
    /// way, and the MAD layer sends the whole buffer.
    ///
    /// The address handle and the send buffer are freed when the send completes.
    pub fn respond(&self, rsp: &[u8]) -> Result {
        let data_len = rsp.len().checked_sub(VENDOR_HDR_LEN).ok_or(EINVAL)?;
        let data_len = i32::try_from(data_len).map_err(|_| EINVAL)?;
        let base_version = if rsp.len() > IB_MAD_LEN {
            bindings::OPA_MGMT_BASE_VERSION as u8
        } else {
            *rsp.first().ok_or(EINVAL)?
        };
        // SAFETY: By the type invariant the agent and the completion are valid; the agent's QP
        // and PD exist while it is registered; the GRH pointer is the received one (or null).
        let ah = from_err_ptr(unsafe {
            let wc = &*self.wc;
            bindings::ib_create_ah_from_wc(
                (*(*self.agent).qp).pd,
                wc.wc,
                wc.recv_buf.grh,
                u32::from((*self.agent).port_num),
            )
        })?;
        // SAFETY: As above; the lengths describe `rsp`, which has its header.
        let buf = from_err_ptr(unsafe {
            let wc = &*(*self.wc).wc;
            bindings::ib_create_send_mad(
                self.agent,
                wc.src_qp,
                wc.pkey_index,
                0,
                VENDOR_HDR_LEN as i32,
                data_len,
                bindings::GFP_KERNEL,
                base_version,
            )
        });
        let buf = match buf {
            Ok(buf) => buf,
            Err(e) => {
                // SAFETY: `ah` is ours and unused; the handler runs in process context.
                unsafe { destroy_ah(ah, Context::Process) };
                return Err(e);
            }
        };
        // SAFETY: `buf` is a fresh send buffer whose `mad` holds at least `rsp.len()` bytes
        // (header plus data as asked); nothing else uses it yet.
        let ret = unsafe {
            core::ptr::copy_nonoverlapping(rsp.as_ptr(), (*buf).mad.cast::<u8>(), rsp.len());
            (*buf).ah = ah;
            to_result(bindings::ib_post_send_mad(buf, core::ptr::null_mut()))
        };
        if ret.is_err() {
            // SAFETY: The post failed, so the MAD layer does not hold `buf`; `ah` is ours. The
            // handler runs in process context.
            unsafe { free_send(buf, Context::Process) };
        }
        ret
    }
}
