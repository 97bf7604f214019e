// SPDX-License-Identifier: GPL-2.0

//! Why an SA query failed, and why a name gives no single port: each said in a sentence an
//! admin can act on.

use std::fmt;
use std::time::Duration;

use crate::fabric::FabricError;

use super::{NodeRef, SaNode};

/// Why an SA query failed.
#[derive(Debug)]
pub enum SaError {
    /// No answer after every attempt (no SA, or it is down).
    Timeout {
        /// Attempts made.
        attempts: u32,
    },
    /// The SA answered with a non-zero status.
    Status {
        /// The query.
        what: &'static str,
        /// The MAD status.
        status: u16,
    },
    /// The answer cannot be read.
    Bad(String),
    /// The transport failed (no SM LID, no umad device, ...).
    Transport(FabricError),
    /// Every answer was BUSY, up to the last attempt.
    Busy {
        /// The query.
        what: &'static str,
        /// BUSY answers received.
        answers: u32,
        /// Time spent waiting between them.
        waited: Duration,
    },
    /// The EM's port is a limited member of the management partition (its P_Key table has
    /// no 0xffff): opa-fm's SA drops its PortInfoRecord queries, and the switches its VEMA
    /// MADs to ports that are not full members.
    LimitedMember(String),
}

impl fmt::Display for SaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaError::Timeout { attempts } => write!(
                f,
                "the subnet administrator did not answer ({attempts} attempt(s)); is the SM running?"
            ),
            SaError::Status { what, status } => {
                write!(f, "the subnet administrator refused {what}: status {status:#06x}")
            }
            SaError::Bad(m) => write!(f, "bad answer from the subnet administrator: {m}"),
            SaError::Transport(e) => write!(f, "{e}"),
            SaError::Busy {
                what,
                answers,
                waited,
            } => write!(
                f,
                "the subnet administrator answered {what} BUSY {answers} times over {:.1} s: the \
                 SM is still bringing the fabric up (or does not know this port yet); try again \
                 once its sweep has ended",
                waited.as_secs_f64()
            ),
            SaError::LimitedMember(port) => write!(
                f,
                "{port} is a limited member of the management partition (its P_Key table has \
                 0x7fff, not 0xffff): the SA does not answer its PortInfoRecord queries and the \
                 switches drop its VEMA MADs; add this port to the Admin vFabric (opafm.xml: \
                 the Admin vFabric's <Member>, e.g. a device group of the EM's node)"
            ),
        }
    }
}

impl std::error::Error for SaError {}

impl From<FabricError> for SaError {
    fn from(e: FabricError) -> Self {
        SaError::Transport(e)
    }
}

/// Why a name does not give one node port.
#[derive(Debug)]
pub enum ResolveError {
    /// No port has the name.
    Unknown(NodeRef),
    /// More than one port has the description.
    Ambiguous(NodeRef, Vec<SaNode>),
    /// The SA could not be asked.
    Sa(SaError),
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::Unknown(r) => {
                write!(
                    f,
                    "no port of the fabric is {r} (the SA knows no such node)"
                )
            }
            ResolveError::Ambiguous(r, n) => {
                write!(f, "{} ports are {r}:", n.len())?;
                for p in n {
                    write!(f, " GUID {:#018x} LID {:#06x};", p.port_guid, p.lid)?;
                }
                write!(f, " name the port by GUID")
            }
            ResolveError::Sa(e) => write!(f, "{e}"),
        }
    }
}
