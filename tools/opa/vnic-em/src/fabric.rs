// SPDX-License-Identifier: GPL-2.0

//! The fabric-facing layer: what the EM needs from a MAD transport.
//!
//! [`crate::umad::Umad`] implements it over the kernel's umad interface;
//! [`crate::fake::FakeFabric`] implements it in memory, answering like the
//! kernel's VEMA agent, for the host tests. Everything above it (TID
//! matching, timeouts, retries, the commands) is the same code for both.

use std::fmt;
use std::time::Duration;

/// Where a MAD goes: a node port on the fabric, reached as a GSI MAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dest {
    /// Destination LID (16 bits: the umad header carries no more).
    pub lid: u16,
    /// Destination QP (1, the GSI).
    pub qpn: u32,
    /// Q_Key ([`crate::mad::IB_QP1_QKEY`]).
    pub qkey: u32,
    /// Index of the P_Key to send with, in the EM port's P_Key table.
    pub pkey_index: u16,
    /// Service level.
    pub sl: u8,
}

impl Dest {
    /// A GSI destination with the QP1 Q_Key.
    pub const fn gsi(lid: u16, pkey_index: u16, sl: u8) -> Self {
        Dest {
            lid,
            qpn: 1,
            qkey: crate::mad::IB_QP1_QKEY,
            pkey_index,
            sl,
        }
    }
}

/// Something the transport delivers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A MAD arrived (a response or an unsolicited trap).
    Mad {
        /// LID of the sender.
        src_lid: u16,
        /// The MAD, as received (up to 2048 bytes).
        data: Vec<u8>,
    },
    /// The transport gave up waiting for the response to the request with
    /// this TID (umad: the send came back with status `ETIMEDOUT`).
    SendTimeout {
        /// TID of the request (the high half may be the transport's).
        tid: u64,
    },
}

/// A transport failure (not a fabric answer).
#[derive(Debug)]
pub enum FabricError {
    /// No usable umad device, or it cannot be opened or registered.
    Device(String),
    /// A read, write or poll on the device failed.
    Io(String),
}

impl fmt::Display for FabricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FabricError::Device(m) => write!(f, "{m}"),
            FabricError::Io(m) => write!(f, "MAD transport: {m}"),
        }
    }
}

impl std::error::Error for FabricError {}

/// The subnet prefix a port has until an SM sets another (opafm.xml's default
/// `<SubnetPrefix>`, the link-local prefix of IBA 4.1.1).
pub const DEFAULT_SUBNET_PREFIX: u64 = 0xfe80_0000_0000_0000;

/// A MAD transport for the EM's own port.
pub trait Fabric {
    /// Sends one request MAD to `dest`; the transport waits up to
    /// `timeout` for its response and reports [`Event::SendTimeout`] if
    /// none comes (a transport that cannot tell may stay silent: the
    /// caller also keeps its own deadline).
    fn send(&mut self, dest: &Dest, mad: &[u8], timeout: Duration) -> Result<(), FabricError>;

    /// The next event, waiting at most `timeout`; `None` if nothing came.
    fn recv(&mut self, timeout: Duration) -> Result<Option<Event>, FabricError>;

    /// The LID of the EM's own port (where traps must be sent).
    fn local_lid(&self) -> u16;

    /// A name for the EM's port, for messages ("hfi1_0 port 1").
    fn describe(&self) -> String;

    /// Whether the EM's port is a limited member of the management partition: its P_Key
    /// table has no 0xffff (read at each call: the SM may change the table).
    fn limited_member(&self) -> bool {
        false
    }

    /// The subnet prefix of the EM's port (the first half of its GID 0, which the SM set):
    /// the first half of every port GID the SA takes. The default is the SM's own default.
    fn subnet_prefix(&self) -> u64 {
        DEFAULT_SUBNET_PREFIX
    }

    /// Sends the Subnet Administration request `mad` to the subnet manager (the SMLID of the
    /// EM's port, read at each call: the SM may move) and waits up to `timeout` for the
    /// answer with its TID, a GetTableResp reassembled from its RMPP segments. `Ok(None)`:
    /// no answer in time. Other MADs arriving meanwhile (traps) are kept for [`Fabric::recv`].
    fn sa_request(
        &mut self,
        mad: &[u8],
        timeout: Duration,
    ) -> Result<Option<Vec<u8>>, FabricError> {
        let _ = (mad, timeout);
        Err(FabricError::Device(format!(
            "{}: no path to a subnet administrator",
            self.describe()
        )))
    }
}
