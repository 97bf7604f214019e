// SPDX-License-Identifier: GPL-2.0

//! Work completions (`struct ib_wc`): how a provider makes them, and how `poll_cq` hands them
//! to the core.

use super::{qp::Qp, recv::RecvDone, send_wr::SendWr};
use crate::{bindings, rdma::provider::Provider};
use core::{ffi::c_int, marker::PhantomData};

/// The status of a work completion (`enum ib_wc_status`, the ones a software device uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcStatus {
    /// The work request succeeded.
    Success,
    /// A local length error: the message did not fit the receive buffer.
    LocalLengthError,
    /// A general error.
    GeneralError,
}

impl WcStatus {
    fn raw(self) -> bindings::ib_wc_status {
        match self {
            Self::Success => bindings::ib_wc_status_IB_WC_SUCCESS,
            Self::LocalLengthError => bindings::ib_wc_status_IB_WC_LOC_LEN_ERR,
            Self::GeneralError => bindings::ib_wc_status_IB_WC_GENERAL_ERR,
        }
    }
}

/// The `struct ib_qp` of a completion: only handed back to the core, never dereferenced.
#[derive(Clone, Copy)]
struct QpPtr(*mut bindings::ib_qp);

// SAFETY: The pointer is only copied into `struct ib_wc` for the core, never dereferenced.
unsafe impl Send for QpPtr {}
// SAFETY: As above.
unsafe impl Sync for QpPtr {}

/// What a UD receive completion reports about the message.
#[derive(Clone, Copy, Debug)]
pub struct RecvInfo {
    /// The sender's LID.
    pub slid: u32,
    /// The sender's QP number.
    pub src_qp: u32,
    /// The service level.
    pub sl: u8,
    /// The index, in the receiving port's table, of the P_Key the packet matched.
    pub pkey_index: u16,
    /// The immediate data, if any.
    pub imm: Option<u32>,
    /// The sender asked for a solicited event.
    pub solicited: bool,
}

/// A work completion, waiting in a provider's CQ until `poll_cq` hands it to the core.
///
/// Made only from the work request it completes, which it consumes
/// ([`WorkCompletion::send`] the [`SendWr`], [`WorkCompletion::recv`] the [`RecvDone`] of a
/// receive buffer that is no longer reachable), and neither `Clone` nor `Copy`: a provider
/// cannot report a request it was not given, nor one twice (a consumer such as `ib_mad`
/// frees or reposts the request on its first completion), nor a request it then refuses, nor
/// a receive whose buffer it can still write.
pub struct WorkCompletion {
    /// The `wr_id` / `wr_cqe` union of the work request, as its bits.
    wr_id: u64,
    status: bindings::ib_wc_status,
    opcode: bindings::ib_wc_opcode,
    byte_len: u32,
    qp: QpPtr,
    info: RecvInfo,
    port_num: u32,
}

impl WorkCompletion {
    /// The completion of the send `wr` (of the QP it was posted to) on `port`.
    pub fn send(wr: SendWr<'_>, status: WcStatus, port: u32) -> Self {
        Self {
            wr_id: wr.wr_id(),
            status: status.raw(),
            opcode: bindings::ib_wc_opcode_IB_WC_SEND,
            byte_len: wr.len() as u32,
            qp: QpPtr(wr.qp()),
            info: RecvInfo {
                slid: 0,
                src_qp: 0,
                sl: 0,
                pkey_index: 0,
                imm: None,
                solicited: false,
            },
            port_num: port,
        }
    }

    /// The completion of a receive of `qp` on `port`: `byte_len` bytes (GRH included) arrived
    /// as `info` says.
    pub fn recv<T: Provider>(
        qp: &Qp<T>,
        done: RecvDone,
        status: WcStatus,
        byte_len: u32,
        info: &RecvInfo,
        port: u32,
    ) -> Self {
        Self {
            wr_id: done.wr_id,
            status: status.raw(),
            opcode: bindings::ib_wc_opcode_IB_WC_RECV,
            byte_len,
            qp: QpPtr(qp.raw()),
            info: *info,
            port_num: port,
        }
    }

    /// Whether the work request succeeded.
    pub fn is_success(&self) -> bool {
        self.status == bindings::ib_wc_status_IB_WC_SUCCESS
    }

    /// Whether the completion is a solicited event (a receive whose sender asked for one).
    pub fn solicited(&self) -> bool {
        self.info.solicited
    }

    /// The completion as the core's `struct ib_wc`, zero in what a software device does not
    /// report.
    fn into_raw(self) -> bindings::ib_wc {
        let mut wc_flags = 0;
        if self.info.imm.is_some() {
            wc_flags |= bindings::ib_wc_flags_IB_WC_WITH_IMM as c_int;
        }
        // SAFETY: An all-zero `ib_wc` is valid (integers, a null `qp`, a zero `wr_id`).
        let mut wc: bindings::ib_wc = unsafe { core::mem::MaybeUninit::zeroed().assume_init() };
        wc.__bindgen_anon_1.wr_id = self.wr_id;
        wc.status = self.status;
        wc.opcode = self.opcode;
        wc.byte_len = self.byte_len;
        wc.qp = self.qp.0;
        wc.src_qp = self.info.src_qp;
        wc.slid = self.info.slid;
        wc.wc_flags = wc_flags;
        wc.ex.imm_data = self.info.imm.unwrap_or(0).to_be();
        wc.pkey_index = self.info.pkey_index;
        wc.sl = self.info.sl;
        wc.port_num = self.port_num;
        wc
    }
}

/// The array of `poll_cq`, which a provider fills with the oldest completions of its CQ.
///
/// # Invariants
///
/// `wc` is valid for writing `num` `struct ib_wc` for `'a`, and `n <= num`.
pub struct WcWriter<'a> {
    wc: *mut bindings::ib_wc,
    num: usize,
    n: usize,
    _p: PhantomData<&'a mut bindings::ib_wc>,
}

impl<'a> WcWriter<'a> {
    /// # Safety
    ///
    /// `wc` must be valid for writing `num` entries for `'a` (the `poll_cq` call: the caller
    /// picks `'a` no longer).
    pub(super) unsafe fn new(wc: *mut bindings::ib_wc, num: usize) -> Self {
        // INVARIANT: The caller guarantees `wc` for `num` entries for `'a`; `n` starts at 0.
        Self {
            wc,
            num,
            n: 0,
            _p: PhantomData,
        }
    }

    /// How many more completions the array takes.
    pub fn room(&self) -> usize {
        self.num - self.n
    }

    /// Appends `wc`; gives it back when the array is full.
    pub fn push(&mut self, wc: WorkCompletion) -> Result<(), WorkCompletion> {
        if self.n == self.num {
            return Err(wc);
        }
        // SAFETY: `n < num`, so the entry is inside the array, valid for writing (type
        // invariant); `write` does not read or drop the possibly uninitialised old value.
        unsafe { self.wc.add(self.n).write(wc.into_raw()) };
        // INVARIANT: `n` was below `num`.
        self.n += 1;
        Ok(())
    }

    /// How many completions were written.
    pub(super) fn written(&self) -> usize {
        self.n
    }
}
