// SPDX-License-Identifier: GPL-2.0

//! MAD agents: management datagrams on a port's GSI queue pair.
//!
//! C header: [`include/rdma/ib_mad.h`](srctree/include/rdma/ib_mad.h)
//!
//! A [`Registration`] registers an agent with the MAD layer for one management class (and, for
//! vendor classes, one OUI) and a set of methods on one port. Every MAD of that class and
//! method that arrives on the port is given to its [`MadHandler`], with the [`Agent`] it
//! arrived for, from the moment the agent is registered until it is unregistered; the handler
//! can answer it with [`RecvMad::respond`]. The abstraction owns the address handles and send
//! buffers of the answers and frees them when the MAD layer is done with them.
//!
//! The handler is owned by the registration, so it must not own the registration back (that
//! would be a reference cycle, and dropping the last reference from a callback would wait for
//! that callback). What it keeps to send MADs later, outside its callbacks (traps from other
//! objects, for example), is a [`Sender`]: it does not keep the agent registered, and sends
//! nothing once the agent is being unregistered.

mod recv;
mod send;
mod sender;

pub use recv::RecvMad;
use send::{free_send, post_mad_with, send_unsolicited, Context, SendTo};
pub use sender::Sender;

use super::scope::DeviceScope;
use crate::{bindings, error::from_err_ptr, prelude::*, sync::Arc, types::Opaque};
use core::{ffi::c_void, marker::PhantomData, ops::Deref, ptr::NonNull};

/// Length of the header of a vendor MAD (common header, RMPP header, OUI): the part of a
/// response the MAD layer treats as header (`IB_MGMT_VENDOR_HDR`).
pub const VENDOR_HDR_LEN: usize = bindings::IB_MGMT_VENDOR_HDR as usize;

/// Length of an InfiniBand MAD (`sizeof(struct ib_mad)`), the largest MAD of base version 1.
pub const IB_MAD_LEN: usize = core::mem::size_of::<bindings::ib_mad>();

/// What an agent asks the MAD layer for (`struct ib_mad_reg_req`).
///
/// An agent sends and receives whole MADs, without RMPP (its RMPP version is 0): the MAD
/// layer's RMPP trusts the header's flags of what it sends, and a send that claims to be a
/// segment it did not make waits for an acknowledgement for ever, which the agent's
/// unregistration then waits for (`ib_send_rmpp_mad()`, `unregister_mad_agent()`).
pub struct AgentSpec<'a> {
    /// The management class.
    pub class: u8,
    /// The class version.
    pub class_version: u8,
    /// The vendor OUI (vendor classes 0x30-0x4f only; ignored otherwise).
    pub oui: [u8; 3],
    /// The methods (each below 128) whose unsolicited MADs the agent receives.
    pub methods: &'a [u8],
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

/// The receiver of an agent's MADs.
pub trait MadHandler: Send + Sync + Sized + 'static {
    /// A MAD the agent registered for arrived on `agent` (this handler's agent). It is freed
    /// when this returns; answer it (at most once) with [`RecvMad::respond`].
    ///
    /// Runs in process context (the work that polls the port's MAD completion queue, or the
    /// port's MAD workqueue for a MAD of the host itself), possibly on several CPUs at once.
    fn recv(&self, agent: &Agent<Self>, mad: &RecvMad<'_>);
}

/// A registered MAD agent (`struct ib_mad_agent`), as its handler and its [`Registration`] see
/// it.
///
/// # Invariants
///
/// `raw` is an agent registered by a [`Registration<H>`], whose `context` is the address of the
/// registration's `AgentInner<H>` and whose send and receive handlers are the trampolines of
/// `H`; it stays registered for the lifetime of any reference to `Self`.
#[repr(transparent)]
pub struct Agent<H: MadHandler> {
    raw: Opaque<bindings::ib_mad_agent>,
    _handler: PhantomData<H>,
}

// SAFETY: `&Agent` gives `&H` (which is `Sync`), sends (which the MAD layer allows from any
// thread) and reads fields the MAD layer set at registration and never changes.
unsafe impl<H: MadHandler> Sync for Agent<H> {}

