// SPDX-License-Identifier: GPL-2.0

//! Address handles (`struct ib_ah`) of UD destinations.

use crate::{bindings, error::code::*, types::Opaque};
use core::{ffi::c_int, ptr::addr_of_mut};

/// A UD destination (from `struct rdma_ah_attr`).
#[derive(Clone, Copy, Debug)]
pub struct AhAttr {
    /// The destination LID.
    pub dlid: u32,
    /// The service level.
    pub sl: u8,
    /// The source path bits.
    pub src_path_bits: u8,
    /// The static rate.
    pub static_rate: u8,
    /// The local port.
    pub port: u32,
    pub(super) kind: bindings::rdma_ah_attr_type,
}

/// An address handle: the core's `struct ib_ah` and the destination.
///
/// # Invariants
///
/// `ib` is a `struct ib_ah` the core allocated with the size of `Self`, and `attr` is
/// initialised from a successful `create_ah` until `destroy_ah`.
#[repr(C)]
pub struct Ah {
    pub(super) ib: Opaque<bindings::ib_ah>,
    pub(super) attr: AhAttr,
}

impl Ah {
    /// # Safety
    ///
    /// Called by the IB core only, with a zeroed AH of the size of `Self`.
    pub(crate) unsafe extern "C" fn create_ah_callback(
        ah: *mut bindings::ib_ah,
        init: *mut bindings::rdma_ah_init_attr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // The core allocates the AH with `kzalloc()`, whose alignment (at least 8 bytes) must
        // do for `Self`.
        crate::build_assert!(core::mem::align_of::<Self>() <= 8);
        // SAFETY: `init` and its `ah_attr` are valid for the call, by the op's contract.
        let a = unsafe { &*(*init).ah_attr };
        if a.ah_flags & bindings::ib_ah_flags_IB_AH_GRH as u8 != 0 {
            // Global routing is not simulated.
            return EOPNOTSUPP.to_errno();
        }
        let dlid = match a.type_ {
            // SAFETY: The union member matches the type.
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_IB => unsafe {
                a.__bindgen_anon_1.ib.dlid.into()
            },
            // SAFETY: The union member matches the type.
            bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_OPA => unsafe {
                a.__bindgen_anon_1.opa.dlid
            },
            _ => return EINVAL.to_errno(),
        };
        // SAFETY: As for `dlid` (both members keep the path bits at the same place, but read
        // the one of the type).
        let src_path_bits = unsafe {
            if a.type_ == bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_IB {
                a.__bindgen_anon_1.ib.src_path_bits
            } else {
                a.__bindgen_anon_1.opa.src_path_bits
            }
        };
        let attr = AhAttr {
            dlid,
            sl: a.sl,
            src_path_bits,
            static_rate: a.static_rate,
            port: a.port_num,
            kind: a.type_,
        };
        // INVARIANT: `attr` is initialised here, by a `create_ah` that succeeds.
        // SAFETY: `ah` is the core's allocation of the size of `Ah`, aligned enough (checked
        // above), so `attr` is valid for writing; it is plain data, nothing to drop.
        unsafe { addr_of_mut!((*ah.cast::<Ah>()).attr).write(attr) };
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised AH.
    pub(crate) unsafe extern "C" fn query_ah_callback(
        ah: *mut bindings::ib_ah,
        out: *mut bindings::rdma_ah_attr,
    ) -> c_int {
        // SAFETY: The core queries AHs of this device, which `create_ah_callback` initialised
        // (type invariant of `Ah`).
        let attr = unsafe { (*ah.cast::<Ah>()).attr };
        // SAFETY: `out` is valid for writing, by the op's contract.
        let out = unsafe { &mut *out };
        // SAFETY: A zeroed `rdma_ah_attr` is valid (no GRH, a null `sgid_attr`).
        *out = unsafe { core::mem::MaybeUninit::zeroed().assume_init() };
        out.type_ = attr.kind;
        out.sl = attr.sl;
        out.static_rate = attr.static_rate;
        out.port_num = attr.port;
        if attr.kind == bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_OPA {
            out.__bindgen_anon_1.opa.dlid = attr.dlid;
            out.__bindgen_anon_1.opa.src_path_bits = attr.src_path_bits;
        } else {
            out.__bindgen_anon_1.ib.dlid = attr.dlid as u16;
            out.__bindgen_anon_1.ib.src_path_bits = attr.src_path_bits;
        }
        0
    }

    /// AHs own nothing.
    ///
    /// # Safety
    ///
    /// Called by the IB core only, as `destroy_ah`.
    pub(crate) unsafe extern "C" fn destroy_ah_callback(
        _ah: *mut bindings::ib_ah,
        _flags: u32,
    ) -> c_int {
        0
    }
}
