// SPDX-License-Identifier: GPL-2.0

//! Typed views of the QP attributes the core passes (`struct ib_qp_init_attr`,
//! `struct ib_qp_attr` with its mask) and of what `query_qp` answers.

use crate::{
    bindings,
    error::{code::*, Result},
};

/// The type of a QP a software UD provider can be asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpType {
    /// QP0, the subnet management interface.
    Smi,
    /// QP1, the general services interface.
    Gsi,
    /// An unreliable datagram QP.
    Ud,
}

impl QpType {
    pub(super) fn from_raw(t: bindings::ib_qp_type) -> Option<Self> {
        Some(match t {
            bindings::ib_qp_type_IB_QPT_SMI => Self::Smi,
            bindings::ib_qp_type_IB_QPT_GSI => Self::Gsi,
            bindings::ib_qp_type_IB_QPT_UD => Self::Ud,
            _ => return None,
        })
    }

    fn raw(self) -> bindings::ib_qp_type {
        match self {
            Self::Smi => bindings::ib_qp_type_IB_QPT_SMI,
            Self::Gsi => bindings::ib_qp_type_IB_QPT_GSI,
            Self::Ud => bindings::ib_qp_type_IB_QPT_UD,
        }
    }
}

/// What a QP is created with (from `struct ib_qp_init_attr`); fixed for the QP's life.
#[derive(Clone, Copy, Debug)]
pub struct QpInit {
    /// The QP's type.
    pub qp_type: QpType,
    /// The port of QP0/QP1; 0 for UD QPs (their port comes with `modify_qp`).
    pub port: u32,
    /// The send queue's depth.
    pub max_send_wr: u32,
    /// The receive queue's depth.
    pub max_recv_wr: u32,
    /// Every send completes on the send CQ (`IB_SIGNAL_ALL_WR`), not only the signaled ones.
    pub sig_all: bool,
}

/// The state of a QP (`enum ib_qp_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpState {
    /// Reset.
    Reset,
    /// Initialised: receives may be posted.
    Init,
    /// Ready to receive.
    Rtr,
    /// Ready to send.
    Rts,
    /// Send queue drained.
    Sqd,
    /// Send queue error.
    Sqe,
    /// Error.
    Err,
}

impl QpState {
    fn from_raw(s: bindings::ib_qp_state) -> Option<Self> {
        Some(match s {
            bindings::ib_qp_state_IB_QPS_RESET => Self::Reset,
            bindings::ib_qp_state_IB_QPS_INIT => Self::Init,
            bindings::ib_qp_state_IB_QPS_RTR => Self::Rtr,
            bindings::ib_qp_state_IB_QPS_RTS => Self::Rts,
            bindings::ib_qp_state_IB_QPS_SQD => Self::Sqd,
            bindings::ib_qp_state_IB_QPS_SQE => Self::Sqe,
            bindings::ib_qp_state_IB_QPS_ERR => Self::Err,
            _ => return None,
        })
    }

    pub(super) fn raw(self) -> bindings::ib_qp_state {
        match self {
            Self::Reset => bindings::ib_qp_state_IB_QPS_RESET,
            Self::Init => bindings::ib_qp_state_IB_QPS_INIT,
            Self::Rtr => bindings::ib_qp_state_IB_QPS_RTR,
            Self::Rts => bindings::ib_qp_state_IB_QPS_RTS,
            Self::Sqd => bindings::ib_qp_state_IB_QPS_SQD,
            Self::Sqe => bindings::ib_qp_state_IB_QPS_SQE,
            Self::Err => bindings::ib_qp_state_IB_QPS_ERR,
        }
    }
}

/// The attributes a UD QP's `modify_qp` may carry.
const UD_ATTRS: u32 = bindings::ib_qp_attr_mask_IB_QP_STATE
    | bindings::ib_qp_attr_mask_IB_QP_CUR_STATE
    | bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX
    | bindings::ib_qp_attr_mask_IB_QP_PORT
    | bindings::ib_qp_attr_mask_IB_QP_QKEY
    | bindings::ib_qp_attr_mask_IB_QP_SQ_PSN
    | bindings::ib_qp_attr_mask_IB_QP_EN_SQD_ASYNC_NOTIFY;

/// A `modify_qp` request: the attributes of `struct ib_qp_attr` its mask names, as far as UD
/// QPs have them.
#[derive(Clone, Copy, Debug)]
pub struct QpModify {
    mask: u32,
    /// The new state (`IB_QP_STATE`).
    pub state: Option<QpState>,
    /// The new P_Key index (`IB_QP_PKEY_INDEX`).
    pub pkey_index: Option<u16>,
    /// The new port (`IB_QP_PORT`).
    pub port: Option<u32>,
    /// The new Q_Key (`IB_QP_QKEY`).
    pub qkey: Option<u32>,
}

impl QpModify {
    /// The request, or `EINVAL` if its new state is no state.
    pub(super) fn new(attr: &bindings::ib_qp_attr, mask: u32) -> Result<Self> {
        let has = |m: u32| mask & m != 0;
        let state = if has(bindings::ib_qp_attr_mask_IB_QP_STATE) {
            Some(QpState::from_raw(attr.qp_state).ok_or(EINVAL)?)
        } else {
            None
        };
        Ok(Self {
            mask,
            state,
            pkey_index: has(bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX).then_some(attr.pkey_index),
            port: has(bindings::ib_qp_attr_mask_IB_QP_PORT).then_some(attr.port_num),
            qkey: has(bindings::ib_qp_attr_mask_IB_QP_QKEY).then_some(attr.qkey),
        })
    }

    /// Whether the request names attributes that UD QPs do not have (paths, RDMA, ...).
    pub fn has_non_ud_attrs(&self) -> bool {
        self.mask & !UD_ATTRS != 0
    }

    /// Whether the IB specification allows a QP of `qp_type` in state `cur` to go to `new`
    /// with exactly the attributes of this request (`ib_modify_qp_is_ok()`, the check rdmavt
    /// and every hardware driver make).
    pub fn transition_ok(&self, cur: QpState, new: QpState, qp_type: QpType) -> bool {
        // SAFETY: `ib_modify_qp_is_ok()` is a pure function of its arguments (it reads a
        // static table).
        unsafe { bindings::ib_modify_qp_is_ok(cur.raw(), new.raw(), qp_type.raw(), self.mask) }
    }
}

/// What `query_qp` answers: the provider's part of the QP's attributes (the capabilities come
/// from its [`QpInit`]).
#[derive(Clone, Copy, Debug)]
pub struct QpQuery {
    /// The QP's state.
    pub state: QpState,
    /// The QP's Q_Key.
    pub qkey: u32,
    /// The QP's P_Key index.
    pub pkey_index: u16,
    /// The QP's port.
    pub port: u32,
}
