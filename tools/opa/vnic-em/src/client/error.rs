// SPDX-License-Identifier: GPL-2.0

//! Why a Get or Set failed.

use std::fmt;
use std::time::Duration;

use crate::fabric::FabricError;
use crate::mad::{self, Target};

/// Why a Get or Set failed.
#[derive(Debug)]
pub enum EmError {
    /// No response after every attempt.
    Timeout {
        /// The request.
        target: Target,
        /// Attempts made.
        attempts: u32,
        /// Timeout of the first attempt.
        timeout: Duration,
        /// Timeout of the last attempt (longer than `timeout` when the
        /// retries back off).
        last: Duration,
    },
    /// Not waited for: another request to the same node port got no
    /// response after every attempt, so the node port was given up
    /// (see [`crate::client::window`]).
    GaveUp {
        /// The request.
        target: Target,
    },
    /// The agent answered with a non-zero MAD status.
    Status {
        /// The request.
        target: Target,
        /// The status (host order).
        status: u16,
    },
    /// The response does not fit the request.
    BadResponse {
        /// The request.
        target: Target,
        /// What is wrong with it.
        reason: String,
    },
    /// The request could not be built (a bug, or data that does not fit).
    Encode {
        /// The request.
        target: Target,
        /// The wire error.
        reason: String,
    },
    /// The transport failed.
    Transport(FabricError),
}

impl fmt::Display for EmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmError::Timeout {
                target,
                attempts,
                timeout,
                last,
            } => {
                write!(
                    f,
                    "{target}: no response after {attempts} attempt(s) of {} ms",
                    timeout.as_millis()
                )?;
                if last > timeout {
                    write!(f, " backing off to {} ms", last.as_millis())?;
                }
                Ok(())
            }
            EmError::GaveUp { target } => write!(
                f,
                "{target}: given up: LID {:#06x} does not answer",
                target.lid
            ),
            EmError::Status { target, status } => write!(
                f,
                "{target}: MAD status {status:#06x} ({})",
                mad::status_text(*status)
            ),
            EmError::BadResponse { target, reason } => {
                write!(f, "{target}: bad response: {reason}")
            }
            EmError::Encode { target, reason } => {
                write!(f, "{target}: cannot build the request: {reason}")
            }
            EmError::Transport(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for EmError {}

impl EmError {
    /// The request that failed; `None` for a transport failure.
    pub fn target(&self) -> Option<Target> {
        match self {
            EmError::Timeout { target, .. }
            | EmError::GaveUp { target }
            | EmError::Status { target, .. }
            | EmError::BadResponse { target, .. }
            | EmError::Encode { target, .. } => Some(*target),
            EmError::Transport(_) => None,
        }
    }
}

impl From<FabricError> for EmError {
    fn from(e: FabricError) -> Self {
        EmError::Transport(e)
    }
}