/// What the MAD layer's callbacks of an agent get: the handler, the agent's [`Sender`], and the
/// scope of the device (which keeps the device, and so the MAD layer's port, until the agent is
/// unregistered).
#[pin_data]
struct AgentInner<H: MadHandler> {
    scope: DeviceScope,
    sender: Arc<Sender>,
    #[pin]
    handler: H,
}

impl<H: MadHandler> Agent<H> {
    /// # Safety
    ///
    /// `ptr` is an agent registered by a [`Registration<H>`], which stays registered for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::ib_mad_agent) -> &'a Self {
        // INVARIANT: As the caller guarantees.
        // SAFETY: `Agent` is a transparent wrapper of `ib_mad_agent` (`PhantomData` has no
        // size), valid for `'a` by the caller's guarantee.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn as_raw(&self) -> *mut bindings::ib_mad_agent {
        self.raw.get()
    }

    fn inner(&self) -> &AgentInner<H> {
        // SAFETY: By the type invariant `context` is the address of the registration's
        // `AgentInner<H>`, which is freed only after the agent is unregistered; the MAD layer
        // sets `context` at registration and never writes it again.
        unsafe { &*(*self.as_raw()).context.cast::<AgentInner<H>>() }
    }

    /// The handler of the agent.
    pub fn handler(&self) -> &H {
        &self.inner().handler
    }

    /// The device the agent is registered on.
    pub fn device(&self) -> &DeviceScope {
        &self.inner().scope
    }

    /// The port the agent is registered on.
    pub fn port(&self) -> u32 {
        // SAFETY: By the type invariant the agent is registered; `port_num` is set at
        // registration and never changes.
        unsafe { u32::from((*self.as_raw()).port_num) }
    }

    /// The agent's [`Sender`], for objects that send MADs outside the handler's callbacks
    /// (without keeping the agent registered): such an object keeps a clone.
    pub fn sender(&self) -> &Arc<Sender> {
        &self.inner().sender
    }

    /// Sends `mad` (a whole MAD: vendor header and data, its first byte the base version) to
    /// `dest`, without waiting for an answer (a trap, for example). Usable in atomic context.
    ///
    /// The address handle and the send buffer are freed when the send completes.
    pub fn send(&self, dest: &Dest, mad: &[u8]) -> Result {
        // SAFETY: By the type invariant the agent is registered (for as long as `self` is
        // borrowed, so during the call), and its send handler frees with `free_send`.
        unsafe { send_unsolicited(self.as_raw(), dest, mad) }
    }

    /// # Safety
    ///
    /// Called by the MAD layer only, when a send of this agent completed.
    unsafe extern "C" fn send_handler(
        _agent: *mut bindings::ib_mad_agent,
        wc: *mut bindings::ib_mad_send_wc,
    ) {
        // SAFETY: The MAD layer passes a valid send completion whose `send_buf` is one that
        // `RecvMad::respond`, `Agent::send` or `Sender::send` posted (the agent posts no other):
        // its `ah` is ours and, the send being complete, nothing uses either any more. Send
        // completions run in process context, where sleeping is fine: the work that polls the
        // port's completion queue (`ib_mad_send_done()`), the port's MAD workqueue (local
        // completions, timeouts) or the thread that unregisters (`cancel_mads()`).
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
        // SAFETY: The MAD layer calls an agent's receive handler only while the agent is
        // registered, and `ib_unregister_mad_agent()` waits for the calls in progress, so the
        // agent stays registered during the call. It was registered by `Registration::<H>` with
        // these trampolines.
        let this = unsafe { Agent::<H>::from_raw(agent) };
        let inner = this.inner();
        // A MAD may arrive before `Registration::register` has seen the agent's address: the
        // sender learns it here first, so that what the handler hands it can send at once.
        // SAFETY: The agent is registered (see above) and is the sender's agent.
        unsafe { inner.sender.publish(agent) };
        // SAFETY: The agent and the completion are valid during the callback, and the scope is
        // the agent's.
        let mad = unsafe { RecvMad::new(agent, wc, &inner.scope) };
        inner.handler.recv(this, &mad);
        // SAFETY: The receive completion is the handler's to free once handled, and `mad`
        // (the only user of it) is not used any more.
        unsafe { bindings::ib_free_recv_mad(wc) };
    }
}

