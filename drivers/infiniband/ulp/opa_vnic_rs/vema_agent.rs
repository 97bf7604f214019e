// SPDX-License-Identifier: GPL-2.0

//! What the VEMA agent (the Ethernet management agent of an OPA port) answers to each Get and
//! Set of the Ethernet Manager.
//!
//! [`process`] turns a received VEMA MAD into its response, over a [`VportBackend`] that owns
//! the port's virtual Ethernet switch ports. It is `core` only, like [`crate::wire`], and has
//! no locking of its own: the kernel driver calls it under the port's lock with a backend made
//! of its netdevs; the host tests call it with a backend made of plain values.
//!
//! The answers are those of the C driver (`opa_vnic_vema.c`), with one deliberate difference,
//! for requests the C driver mishandles: the interface MAC lists are capped at what fits in one
//! MAD (333 addresses), where the C driver writes past the end of the response when an
//! interface has more.
//!
//! Like the C agent, [`process`] does not look at the base version, class version or OUI of a
//! request: the MAD layer delivers the agent only MADs of its class, class version and OUI, and
//! a MAD of base version 1 (InfiniBand-sized) is answered as the C agent answers it, processed
//! like any other with the request's header copied into the answer. A request is read whole
//! (2048 bytes): the kernel driver zero-fills one that arrived trimmed, as the MAD layer's
//! buffers are for the C agent.

use crate::wire::{
    mad::{vport_num, VemaMadHdr, VemaOp, IB_MGMT_VENDOR_HDR, OPA_MGMT_MAD_SIZE},
    vema_counters::{ErrorCounters, SummaryCounters},
    vema_info::{ClassPortInfo, VeswPortInfo},
    vema_info_bytes::VeswPortInfoRef,
    vema_mac::{IfaceMacsHdr, MacTable, MacTableEntry, MacTableHdr},
    WireError,
};

/// The virtual ports of one OPA port and the agent's own state, as the agent sees them.
///
/// Virtual ports are numbered by the low 8 bits of the attribute modifier.
pub trait VportBackend {
    /// The ClassPortInfo the EM set last (all zero before the first Set).
    fn class_port_info(&self) -> ClassPortInfo;

    /// Stores the ClassPortInfo the EM sets; traps go to its trap LID from then on.
    fn set_class_port_info(&mut self, info: &ClassPortInfo);

    /// Whether the virtual port exists.
    fn has_vport(&self, vport: u8) -> bool;

    /// Creates the virtual port (its netdev, in the driver). Called before the first Set of its
    /// info. An error is answered with the error's MAD status.
    fn add_vport(&mut self, vport: u8) -> Result<(), WireError>;

    /// The current info of an existing virtual port (configured values, and the state the
    /// port computes: link status, oper state, MAC table digest...).
    fn vport_info(&self, vport: u8) -> VeswPortInfo;

    /// The MAC table digest of a virtual port, as [`VportBackend::vport_info`] gives it: what
    /// every MAC table answer carries. A backend that keeps the info may read the digest where
    /// it is, rather than make the whole info first.
    fn mac_tbl_digest(&self, vport: u8) -> u32 {
        self.vport_info(vport).vport.mac_tbl_digest
    }

    /// Encodes the info of a virtual port into `out`, as [`VportBackend::vport_info`] gives it
    /// ([`VeswPortInfo::vema_pod`] for one that does not exist). A backend that keeps the info
    /// may encode it where it is, rather than copy it out first.
    fn encode_vport_info(&self, vport: u8, out: &mut [u8]) -> Result<(), WireError> {
        if self.has_vport(vport) {
            self.vport_info(vport).encode(out)
        } else {
            VeswPortInfo::vema_pod().encode(out)
        }
    }

    /// Applies a Set of the info of an existing virtual port and acts on it (opens or closes
    /// the port, changes its MAC or MTU): the writable fields of `info`
    /// ([`VeswPortInfoBytes::apply_set`]), as the request carries them; then writes the info
    /// as the Set leaves it into `out`, as [`VportBackend::encode_vport_info`] would (the
    /// answer, made while the backend still holds what it read the info under). An error
    /// (answered with its MAD status, [`WireError::Busy`] when what the change needs cannot
    /// be allocated) leaves the port as it was.
    ///
    /// [`VeswPortInfoBytes::apply_set`]: crate::wire::vema_info_bytes::VeswPortInfoBytes::apply_set
    fn set_vport_info(
        &mut self,
        vport: u8,
        info: &VeswPortInfoRef<'_>,
        out: &mut [u8],
    ) -> Result<(), WireError>;

    /// Calls `f` with the index and the value of every MAC table entry of an existing virtual
    /// port.
    fn for_each_mac_entry(&self, vport: u8, f: &mut dyn FnMut(u16, &MacTableEntry));

