// SPDX-License-Identifier: GPL-2.0

//! The MADs the IB core offers a provider before its agents (`ib_device_ops.process_mad`).
//!
//! C headers: [`include/rdma/ib_smi.h`](srctree/include/rdma/ib_smi.h),
//! [`include/rdma/opa_smi.h`](srctree/include/rdma/opa_smi.h)
//!
//! The core gives the device's driver "the right of first refusal" on every MAD that arrives
//! on QP0 or QP1 (`ib_mad_recv_done()` in `core/mad.c`), on every directed-route SMP a local
//! agent sends to its own port (`handle_outgoing_dr_smp()`: this is how the subnet manager and
//! the admin tools reach the local port's SMA), and on the performance queries of
//! `/sys/class/infiniband/*/ports/*/counters` (`get_perf_mad()` in `core/sysfs.c`). A hardware
//! driver answers the SMPs and PMA queries addressed to its ports there (hfi1:
//! `hfi1_process_mad()`); a MAD it does not take goes on to the agents.
//!
//! The abstraction checks what the core hands over (the port, the lengths, the work
//! completion that may be absent) and passes the provider a [`MadRequest`], a read-only view of
//! the MAD of exactly the size the core allocated for it, and a [`MadReply`], the buffer of the
//! answer. The provider answers with a [`MadVerdict`]; the abstraction turns it into the
//! core's result flags and answer size. The provider cannot write beyond the answer's buffer,
//! nor keep either buffer: both are borrowed for the call.

use crate::{bindings, error::code::*, error::Result};

/// The size of an InfiniBand MAD (`struct ib_mad`): the size of every MAD whose base version
/// is 1.
pub const IB_MAD_SIZE: usize = bindings::IB_MGMT_MAD_SIZE as usize;

/// The size of an Omni-Path MAD (`struct opa_mad`): the size of the MADs of base version
/// [`OPA_BASE_VERSION`] on an OPA port.
pub const OPA_MAD_SIZE: usize = bindings::OPA_MGMT_MAD_SIZE as usize;

/// The base version of Omni-Path MADs (`OPA_MGMT_BASE_VERSION`).
pub const OPA_BASE_VERSION: u8 = bindings::OPA_MGMT_BASE_VERSION as u8;

/// The management class of LID-routed SMPs (`IB_MGMT_CLASS_SUBN_LID_ROUTED`).
pub const CLASS_SUBN_LID_ROUTED: u8 = bindings::IB_MGMT_CLASS_SUBN_LID_ROUTED as u8;

/// The management class of directed-route SMPs (`IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE`).
pub const CLASS_SUBN_DIRECTED_ROUTE: u8 = bindings::IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE as u8;

/// The management class of performance management (`IB_MGMT_CLASS_PERF_MGMT`).
pub const CLASS_PERF_MGMT: u8 = bindings::IB_MGMT_CLASS_PERF_MGMT as u8;

/// The permissive LID of an OPA directed-route SMP (`OPA_LID_PERMISSIVE`).
pub const OPA_LID_PERMISSIVE: u32 = 0xffff_ffff;

/// The common MAD header (`struct ib_mad_hdr`), the first 24 bytes of every MAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MadHdr {
    /// `BaseVersion`: 1 (InfiniBand) or [`OPA_BASE_VERSION`].
    pub base_version: u8,
    /// `MgmtClass`.
    pub mgmt_class: u8,
    /// `ClassVersion`.
    pub class_version: u8,
    /// `Method` (with the response bit, 0x80).
    pub method: u8,
    /// `Status` (for a directed-route SMP, bit 15 is the direction: set on the way back).
    pub status: u16,
    /// The class-specific field (for a directed-route SMP: hop pointer, then hop count).
    pub class_specific: u16,
    /// `TransactionID`.
    pub tid: u64,
    /// `AttributeID`.
    pub attr_id: u16,
    /// `AttributeModifier`.
    pub attr_mod: u32,
}

/// The size of [`MadHdr`] on the wire.
pub const MAD_HDR_SIZE: usize = 24;

fn be16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some(&[x, y]) => u16::from_be_bytes([x, y]),
        _ => 0,
    }
}

fn be32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(&[a, c, d, e]) => u32::from_be_bytes([a, c, d, e]),
        _ => 0,
    }
}

fn be64(b: &[u8], at: usize) -> u64 {
    (u64::from(be32(b, at)) << 32) | u64::from(be32(b, at + 4))
}

impl MadHdr {
    /// Reads the header at the start of `mad` (fields beyond its end read as zero).
    pub fn read(mad: &[u8]) -> Self {
        Self {
            base_version: mad.first().copied().unwrap_or(0),
            mgmt_class: mad.get(1).copied().unwrap_or(0),
            class_version: mad.get(2).copied().unwrap_or(0),
            method: mad.get(3).copied().unwrap_or(0),
            status: be16(mad, 4),
            class_specific: be16(mad, 6),
            tid: be64(mad, 8),
            attr_id: be16(mad, 16),
            attr_mod: be32(mad, 20),
        }
    }
}

