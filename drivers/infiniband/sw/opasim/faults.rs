// SPDX-License-Identifier: GPL-2.0-only

//! Faults injected on a port (besides the receive errors of [`crate::rx_errors`]), so that
//! tests can see what the VNIC drivers and the MAD stack do when the HFI refuses them, as hfi1
//! can (the files `fail_open`, `fail_set_id`, `fail_mad_send` and `vnic_tx_hold` of
//! [`crate::control`]):
//!
//! - [`Fault::Open`]: opening a VNIC netdev fails with `ENOMEM`, as `hfi1_vnic_up()` does when
//!   `hfi1_netdev_rx_init()` cannot allocate the receive queues of the first netdev
//!   (`hfi1_netdev_rxq_init()`); nothing is bound, the netdev stays down.
//! - [`Fault::SetId`]: a vesw id change of an open netdev cannot bring it up again: hfi1's
//!   `hfi1_vnic_set_vesw_id()` takes the port down, and its `hfi1_vnic_up()` fails; `set_id`
//!   returns nothing, so the netdev is left without carrier, and detached, until it is closed
//!   and opened or a later change brings it up.
//!   Only such calls consume the fault: a change of a closed netdev's id cannot fail on hfi1.
//! - [`Fault::MadSend`]: a send from QP0 or QP1 is completed with `IB_WC_GENERAL_ERR` and not
//!   sent, as `hfi1_verbs_send_pio()` completes a send it cannot get a PIO buffer for
//!   (`sc_buffer_alloc()` failing on a port that is not active) and `hfi1_verbs_send()` one
//!   that fails the egress P_Key check: the MAD layer then reports the send failed to its
//!   agent, and a response is not answered.
//! - The transmit hold: the SDMA rings of the port's VNIC netdevs complete nothing until
//!   released (an engine that stalls), so a sender fills them and meets `NETDEV_TX_BUSY` on a
//!   kernel of any speed ([`crate::vnic_dma`]).
//!
//! Each fault is consumed by the operation it fails, and counted.

use crate::rx_errors::RxErrors;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;

/// An operation a port can be told to fail.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Fault {
    /// `ndo_open` of a VNIC netdev of the port.
    Open,
    /// The reopen of an open VNIC netdev whose vesw id changes (`rn.set_id`).
    SetId,
    /// A send from QP0 or QP1 of the port.
    MadSend,
}

impl Fault {
    /// What failing says in the kernel log.
    fn what(self) -> &'static str {
        match self {
            Self::Open => "VNIC netdev open fails (ENOMEM)",
            Self::SetId => "VNIC reopen after a vesw id change fails (ENOMEM)",
            Self::MadSend => "MAD send completes with IB_WC_GENERAL_ERR",
        }
    }
}

/// The most faults of one kind a port may have pending: a bound, so a bad write cannot fail a
/// port's operations for hours.
pub(crate) const MAX_PENDING: u32 = 1_000_000;

/// The faults of one kind: pending, and injected so far.
#[derive(Default)]
struct Count {
    pending: AtomicU32,
    injected: AtomicU64,
}

/// The faults of a port.
#[derive(Default)]
pub(crate) struct Faults {
    /// The VNIC packets to receive flagged as bad.
    pub(crate) rx: RxErrors,
    open: Count,
    set_id: Count,
    mad_send: Count,
    /// Whether the VNIC SDMA rings of the port hold their completions.
    tx_held: AtomicBool,
    /// How many times the rings were told to hold.
    holds: AtomicU64,
}

impl Faults {
    fn of(&self, f: Fault) -> &Count {
        match f {
            Fault::Open => &self.open,
            Fault::SetId => &self.set_id,
            Fault::MadSend => &self.mad_send,
        }
    }

    /// Fails `n` more operations `f`; `n` 0 clears what is pending. `EINVAL` if that would
    /// leave more than [`MAX_PENDING`] pending (and nothing changes).
    pub(crate) fn inject(&self, f: Fault, n: u32) -> Result {
        let pending = &self.of(f).pending;
        if n == 0 {
            pending.store(0, Ordering::Relaxed);
            return Ok(());
        }
        pending
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| {
                p.checked_add(n).filter(|&t| t <= MAX_PENDING)
            })
            .map(|_| ())
            .map_err(|_| EINVAL)
    }

    /// Whether the operation `f` being done fails: if one is pending, it is consumed and
    /// counted.
    pub(crate) fn take(&self, f: Fault) -> bool {
        let c = self.of(f);
        let hit = c
            .pending
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| p.checked_sub(1))
            .is_ok();
        if hit {
            c.injected.fetch_add(1, Ordering::Relaxed);
        }
        hit
    }

    /// [`Faults::take`] for port `port`, with the line in the kernel log that says which
    /// operation failed: `Err(ENOMEM)` if it is to fail.
    pub(crate) fn fail(&self, f: Fault, port: u32) -> Result {
        if !self.take(f) {
            return Ok(());
        }
        pr_info!("port {}: injected fault: {}\n", port, f.what());
        Err(ENOMEM)
    }

    /// The faults `f` pending and injected so far.
    pub(crate) fn counts(&self, f: Fault) -> (u32, u64) {
        let c = self.of(f);
        (
            c.pending.load(Ordering::Relaxed),
            c.injected.load(Ordering::Relaxed),
        )
    }

    /// Makes the VNIC SDMA rings of the port hold their completions (`true`) or complete them
    /// again (`false`); returns whether they held them before.
    pub(crate) fn hold_tx(&self, hold: bool) -> bool {
        let was = self.tx_held.swap(hold, Ordering::Relaxed);
        if hold && !was {
            self.holds.fetch_add(1, Ordering::Relaxed);
        }
        was
    }

    /// Whether the VNIC SDMA rings of the port hold their completions.
    pub(crate) fn tx_held(&self) -> bool {
        self.tx_held.load(Ordering::Relaxed)
    }

    /// How many times the rings were told to hold.
    pub(crate) fn holds(&self) -> u64 {
        self.holds.load(Ordering::Relaxed)
    }
}

/// Parses a write of a `fail_*` file: one number N, 0 to [`MAX_PENDING`] (0 clears).
pub(crate) fn parse_count(input: &[u8]) -> Result<u32> {
    let text = core::str::from_utf8(input).map_err(|_| EINVAL)?;
    let mut words = text.split_ascii_whitespace();
    let (Some(n), None) = (words.next(), words.next()) else {
        return Err(EINVAL);
    };
    n.parse::<u32>()
        .ok()
        .filter(|&n| n <= MAX_PENDING)
        .ok_or(EINVAL)
}

/// Parses a write of `vnic_tx_hold`: `hold` (`true`) or `release` (`false`).
pub(crate) fn parse_hold(input: &[u8]) -> Result<bool> {
    let text = core::str::from_utf8(input).map_err(|_| EINVAL)?;
    let mut words = text.split_ascii_whitespace();
    match (words.next(), words.next()) {
        (Some("hold"), None) => Ok(true),
        (Some("release"), None) => Ok(false),
        _ => Err(EINVAL),
    }
}
