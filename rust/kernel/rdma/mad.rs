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

mod recv;
mod send;

pub use recv::RecvMad;
use send::{free_send, post_mad, post_mad_with, Context, SendTo};

use super::scope::DeviceScope;
use crate::{bindings, error::from_err_ptr, prelude::*};
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
        // SAFETY: The agent and the completion are valid during the callback, and the scope is
        // the agent's.
        let mad = unsafe { RecvMad::new(agent, wc, &inner.scope) };
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
        let to = SendTo {
            ah,
            remote_qpn: dest.remote_qpn,
            pkey_index: dest.pkey_index,
            base_version,
            context: Context::Atomic,
        };
        // SAFETY: The agent is registered (type invariant) and its send handler frees with
        // `free_send`; `ah` was just made on its PD; the context may be atomic, as said.
        unsafe { post_mad(agent, to, mad) }
    }
}

impl<H: MadHandler> Drop for Agent<H> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the agent is registered; after this no callback runs,
        // so the handler can be freed with `self`.
        unsafe { bindings::ib_unregister_mad_agent(self.agent.as_ptr()) };
    }
}
