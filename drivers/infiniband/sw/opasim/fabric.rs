// SPDX-License-Identifier: GPL-2.0-only

//! The simulated switch: every port of every opasim device is attached to it, and it delivers
//! packets by destination LID. A packet for a LID no port has is dropped and counted.

use crate::port::{Counters, Port};
use core::sync::atomic::AtomicU64;
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{Arc, SpinLock},
};

/// The most ports the switch has.
pub(crate) const MAX_PORTS: usize = 64;

/// The switch and the ports attached to it.
#[pin_data]
pub(crate) struct Fabric {
    #[pin]
    ports: SpinLock<[Option<Arc<Port>>; MAX_PORTS]>,
    /// Packets dropped because no port has their destination LID.
    pub(crate) unknown_dlid: AtomicU64,
}

impl Fabric {
    /// An empty switch.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                ports <- new_spinlock!([const { None }; MAX_PORTS], "opasim_fabric"),
                unknown_dlid: AtomicU64::new(0),
            }),
            GFP_KERNEL,
        )
    }

    /// Attaches `port` to the switch; `ENOSPC` when all switch ports are taken.
    pub(crate) fn attach(&self, port: Arc<Port>) -> Result {
        let mut ports = self.ports.lock();
        let slot = ports.iter_mut().find(|p| p.is_none()).ok_or(ENOSPC)?;
        *slot = Some(port);
        Ok(())
    }

    /// Detaches the ports for which `f` is true from the switch.
    pub(crate) fn detach_where(&self, f: impl Fn(&Port) -> bool) {
        // The ports are dropped after the lock is released.
        let mut old: [Option<Arc<Port>>; MAX_PORTS] = [const { None }; MAX_PORTS];
        let mut ports = self.ports.lock();
        for (o, p) in old.iter_mut().zip(ports.iter_mut()) {
            if p.as_deref().is_some_and(&f) {
                *o = p.take();
            }
        }
        drop(ports);
        drop(old);
    }

    /// The active port whose LID is `dlid`.
    pub(crate) fn route(&self, dlid: u32) -> Option<Arc<Port>> {
        if dlid == 0 {
            return None;
        }
        let ports = self.ports.lock();
        ports
            .iter()
            .flatten()
            .find(|p| p.active_lid() == Some(dlid))
            .cloned()
    }

    /// Routes a packet from `from` to `dlid`: the destination port, or `None` after counting
    /// the drop (in the switch and in the sender's `xmit_unknown_dlid`).
    pub(crate) fn forward(&self, from: &Port, dlid: u32) -> Option<Arc<Port>> {
        let to = self.route(dlid);
        if to.is_none() {
            Counters::inc(&self.unknown_dlid);
            Counters::inc(&from.counters.xmit_unknown_dlid);
        }
        to
    }

    /// Whether an attached port other than `except` has the LID `lid`.
    pub(crate) fn lid_in_use(&self, lid: u32, except: Option<&Port>) -> bool {
        let ports = self.ports.lock();
        ports
            .iter()
            .flatten()
            .any(|p| !except.is_some_and(|e| core::ptr::eq(e, &**p)) && p.config().lid == lid)
    }
}