/// A subnet management packet (`struct ib_smp` or `struct opa_smp`): the fields its route and
/// its M_Key add to the MAD header, and where its data is.
#[derive(Clone, Copy)]
pub struct Smp<'a> {
    mad: &'a [u8],
    opa: bool,
}

impl<'a> Smp<'a> {
    /// Views `mad` as an SMP: an OPA SMP if its base version is [`OPA_BASE_VERSION`], an IB one
    /// otherwise. `None` if it is not an SMP (class 0x01 or 0x81) or too short for its layout.
    pub fn new(mad: &'a [u8]) -> Option<Self> {
        let hdr = MadHdr::read(mad);
        if hdr.mgmt_class != CLASS_SUBN_LID_ROUTED && hdr.mgmt_class != CLASS_SUBN_DIRECTED_ROUTE {
            return None;
        }
        let opa = hdr.base_version == OPA_BASE_VERSION;
        let size = if opa { OPA_MAD_SIZE } else { IB_MAD_SIZE };
        (mad.len() >= size).then_some(Self {
            mad: mad.get(..size)?,
            opa,
        })
    }

    /// Whether this is an OPA SMP (`struct opa_smp`).
    pub fn is_opa(&self) -> bool {
        self.opa
    }

    /// Whether the SMP is directed-route (class 0x81).
    pub fn is_directed(&self) -> bool {
        MadHdr::read(self.mad).mgmt_class == CLASS_SUBN_DIRECTED_ROUTE
    }

    /// The direction bit of a directed-route SMP: `true` on the way back (`D` of `Status`).
    pub fn returning(&self) -> bool {
        MadHdr::read(self.mad).status & 0x8000 != 0
    }

    /// The hop pointer.
    pub fn hop_ptr(&self) -> u8 {
        self.mad.get(6).copied().unwrap_or(0)
    }

    /// The hop count.
    pub fn hop_cnt(&self) -> u8 {
        self.mad.get(7).copied().unwrap_or(0)
    }

    /// `M_Key`.
    pub fn mkey(&self) -> u64 {
        be64(self.mad, 24)
    }

    /// `DrSLID`, widened: the IB permissive LID 0xffff reads as [`OPA_LID_PERMISSIVE`].
    pub fn dr_slid(&self) -> u32 {
        if self.opa {
            be32(self.mad, 32)
        } else {
            widen(be16(self.mad, 32))
        }
    }

    /// `DrDLID`, widened as [`Smp::dr_slid`].
    pub fn dr_dlid(&self) -> u32 {
        if self.opa {
            be32(self.mad, 36)
        } else {
            widen(be16(self.mad, 34))
        }
    }

    /// The initial path of a directed-route SMP (64 hops).
    pub fn initial_path(&self) -> &'a [u8] {
        let at = if self.opa { 40 } else { 128 };
        self.mad.get(at..at + 64).unwrap_or(&[])
    }

    /// The return path of a directed-route SMP (64 hops).
    pub fn return_path(&self) -> &'a [u8] {
        let at = if self.opa { 104 } else { 192 };
        self.mad.get(at..at + 64).unwrap_or(&[])
    }

    /// Where the SMP's data starts (`opa_get_smp_data()`): after the route of a
    /// directed-route SMP, after the M_Key of a LID-routed one.
    pub fn data_offset(&self) -> usize {
        match (self.opa, self.is_directed()) {
            (true, true) => 176,
            (true, false) => 32,
            (false, _) => 64,
        }
    }

    /// The SMP's data (`opa_get_smp_data()`, of `opa_get_smp_data_size()` bytes).
    pub fn data(&self) -> &'a [u8] {
        let (at, len) = match (self.opa, self.is_directed()) {
            (true, true) => (176, 1872),
            (true, false) => (32, 2016),
            (false, _) => (64, 64),
        };
        self.mad.get(at..at + len).unwrap_or(&[])
    }
}

fn widen(lid: u16) -> u32 {
    if lid == 0xffff {
        OPA_LID_PERMISSIVE
    } else {
        lid.into()
    }
}

/// Where a MAD came from, as the core's work completion for it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MadSource {
    /// The source LID (for a local directed-route SMP: its `DrSLID`, 0xffff if permissive).
    pub slid: u32,
    /// The index in the port's P_Key table of the P_Key the MAD came with.
    pub pkey_index: u16,
    /// The bytes received, the 40 of a GRH included (`ib_wc.byte_len`).
    pub byte_len: u32,
}

