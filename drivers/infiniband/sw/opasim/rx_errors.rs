// SPDX-License-Identifier: GPL-2.0-only

//! Receive errors injected on a port: the next VNIC packets it receives arrive flagged by the
//! chip, as hfi1's receive header flags report a bad ICRC (`RHF_ICRC_ERR`) or another error
//! (`RHF_LEN_ERR`, `RHF_ECC_ERR`, `RHF_DC_ERR`...). hfi1 (with this project's patch) drops
//! such a packet in `hfi1_vnic_bypass_rcv()` and counts it on the vport it names, in
//! `rx_crc_errors` or `rx_frame_errors`; opasim does the same ([`crate::vnic::receive`]).
//! The fabric never corrupts a packet by itself: this is how tests make one.

use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;

/// What the chip flagged in a received packet.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum RxErr {
    /// A bad ICRC: counted in `rx_crc_errors`.
    Icrc,
    /// Any other receive error: counted in `rx_frame_errors`.
    Frame,
}

impl RxErr {
    /// Both kinds, in the order [`RxErrors::take`] hands them out.
    const ALL: [Self; 2] = [Self::Icrc, Self::Frame];

    /// The kind's name in the debugfs file.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Icrc => "icrc",
            Self::Frame => "frame",
        }
    }
}

/// The most packets one port may have pending: a bound, so a bad write cannot flag a port's
/// traffic for hours.
pub(crate) const MAX_PENDING: u32 = 1_000_000;

/// The packets still to be flagged on a port, by kind.
#[derive(Default)]
pub(crate) struct RxErrors {
    icrc: AtomicU32,
    frame: AtomicU32,
}

impl RxErrors {
    fn of(&self, err: RxErr) -> &AtomicU32 {
        match err {
            RxErr::Icrc => &self.icrc,
            RxErr::Frame => &self.frame,
        }
    }

    /// Flags `n` more received packets with `err`. `EINVAL` if that would leave more than
    /// [`MAX_PENDING`] pending.
    pub(crate) fn inject(&self, err: RxErr, n: u32) -> Result {
        self.of(err)
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| {
                p.checked_add(n).filter(|&t| t <= MAX_PENDING)
            })
            .map(|_| ())
            .map_err(|_| EINVAL)
    }

    /// The flag of the packet being received, if one is pending (ICRC ones first).
    pub(crate) fn take(&self) -> Option<RxErr> {
        RxErr::ALL.into_iter().find(|&err| {
            self.of(err)
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| p.checked_sub(1))
                .is_ok()
        })
    }

    /// The pending counts, by kind, for the debugfs file.
    pub(crate) fn pending(&self) -> [(RxErr, u32); 2] {
        RxErr::ALL.map(|err| (err, self.of(err).load(Ordering::Relaxed)))
    }
}

/// Parses a write of a port's `rx_errors` file: `icrc N` or `frame N`, N from 1 to
/// [`MAX_PENDING`].
pub(crate) fn parse(input: &[u8]) -> Result<(RxErr, u32)> {
    let text = core::str::from_utf8(input).map_err(|_| EINVAL)?;
    let mut words = text.split_ascii_whitespace();
    let (Some(kind), Some(n), None) = (words.next(), words.next(), words.next()) else {
        return Err(EINVAL);
    };
    let err = RxErr::ALL
        .into_iter()
        .find(|e| e.name() == kind)
        .ok_or(EINVAL)?;
    let n = n
        .parse::<u32>()
        .ok()
        .filter(|n| (1..=MAX_PENDING).contains(n))
        .ok_or(EINVAL)?;
    Ok((err, n))
}
