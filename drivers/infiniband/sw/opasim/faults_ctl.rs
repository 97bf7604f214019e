// SPDX-License-Identifier: GPL-2.0-only

//! The debugfs files of a port that inject faults ([`crate::control`] creates them):
//!
//! - `rx_errors`: `icrc N` or `frame N` flags the next N VNIC packets the port receives as
//!   bad ([`crate::rx_errors`]); reading shows what is pending, `icrc N` and `frame N`.
//! - `fail_open`, `fail_set_id`, `fail_mad_send`: N fails the next N VNIC netdev opens, vesw
//!   id reopens, QP0/QP1 sends of the port ([`crate::faults`]), 0 clears what is pending;
//!   reading shows `pending N` and `injected N` (failed so far).
//! - `vnic_tx_hold`: `hold` makes the SDMA rings of the port's VNIC netdevs hold their
//!   completions, `release` completes them again; reading shows `held` or `released`, the
//!   packets the rings of the open netdevs hold now (`queued N`) and the holds so far
//!   (`holds N`).
//!
//! A bad write is refused with `EINVAL` and a line in the kernel log, and changes nothing.

use crate::{
    faults::{self, Fault},
    port::Port,
    rx_errors,
};
use core::fmt::Write;
use kernel::{c_str, debugfs::Text, prelude::*, str::CStr};

/// A fault file of a port.
#[derive(Clone, Copy)]
pub(crate) enum Knob {
    /// `rx_errors`.
    RxErrors,
    /// `fail_open`, `fail_set_id`, `fail_mad_send`.
    Fail(Fault),
    /// `vnic_tx_hold`.
    TxHold,
}

/// The fault files of a port, by name.
pub(crate) const FILES: [(&CStr, Knob); 5] = [
    (c_str!("rx_errors"), Knob::RxErrors),
    (c_str!("fail_open"), Knob::Fail(Fault::Open)),
    (c_str!("fail_set_id"), Knob::Fail(Fault::SetId)),
    (c_str!("fail_mad_send"), Knob::Fail(Fault::MadSend)),
    (c_str!("vnic_tx_hold"), Knob::TxHold),
];

/// What reading the file `k` of `port` shows.
pub(crate) fn show(port: &Port, k: Knob, w: &mut Text<'_>) {
    let _ = match k {
        Knob::RxErrors => {
            for (err, n) in port.faults.rx.pending() {
                let _ = writeln!(w, "{} {}", err.name(), n);
            }
            Ok(())
        }
        Knob::Fail(f) => {
            let (pending, injected) = port.faults.counts(f);
            writeln!(w, "pending {}\ninjected {}", pending, injected)
        }
        Knob::TxHold => {
            let queued: usize = port
                .vnics()
                .iter()
                .flatten()
                .map(|nd| nd.data().dma.queued())
                .sum();
            writeln!(
                w,
                "{}\nqueued {}\nholds {}",
                if port.faults.tx_held() {
                    "held"
                } else {
                    "released"
                },
                queued,
                port.faults.holds()
            )
        }
    };
}

/// Writes `input` to the file `k` of `port`.
pub(crate) fn store(port: &Port, k: Knob, input: &[u8]) -> Result {
    let num = port.num;
    match k {
        Knob::RxErrors => {
            let (err, n) = rx_errors::parse(input).inspect_err(|_| {
                pr_warn!(
                    "port {}: rx_errors takes 'icrc N' or 'frame N', N from 1 to {}\n",
                    num,
                    rx_errors::MAX_PENDING
                )
            })?;
            port.faults.rx.inject(err, n).inspect_err(|_| {
                pr_warn!(
                    "port {}: more than {} receive errors pending\n",
                    num,
                    rx_errors::MAX_PENDING
                )
            })
        }
        Knob::Fail(f) => {
            let n = faults::parse_count(input).inspect_err(|_| {
                pr_warn!(
                    "port {}: a fail_ file takes one number, 0 (clear) to {}\n",
                    num,
                    faults::MAX_PENDING
                )
            })?;
            port.faults.inject(f, n).inspect_err(|_| {
                pr_warn!(
                    "port {}: more than {} faults pending\n",
                    num,
                    faults::MAX_PENDING
                )
            })
        }
        Knob::TxHold => {
            let hold = faults::parse_hold(input).inspect_err(|_| {
                pr_warn!("port {}: vnic_tx_hold takes 'hold' or 'release'\n", num)
            })?;
            let was = port.faults.hold_tx(hold);
            if was != hold {
                pr_info!(
                    "port {}: VNIC SDMA completions {}\n",
                    num,
                    if hold { "held" } else { "released" }
                );
            }
            if !hold {
                // What the rings hold goes out now.
                for nd in port.vnics().iter().flatten() {
                    nd.data().dma.kick(&port.wq);
                }
            }
            Ok(())
        }
    }
}
