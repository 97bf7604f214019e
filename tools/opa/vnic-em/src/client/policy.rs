// SPDX-License-Identifier: GPL-2.0

//! How the client sends (timeouts, retries and their back-off, the
//! window), and the counts of what it sent.

use std::time::Duration;

use super::Window;
use crate::mad::MadSize;

/// Counts of what the client sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Request MADs sent, retries included.
    pub sent: u32,
    /// Retries.
    pub retries: u32,
    /// Sets that succeeded.
    pub sets_ok: u32,
    /// Attempts that got no response in time (or a busy one).
    pub timeouts: u32,
    /// Most requests ever in flight at once.
    pub max_in_flight: u32,
}

/// Timeout and retry policy.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// How long to wait for the response to the first attempt; each
    /// retry waits twice as long as the one before, up to `timeout_max`.
    pub timeout: Duration,
    /// The longest wait of one attempt (no back-off if not more than
    /// `timeout`).
    pub timeout_max: Duration,
    /// Retries after the first attempt.
    pub retries: u32,
    /// Extra time past `timeout` to wait for the transport's own timeout
    /// report before giving up on an attempt.
    pub grace: Duration,
    /// P_Key index to send with.
    pub pkey_index: u16,
    /// Service level to send with.
    pub sl: u8,
    /// Whole or trimmed request MADs.
    pub mad_size: MadSize,
    /// How many requests a batch keeps in flight ([`super::window`]).
    pub window: Window,
}

impl Policy {
    /// How long attempt `attempt` (0 for the first) waits for its
    /// response: the timeout doubled at each retry, up to `timeout_max`.
    /// A node port that is slow to answer (busy creating netdevs) gets
    /// more time at each try rather than the same few MADs again.
    pub fn attempt_timeout(&self, attempt: u32) -> Duration {
        let cap = self.timeout_max.max(self.timeout);
        let factor = 1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX);
        self.timeout.saturating_mul(factor).min(cap)
    }

    /// Attempts of one request: the first and its retries.
    pub fn attempts(&self) -> u32 {
        self.retries.saturating_add(1)
    }

    /// The longest a request waits for its response over every attempt,
    /// the grace periods included: how long a node port that does not
    /// answer holds a batch up.
    pub fn give_up_after(&self) -> Duration {
        (0..self.attempts()).fold(Duration::ZERO, |t, a| {
            t.saturating_add(self.attempt_timeout(a))
                .saturating_add(self.grace)
        })
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            timeout: Duration::from_millis(1000),
            timeout_max: Duration::from_millis(4000),
            retries: 3,
            grace: Duration::from_millis(500),
            pkey_index: 0,
            sl: 0,
            mad_size: MadSize::Full,
            window: Window::default(),
        }
    }
}
