// SPDX-License-Identifier: GPL-2.0-only

//! The simulated HFI's completion queues: a ring of work completions and its arming state,
//! as rdmavt's `struct rvt_cq` (`sw/rdmavt/cq.c`).

use crate::{fifo::Fifo, hfi::Hfi};
use kernel::{
    new_irq_spinlock,
    prelude::*,
    rdma::verbs::{Cq, CqNotify, WcWriter, WorkCompletion},
    sync::IrqSpinLock,
};

/// The most completions a CQ holds (as `max_cqe` tells the consumers).
pub(crate) const MAX_CQE: u32 = 65536;

/// What a CQ is armed for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Armed {
    No,
    Solicited,
    Next,
}

/// The completions of a CQ and its arming, under one lock.
pub(crate) struct CqRing {
    ring: Fifo<WorkCompletion>,
    armed: Armed,
}

impl CqRing {
    /// Whether the ring takes no more completions.
    pub(crate) fn is_full(&self) -> bool {
        self.ring.is_full()
    }

    /// Queues `wc`; returns whether the completion handler is to be called (the CQ was armed
    /// for it, and is disarmed now), as `rvt_cq_enter()` decides. A full ring drops the
    /// completion (an overrun) and returns `ENOSPC`.
    pub(crate) fn queue(&mut self, wc: WorkCompletion) -> Result<bool> {
        // rdmavt calls the handler of a CQ armed for solicited completions for errors, too.
        let solicited = wc.solicited() || !wc.is_success();
        if self.ring.push(wc).is_err() {
            return Err(ENOSPC);
        }
        let fire = match self.armed {
            Armed::Next => true,
            Armed::Solicited => solicited,
            Armed::No => false,
        };
        if fire {
            self.armed = Armed::No;
        }
        Ok(fire)
    }
}

/// What opasim keeps for each CQ.
#[pin_data]
pub(crate) struct HfiCq {
    /// The completions and the arming; deliveries hold it from the check for room to the
    /// completion.
    #[pin]
    pub(crate) ring: IrqSpinLock<CqRing>,
}

impl HfiCq {
    /// A CQ of room for `entries` completions.
    pub(crate) fn new(entries: u32) -> Result<impl PinInit<Self, Error>> {
        if entries > MAX_CQE {
            return Err(EINVAL);
        }
        let ring = CqRing {
            ring: Fifo::new(entries as usize)?,
            armed: Armed::No,
        };
        Ok(try_pin_init!(Self {
            ring <- new_irq_spinlock!(ring, "opasim_cq"),
        }? Error))
    }
}

/// Queues `wc` on `cq` and has the completion handler called if the CQ was armed for it:
/// from a work item ([`Cq::notify`]), as `rvt_cq_enter()` queues `comptask`, so that the
/// handler never runs in the poster's context.
pub(crate) fn complete(cq: &Cq<Hfi>, wc: WorkCompletion) -> Result {
    let fire = cq.data().ring.lock().queue(wc)?;
    if fire {
        cq.notify();
    }
    Ok(())
}

/// `poll_cq`: the oldest completions, as many as `out` takes.
pub(crate) fn poll(cq: &Cq<Hfi>, out: &mut WcWriter<'_>) {
    let mut st = cq.data().ring.lock();
    while out.room() > 0 {
        let Some(wc) = st.ring.pop() else { break };
        // `room() > 0`: the push cannot fail.
        let _ = out.push(wc);
    }
}

/// `req_notify_cq`: arms the CQ (a request for the next completion wins over one for the next
/// solicited one, as in `rvt_req_notify_cq()`); whether completions are waiting, if asked.
pub(crate) fn req_notify(cq: &Cq<Hfi>, notify: &CqNotify) -> bool {
    let mut st = cq.data().ring.lock();
    if st.armed != Armed::Next {
        st.armed = if notify.solicited_only {
            Armed::Solicited
        } else {
            Armed::Next
        };
    }
    notify.report_missed && st.ring.len() != 0
}
