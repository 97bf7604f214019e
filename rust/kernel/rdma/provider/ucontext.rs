// SPDX-License-Identifier: GPL-2.0

//! User contexts: what `ib_uverbs` needs to give a provider's devices a
//! `/dev/infiniband/uverbsN` and open them from user space.
//!
//! `ib_uverbs_add_one()` creates the character device only for a device with an
//! `alloc_ucontext` op, and `ib_alloc_ucontext()` allocates the context with the size the
//! provider declares (`size_ib_ucontext`). A context lets user space query the device and its
//! ports (the IB core answers those through the device-level ops) and read the device's async
//! events (`ib_dispatch_event()`, delivered by the core to every open context). User objects
//! are not backed: a provider of this binding has no memory registration, creates no CQ or QP
//! for user space (`EOPNOTSUPP`, see [`verbs`](crate::rdma::verbs)), has no `create_user_ah`
//! and no `mmap`. So a context carries nothing of the provider's: it is a token the core owns.

use crate::bindings;
use core::ffi::c_int;

/// The provider-specific user ABI version (`uverbs_abi_ver`, shown in
/// `/sys/class/infiniband_verbs/uverbsN/abi_version`): version 1 is "no driver-specific data
/// in any command or answer". A user-space provider checks it when it matches the device.
pub(super) const UVERBS_ABI_VER: u32 = 1;

/// The size of a user context: the core's `struct ib_ucontext` and nothing of the provider's.
pub(super) const SIZE: usize = core::mem::size_of::<bindings::ib_ucontext>();

/// Accepts a new user context.
///
/// The core has allocated and initialised `ucontext` (device, file, restrack); the provider
/// keeps nothing for it. Driver data in `udata`, if user space sends any, is ignored: this
/// ABI version defines none, and nothing is written back.
///
/// # Safety
///
/// Called by the IB core only, as the `ib_device_ops` member of the same name.
pub(super) unsafe extern "C" fn alloc_ucontext(
    _ucontext: *mut bindings::ib_ucontext,
    _udata: *mut bindings::ib_udata,
) -> c_int {
    0
}

/// Forgets a user context: there is nothing to release, the core frees it.
///
/// # Safety
///
/// Called by the IB core only, as the `ib_device_ops` member of the same name.
pub(super) unsafe extern "C" fn dealloc_ucontext(_ucontext: *mut bindings::ib_ucontext) {}

/// Cuts a user context off a device being removed.
///
/// With this op, `ib_uverbs_remove_one()` destroys the context's objects and returns at
/// once, and user space sees `EIO` afterwards; without it, removing the device (deleting an
/// opasim device, unloading the driver) would wait until every user closed its file. A
/// context here has no mappings and no hardware to take back, so there is nothing to do.
///
/// # Safety
///
/// Called by the IB core only, as the `ib_device_ops` member of the same name.
pub(super) unsafe extern "C" fn disassociate_ucontext(_ucontext: *mut bindings::ib_ucontext) {}
