// SPDX-License-Identifier: GPL-2.0-only

//! The VEMA agent of one OPA port: receives the EM's MADs, answers them with
//! [`vema_agent::process`] under the port's lock, and keeps the port's virtual ports, each
//! with its VNIC netdev.
//!
//! Locking: the port's [`Mutex`] serialises the agent (and so every change of configuration).
//! What transmit reads per packet (the plan made of the configuration, the MAC table) are
//! immutable objects per vport behind RCU pointers: the agent builds a new one off any lock
//! and publishes it whole, and transmit takes no lock. The rest of a vport's state (the info the
//! EM reads, trap rate limiting) sits in the vport's [`IrqSpinLock`], which the netdev
//! callbacks take too. The netdev callbacks never take the port's mutex (the agent holds it
//! while it takes RTNL to change the MAC and the MTU).
//!
//! The vports themselves are in [`crate::vema_backend`] (what the agent changes) and
//! [`crate::vport`] (what their netdevs do).

use crate::trap_sink::{trap_pkey_index, TrapSink};
use crate::vema_agent::{self, RESPONSE_LEN};
use crate::vema_backend::{Backend, PortState};
use crate::wire::{
    mad::{
        INTEL_OUI, METHOD_GET, METHOD_SET, OPA_EMA_CLASS_VERSION, OPA_MGMT_CLASS_INTEL_EMA,
        OPA_MGMT_MAD_SIZE,
    },
    vema_info::ClassPortInfo,
};
use kernel::{
    new_irq_spinlock, new_mutex,
    prelude::*,
    rdma::{
        device::Device,
        mad::{Agent, AgentSpec, MadHandler, RecvMad, Registration},
        scope::DeviceScope,
    },
    sync::{Arc, IrqSpinLock, Mutex},
};

/// The state of a port's agent and the buffer a trimmed request is padded in.
pub(crate) struct Locked {
    pub(crate) state: PortState,
    /// A request that arrived shorter than a whole MAD, zero-filled past what arrived (see
    /// [`RecvMad::read_padded`]).
    pub(crate) req: KBox<[u8; OPA_MGMT_MAD_SIZE]>,
}

/// The MAD handler of a port's VEMA agent.
///
/// It answers every MAD that reaches it, from the registration of its agent on: the vports it
/// creates send their traps through the agent's [`kernel::rdma::mad::Sender`], which does not
/// keep the agent registered, so nothing here owns the agent.
#[pin_data]
pub(crate) struct VemaPort {
    pub(crate) port: u32,
    #[pin]
    pub(crate) locked: Mutex<Locked>,
    /// Shared with the port's vports, which send the traps.
    pub(crate) trap_sink: Arc<IrqSpinLock<TrapSink>>,
}

impl VemaPort {
    /// The port's P_Key table changed: finds the P_Key index of traps again.
    pub(crate) fn pkeys_changed(&self, device: &Device) {
        let index = trap_pkey_index(device, self.port);
        self.trap_sink.lock().pkey_index = index;
    }

    /// `opa_vnic_event()`: the port went up or down; so does the carrier of its vports.
    pub(crate) fn set_carrier(&self, on: bool) {
        let locked = self.locked.lock();
        for v in locked.state.vports.iter() {
            v.netdev.netdev().set_carrier(on);
        }
    }

    /// Removes the vports while the agent is still registered, as `vema_unregister()` does
    /// before it unregisters the agent: their netdevs' last traps (link down) still go out.
    /// The agent goes on answering until it is unregistered; a vport a Set creates after
    /// this is removed with the handler.
    pub(crate) fn remove_vports(&self) {
        let vports = core::mem::take(&mut self.locked.lock().state.vports);
        drop(vports);
    }
}

impl MadHandler for VemaPort {
    fn recv(&self, agent: &Agent<Self>, mad: &RecvMad<'_>) {
        // The base version of the answer is the request's (its first byte, 0 if it arrived
        // empty, as the zero-filled copy below reads it).
        let base_version = mad.bytes().first().copied().unwrap_or(0);
        // The answer is built in the send buffer itself, which the MAD layer zeroed, under the
        // port's lock, which is released before the answer is sent (as the C agent does): the
        // manager's next request, which the answer lets it send, does not find it held.
        let mut unanswerable = None;
        let sent = mad.respond_with(RESPONSE_LEN, Some(base_version), |rsp| {
            let mut guard = self.locked.lock();
            let Locked { state, req } = &mut *guard;
            // A request may arrive trimmed to its attribute (as opa-fm sends them) or at the
            // size of an InfiniBand MAD: it is read as the C agent reads it, zero-filled to a
            // whole MAD. A whole one is read where it arrived.
            let req: &[u8] = match mad.bytes() {
                whole if whole.len() >= OPA_MGMT_MAD_SIZE => whole,
                _ => {
                    mad.read_padded(&mut req[..]);
                    &req[..]
                }
            };
            let mut backend = Backend {
                state,
                device: mad.device(),
                trap_sink: &self.trap_sink,
                sender: agent.sender(),
            };
            vema_agent::process_zeroed(&mut backend, req, rsp).map_err(|e| {
                unanswerable = Some(e);
                EINVAL
            })?;
            Ok(())
        });
        match (sent, unanswerable) {
            (_, Some(e)) => pr_debug!(
                "port {}: unanswerable MAD from LID {:#x}: {:?}\n",
                self.port,
                mad.slid(),
                e
            ),
            (Err(e), None) => pr_warn!(
                "port {}: cannot answer LID {:#x}: {:?}\n",
                self.port,
                mad.slid(),
                e
            ),
            (Ok(()), None) => {}
        }
    }
}

/// Registers the VEMA agent of `port` of `device`.
pub(crate) fn register(device: &DeviceScope, port: u32) -> Result<Registration<VemaPort>> {
    // Without RMPP, as every agent of the kernel crate (C registers with it): no VEMA MAD is
    // segmented, and an RMPP request reaches the agent as one MAD and is answered as one,
    // where with RMPP the requester got the core's ACK and the next unload hung.
    let spec = AgentSpec {
        class: OPA_MGMT_CLASS_INTEL_EMA,
        class_version: OPA_EMA_CLASS_VERSION,
        oui: INTEL_OUI,
        methods: &[METHOD_GET, METHOD_SET],
    };
    let req = KBox::new([0u8; OPA_MGMT_MAD_SIZE], GFP_KERNEL)?;
    let trap_sink = Arc::pin_init(
        new_irq_spinlock!(TrapSink {
            lid: 0,
            sl: 0,
            tid: 0,
            pkey_index: trap_pkey_index(device, port),
        }),
        GFP_KERNEL,
    )?;
    // Inside `try_pin_init!` a field's name stands for the initialised field.
    let opa_port = port;
    Registration::register(
        device,
        port,
        &spec,
        try_pin_init!(VemaPort {
            port,
            locked <- new_mutex!(Locked {
                state: PortState {
                    port: opa_port,
                    class_port_info: ClassPortInfo::ZERO,
                    vports: KVec::new(),
                },
                req,
            }),
            trap_sink,
        }),
    )
}