/// A MAD agent's registration; derefs to the [`Agent`], and unregisters it when dropped.
///
/// Unregistering waits for the handler's callbacks in progress and cancels the MADs the agent
/// still has in flight, so the handler outlives every callback. The agent's [`Sender`]s stop
/// sending first. Dropping a registration sleeps.
///
/// Never drop a registration from a MAD handler of an agent of the same port: unregistering
/// flushes the port's MAD workqueue (`flush_workqueue()` in `ib_unregister_mad_agent()`) and
/// waits for the agent's sends in flight to complete, which the work that polls the port's
/// completion queue, running that handler, delivers: it waits for itself (a deadlock).
/// Hand the drop to a work item of another queue.
///
/// # Invariants
///
/// `agent` is a registered `struct ib_mad_agent` whose `context` is the address of `*inner`,
/// whose send and receive handlers are the trampolines of `H`, and whose `inner.sender` is the
/// agent's sender.
pub struct Registration<H: MadHandler> {
    agent: NonNull<bindings::ib_mad_agent>,
    inner: Pin<KBox<AgentInner<H>>>,
}

// SAFETY: The MAD layer may call the handler from any thread, which `H: Send + Sync` allows;
// the agent pointer is used to send and to unregister, which the MAD layer allows from any
// thread.
unsafe impl<H: MadHandler> Send for Registration<H> {}

// SAFETY: `&Registration` only gives `&Agent`, which is `Sync`.
unsafe impl<H: MadHandler> Sync for Registration<H> {}

impl<H: MadHandler> Registration<H> {
    /// Registers an agent for `spec` on `port` of `device`'s GSI QP, whose MADs go to the
    /// handler that `handler` initialises. The handler may get MADs before this returns.
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
                sender: Sender::new(port)?,
                handler <- handler,
            }? Error),
            GFP_KERNEL,
        )?;
        let context: *const AgentInner<H> = &*inner;
        // SAFETY: `device` is registered and `port` one of its ports (checked above); `req` is
        // a valid request that the MAD layer copies; the trampolines match the C handler
        // types; `context` points to the pinned handler, sender and scope, which outlive the
        // registration because `Drop` unregisters before the box is freed.
        let agent = from_err_ptr(unsafe {
            bindings::ib_register_mad_agent(
                device.as_raw(),
                port,
                bindings::ib_qp_type_IB_QPT_GSI,
                &mut req,
                0,
                Some(Agent::<H>::send_handler),
                Some(Agent::<H>::recv_handler),
                context.cast_mut().cast::<c_void>(),
                0,
            )
        })?;
        // `from_err_ptr` let a null pointer through: the MAD layer never returns one.
        let agent = NonNull::new(agent).ok_or(EINVAL)?;
        // SAFETY: The agent was just registered for this sender's port, and stays registered
        // until `Drop` has revoked the sender.
        unsafe { inner.sender.publish(agent.as_ptr()) };
        // INVARIANT: `agent` is registered with `context` the address of `*inner`, the
        // trampolines of `H`, and `inner.sender` was made for it.
        Ok(Self { agent, inner })
    }
}

impl<H: MadHandler> Deref for Registration<H> {
    type Target = Agent<H>;

    fn deref(&self) -> &Agent<H> {
        // SAFETY: By the type invariant the agent is registered by this registration, with
        // `H`'s trampolines, until `Drop`, which cannot run while `self` is borrowed.
        unsafe { Agent::from_raw(self.agent.as_ptr()) }
    }
}

impl<H: MadHandler> Drop for Registration<H> {
    fn drop(&mut self) {
        // No sender may use the agent once it is unregistered: they stop first.
        self.inner.sender.revoke();
        // SAFETY: By the type invariant the agent is registered; its senders no longer use it
        // (revoked above). `ib_unregister_mad_agent()` waits for the callbacks in progress, so
        // after it none runs and the handler can be freed with `self`.
        unsafe { bindings::ib_unregister_mad_agent(self.agent.as_ptr()) };
    }
}
