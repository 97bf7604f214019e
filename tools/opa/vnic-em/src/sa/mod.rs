// SPDX-License-Identifier: GPL-2.0

//! The Subnet Administration client, beside the VEMA client ([`crate::client`]): what the
//! subnet manager knows of the fabric now, and the names admins give nodes resolved to the
//! LIDs the SM assigned.
//!
//! An admin names a vport's node by port GUID or by node description, as in OpenSM's
//! `partitions.conf`; the LID is the SM's and may change. At every apply the EM asks the SA
//! (NodeRecord Get by PortGUID or GetTable by NodeDesc), and `discover` reads the whole table
//! of NodeRecords and PortInfoRecords (CapabilityMask3 tells which ports carry VNIC).
//!
//! The requests are made as opa-ff's opamgt makes them (`omgt_sa_*` of `opamgt/src/`), since
//! opa-fm's SA refuses others: every request carries the whole record as its template, even
//! when the mask names no component (opa-fm answers REQ_INVALID to data shorter than the
//! record); it goes on the P_Key 0xffff (opa-fm drops PortInfoRecord requests on any other)
//! and the port's SM SL (the transport's); an answer BUSY (the SM is activating the fabric,
//! or does not know the EM's port yet) is asked again after a pause that doubles, a bounded
//! number of times. Only HFI ports that are Active count: opa-fm's tables also hold switches
//! (NodeType 2, and every port of a switch) and ports in Init or Armed. LIDs are read whole
//! (32 bits).
//!
//! One job a file: [`NodeRef`] and [`SaNode`] (a port as named and as the SA describes it),
//! the MGIDs of multicast groups, a port's join to one (`join`), the errors, the request and
//! its retries (`query`), the
//! tables read and filtered (`records`), and a name resolved to its port (`resolve`).

mod error;
mod join;
mod mgid;
mod node;
mod query;
mod records;
mod resolve;

pub use error::{ResolveError, SaError};
pub use join::port_gid;
pub use mgid::{mgid_text, parse_mgid, DEFAULT_MCAST_MGID};
pub use node::{NodeRef, SaNode};
pub use query::{SaClient, BUSY_PAUSE, BUSY_PAUSE_MAX, BUSY_RETRIES};
pub use records::active_hfi_ports;