/// A MAD the core offers the provider: its bytes (256 for base version 1, 2048 for OPA MADs
/// on an OPA port), the port, and where it came from.
pub struct MadRequest<'a> {
    mad: &'a [u8],
    port: u32,
    source: Option<MadSource>,
    ignore_mkey: bool,
}

impl<'a> MadRequest<'a> {
    /// A request of the MAD `mad` on `port`, from `source` (`None` for the core's own
    /// queries, which `/sys/class/infiniband/*/ports/*/counters` makes), whose M_Key the
    /// provider is not to check if `ignore_mkey` (`IB_MAD_IGNORE_MKEY`).
    ///
    /// `EINVAL` unless `mad` has exactly the size of its base version: 256 bytes, or 2048 for an
    /// OPA MAD.
    pub fn new(
        mad: &'a [u8],
        port: u32,
        source: Option<MadSource>,
        ignore_mkey: bool,
    ) -> Result<Self> {
        let want = match mad.first() {
            Some(&OPA_BASE_VERSION) => OPA_MAD_SIZE,
            Some(_) => IB_MAD_SIZE,
            None => return Err(EINVAL),
        };
        if mad.len() != want {
            return Err(EINVAL);
        }
        Ok(Self {
            mad,
            port,
            source,
            ignore_mkey,
        })
    }

    /// The MAD's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.mad
    }

    /// The MAD's header.
    pub fn hdr(&self) -> MadHdr {
        MadHdr::read(self.mad)
    }

    /// The MAD as an SMP, if it is one.
    pub fn smp(&self) -> Option<Smp<'a>> {
        Smp::new(self.mad)
    }

    /// The port the MAD came in on (checked to exist).
    pub fn port(&self) -> u32 {
        self.port
    }

    /// Where the MAD came from; `None` for the core's own queries.
    pub fn source(&self) -> Option<MadSource> {
        self.source
    }

    /// Whether the M_Key is not to be checked (`IB_MAD_IGNORE_MKEY`).
    pub fn ignore_mkey(&self) -> bool {
        self.ignore_mkey
    }
}

/// The buffer of the answer to a [`MadRequest`], and the P_Key index to send it with.
pub struct MadReply<'a> {
    buf: &'a mut [u8],
    pkey_index: u16,
}

impl<'a> MadReply<'a> {
    /// A reply buffer over `buf`, at least 256 bytes (else `EINVAL`).
    pub fn new(buf: &'a mut [u8]) -> Result<Self> {
        if buf.len() < IB_MAD_SIZE {
            return Err(EINVAL);
        }
        Ok(Self { buf, pkey_index: 0 })
    }

    /// The buffer (as long as the core allocated: at least the request's size).
    pub fn buf(&mut self) -> &mut [u8] {
        self.buf
    }

    /// Sets the index in the port's P_Key table of the P_Key the answer is sent with (OPA
    /// ports: hfi1 answers on the limited management P_Key, 0x7fff).
    pub fn set_pkey_index(&mut self, index: u16) {
        self.pkey_index = index;
    }

    /// The P_Key index set by [`MadReply::set_pkey_index`].
    pub fn pkey_index(&self) -> u16 {
        self.pkey_index
    }
}

/// What the provider does with a MAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MadVerdict {
    /// Not the provider's: the core gives it to its agents (`IB_MAD_RESULT_SUCCESS`).
    Pass,
    /// Taken and dropped (`IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED`).
    Consumed,
    /// Answered: the reply buffer's first `n` bytes are the answer (rounded up to 8 bytes, as
    /// hfi1 sizes OPA answers), which the core sends back
    /// (`IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY`).
    Reply(usize),
    /// Refused without an answer, as for a bad M_Key (`IB_MAD_RESULT_FAILURE`).
    Failure,
}

impl MadVerdict {
    /// The core's result flags.
    pub fn flags(self) -> u32 {
        match self {
            Self::Pass => bindings::ib_mad_result_IB_MAD_RESULT_SUCCESS,
            Self::Consumed => {
                bindings::ib_mad_result_IB_MAD_RESULT_SUCCESS
                    | bindings::ib_mad_result_IB_MAD_RESULT_CONSUMED
            }
            Self::Reply(_) => {
                bindings::ib_mad_result_IB_MAD_RESULT_SUCCESS
                    | bindings::ib_mad_result_IB_MAD_RESULT_REPLY
            }
            Self::Failure => bindings::ib_mad_result_IB_MAD_RESULT_FAILURE,
        }
    }
}

/// What a call of `process_mad` gave: the result flags, the size of the answer and its P_Key
/// index, as the core reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MadOutcome {
    /// The result flags (`IB_MAD_RESULT_*`).
    pub flags: u32,
    /// `*out_mad_size` after the call.
    pub size: usize,
    /// `*out_mad_pkey_index` after the call.
    pub pkey_index: u16,
}