    /// Updates the MAC table of an existing virtual port with the entries of `table` (an
    /// all-zero MAC deletes the entry at that index), and its digest. On error the table is
    /// unchanged.
    fn update_mac_table(&mut self, vport: u8, table: &MacTable<'_>) -> Result<(), WireError>;

    /// Sets an existing virtual port back to the power-on values ([`VeswPortInfo::vema_pod`]),
    /// acted on as [`VportBackend::set_vport_info`] acts on a Set, and empties its MAC table
    /// and zeroes the digest (DeleteVesw; the port itself stays). All of it, or on error
    /// ([`WireError::Busy`] when what it needs cannot be allocated) nothing.
    fn reset_vport(&mut self, vport: u8) -> Result<(), WireError>;

    /// Calls `f` with each unicast (or, if `mcast`, multicast) address of the interface of an
    /// existing virtual port, in the order the EM sees them; returns the list's generation
    /// count.
    fn for_each_iface_mac(&self, vport: u8, mcast: bool, f: &mut dyn FnMut([u8; 6])) -> u16;

    /// The summary counters of an existing virtual port.
    fn summary_counters(&self, vport: u8) -> SummaryCounters;

    /// The error counters of an existing virtual port.
    fn error_counters(&self, vport: u8) -> ErrorCounters;
}

/// The length of every VEMA response: a whole OPA MAD.
pub const RESPONSE_LEN: usize = OPA_MGMT_MAD_SIZE;

/// Builds in `rsp` the response to the VEMA request `req` and returns its length
/// ([`RESPONSE_LEN`]).
///
/// Fails only when `req` is too short to hold a vendor MAD header (it cannot be answered) or
/// `rsp` is shorter than [`RESPONSE_LEN`]. Every other fault is answered with a MAD status.
pub fn process<B: VportBackend + ?Sized>(
    backend: &mut B,
    req: &[u8],
    rsp: &mut [u8],
) -> Result<usize, WireError> {
    // The errors in the order of `process_zeroed`'s checks.
    VemaMadHdr::decode(req)?;
    rsp.get_mut(..RESPONSE_LEN)
        .ok_or(WireError::NoSpace)?
        .fill(0);
    process_zeroed(backend, req, rsp)
}

/// [`process`] into an `rsp` whose first [`RESPONSE_LEN`] bytes are zero already (a send
/// buffer of the MAD layer is): the bytes of the answer the request does not set are not
/// written.
pub fn process_zeroed<B: VportBackend + ?Sized>(
    backend: &mut B,
    req: &[u8],
    rsp: &mut [u8],
) -> Result<usize, WireError> {
    // The header is read and answered where it is: three fields read, its bytes copied.
    let req_hdr = req
        .first_chunk::<IB_MGMT_VENDOR_HDR>()
        .ok_or(WireError::Truncated)?;
    let (rsp_hdr, rsp_data) = rsp
        .get_mut(..RESPONSE_LEN)
        .and_then(|r| r.split_first_chunk_mut::<IB_MGMT_VENDOR_HDR>())
        .ok_or(WireError::NoSpace)?;
    let req_data = req.get(IB_MGMT_VENDOR_HDR..).unwrap_or(&[]);

    let (method, attr_id, attr_mod) = VemaMadHdr::read_op(req_hdr);
    let status = match VemaOp::classify(method, attr_id) {
        Ok(op) => answer(backend, op, vport_num(attr_mod), req_data, rsp_data),
        Err(e) => Status::Error(e),
    };
    VemaMadHdr::write_response(req_hdr, status.mad_status(), rsp_hdr);
    Ok(RESPONSE_LEN)
}

/// The outcome of one request.
enum Status {
    Ok,
    Error(WireError),
}

impl Status {
    fn mad_status(&self) -> u16 {
        match self {
            Status::Ok => 0,
            Status::Error(e) => e.mad_status(),
        }
    }
}

impl From<Result<(), WireError>> for Status {
    fn from(r: Result<(), WireError>) -> Self {
        match r {
            Ok(()) => Status::Ok,
            Err(e) => Status::Error(e),
        }
    }
}

fn answer<B: VportBackend + ?Sized>(
    backend: &mut B,
    op: VemaOp,
    vport: u8,
    req: &[u8],
    rsp: &mut [u8],
) -> Status {
    if op.rejects_missing_vport() && !backend.has_vport(vport) {
        return Status::Error(WireError::NoSuchVport(vport));
    }
    match op {
        VemaOp::GetClassPortInfo => get_class_port_info(backend, rsp).into(),
        VemaOp::SetClassPortInfo => match ClassPortInfo::decode(req) {
            Ok(info) => {
                backend.set_class_port_info(&info);
                get_class_port_info(backend, rsp).into()
            }
            Err(e) => Status::Error(e),
        },
        VemaOp::GetVeswPortInfo => get_vport_info(backend, vport, rsp).into(),
        VemaOp::SetVeswPortInfo => set_vport_info(backend, vport, req, rsp).into(),
        VemaOp::GetMacEntries => match MacTableHdr::decode(req) {
            Ok(want) => get_mac_entries(backend, vport, &want, rsp).into(),
            Err(e) => Status::Error(e),
        },
        VemaOp::SetMacEntries => set_mac_entries(backend, vport, req, rsp),
        VemaOp::SetDeleteVesw => {
            // A failed reset is answered with its status (the EM deletes again), never
            // success; the answer is the info as the reset leaves it.
            match backend.reset_vport(vport) {
                Ok(()) => get_vport_info(backend, vport, rsp).into(),
                Err(e) => Status::Error(e),
            }
        }
        VemaOp::GetIfaceUcastMacs => get_iface_macs(backend, vport, false, req, rsp).into(),
        VemaOp::GetIfaceMcastMacs => get_iface_macs(backend, vport, true, req, rsp).into(),
        VemaOp::GetSummaryCounters => backend.summary_counters(vport).encode(rsp).into(),
        VemaOp::GetErrorCounters => backend.error_counters(vport).encode(rsp).into(),
    }
}

fn get_class_port_info<B: VportBackend + ?Sized>(
    backend: &B,
    rsp: &mut [u8],
) -> Result<(), WireError> {
    backend.class_port_info().vema_response().encode(rsp)
}

fn get_vport_info<B: VportBackend + ?Sized>(
    backend: &B,
    vport: u8,
    rsp: &mut [u8],
) -> Result<(), WireError> {
    backend.encode_vport_info(vport, rsp)
}

fn set_vport_info<B: VportBackend + ?Sized>(
    backend: &mut B,
    vport: u8,
    req: &[u8],
    rsp: &mut [u8],
) -> Result<(), WireError> {
    // Read where it arrived: the backend copies what it keeps.
    let info = VeswPortInfoRef::read(req)?;
    if !backend.has_vport(vport) {
        backend.add_vport(vport)?;
    }
    backend.set_vport_info(vport, &info, rsp)
}

fn get_mac_entries<B: VportBackend + ?Sized>(
    backend: &B,
    vport: u8,
    want: &MacTableHdr,
    rsp: &mut [u8],
) -> Result<(), WireError> {
    want.check_req()?;
    let hdr = MacTableHdr {
        offset: want.offset,
        num_entries: want.num_entries,
        mac_tbl_digest: backend.mac_tbl_digest(vport),
    };
    hdr.encode(rsp)?;
    let entries = rsp.get_mut(MacTableHdr::SIZE..).ok_or(WireError::NoSpace)?;
    let mut result = Ok(());
    backend.for_each_mac_entry(vport, &mut |index, entry| {
        if !hdr.covers(index) || result.is_err() {
            return;
        }
        let slot = usize::from(index.wrapping_sub(hdr.offset)).wrapping_mul(MacTableEntry::SIZE);
        result = match entries.get_mut(slot..) {
            Some(out) => entry.encode(out),
            None => Err(WireError::NoSpace),
        };
    });
    result
}

/// Set MAC entries answers like the C driver: a request out of range is answered with
/// "invalid attribute value" and no entries; a table the backend refuses is answered with
/// "unsupported method/attribute", with the (unchanged) entries.
fn set_mac_entries<B: VportBackend + ?Sized>(
    backend: &mut B,
    vport: u8,
    req: &[u8],
    rsp: &mut [u8],
) -> Status {
    let table = match MacTable::decode(req) {
        Ok(t) => t,
        Err(e) => return Status::Error(e),
    };
    let updated = backend.update_mac_table(vport, &table);
    match get_mac_entries(backend, vport, &table.hdr, rsp) {
        Err(e) => Status::Error(e),
        Ok(()) => match updated {
            Ok(()) => Status::Ok,
            Err(_) => Status::Error(WireError::UnsupportedAttribute(
                crate::wire::mad::ATTR_VESWPORT_MAC_ENTRIES,
            )),
        },
    }
}

/// The interface MAC lists: the addresses from `start_idx` on, as many as asked (all that fit
/// in the MAD if 0 or more), with the length of the whole list and its generation count.
fn get_iface_macs<B: VportBackend + ?Sized>(
    backend: &B,
    vport: u8,
    mcast: bool,
    req: &[u8],
    rsp: &mut [u8],
) -> Result<(), WireError> {
    let want = IfaceMacsHdr::decode(req)?;
    let max = want.req_count();
    let entries = rsp
        .get_mut(IfaceMacsHdr::SIZE..)
        .ok_or(WireError::NoSpace)?;
    let (mut index, mut count) = (0u16, 0u16);
    let gen_count = backend.for_each_iface_mac(vport, mcast, &mut |mac| {
        if index >= want.start_idx && count < max {
            let at = usize::from(count).wrapping_mul(mac.len());
            if let Some(slot) = entries.get_mut(at..at.wrapping_add(mac.len())) {
                slot.copy_from_slice(&mac);
                count = count.wrapping_add(1);
            }
        }
        index = index.saturating_add(1);
    });
    IfaceMacsHdr {
        start_idx: want.start_idx,
        num_macs_in_msg: count,
        tot_macs_in_lst: index,
        gen_count,
    }
    .encode(rsp)
}
