// SPDX-License-Identifier: GPL-2.0

//! The sending side of an agent, for what sends MADs outside its handler's callbacks:
//! [`Sender`].

use super::{send::send_unsolicited, Dest};
use crate::{
    bindings,
    prelude::*,
    sync::{rcu, Arc},
};
use core::{
    ptr::{self, NonNull},
    sync::atomic::{AtomicPtr, Ordering},
};

/// Sends unsolicited MADs (traps) through an agent while it is registered, and nothing once
/// its [`super::Registration`] is being dropped.
///
/// A handler keeps the agent's sender ([`super::Agent::sender`]) in what it makes (a netdev
/// that sends traps, for example) instead of the agent itself: the sender does not keep the
/// agent registered, so there is no reference cycle through the handler, and whatever holds
/// it may outlive the agent.
///
/// # Invariants
///
/// `agent` is null (the agent's address is not known yet), `Sender::revoked` (its
/// registration is being dropped), or a registered agent. It changes from null to the agent
/// once, then to `revoked()` once, and an RCU grace period passes between the latter and the
/// agent's unregistration.
pub struct Sender {
    agent: AtomicPtr<bindings::ib_mad_agent>,
    port: u32,
}

impl Sender {
    /// A sender for the agent about to be registered on `port`.
    pub(super) fn new(port: u32) -> Result<Arc<Self>> {
        // INVARIANT: `agent` starts null.
        Ok(Arc::new(
            Self {
                agent: AtomicPtr::new(ptr::null_mut()),
                port,
            },
            GFP_KERNEL,
        )?)
    }

    /// The value of `agent` once revoked: not null, never the address of an agent.
    fn revoked() -> *mut bindings::ib_mad_agent {
        NonNull::dangling().as_ptr()
    }

    /// Tells the sender the address of its agent; nothing if it knows it already or was
    /// revoked.
    ///
    /// # Safety
    ///
    /// `agent` is the sender's agent, registered, and stays registered until [`Self::revoke`]
    /// has returned.
    pub(super) unsafe fn publish(&self, agent: *mut bindings::ib_mad_agent) {
        // INVARIANT: From null to the registered agent, which the caller guarantees stays
        // registered until `revoke` has returned (after its grace period); otherwise
        // unchanged. `Release` so that a sender that loads it sees the agent initialised.
        let _ = self.agent.compare_exchange(
            ptr::null_mut(),
            agent,
            Ordering::Release,
            Ordering::Relaxed,
        );
    }

    /// Stops the sender: when this returns, no send uses the agent any more, and none will.
    /// Sleeps (`synchronize_rcu()`); never called in a read-side section.
    pub(super) fn revoke(&self) {
        // INVARIANT: To `revoked()`, then a grace period before the caller unregisters.
        self.agent.store(Self::revoked(), Ordering::Release);
        // Every send that read the agent did so in a read-side section begun before this
        // point; a send whose section begins later reads `revoked()`.
        rcu::synchronize();
    }

    /// The port of the agent.
    pub fn port(&self) -> u32 {
        self.port
    }

    /// Sends `mad` (a whole MAD: vendor header and data, its first byte the base version) to
    /// `dest`, without waiting for an answer, as [`super::Agent::send`] does. Usable in atomic
    /// context. Fails with `ENODEV` if the agent is being unregistered (or, before its first
    /// MAD, not registered yet).
    pub fn send(&self, dest: &Dest, mad: &[u8]) -> Result {
        // The agent is used within this read-side section, which `revoke` waits for.
        let _guard = rcu::Guard::new();
        let agent = self.agent.load(Ordering::Acquire);
        if agent.is_null() || agent == Self::revoked() {
            return Err(ENODEV);
        }
        // SAFETY: By the type invariant `agent` is a registered agent, and it stays registered
        // until after a grace period that begins after `revoke`'s store, which this section
        // (begun before that store, or it would have read `revoked()`) ends first. It is the
        // agent of a `Registration`, whose send handler frees with `free_send`.
        unsafe { send_unsolicited(agent, dest, mad) }
    }
}
