// SPDX-License-Identifier: GPL-2.0

//! The `process_mad` op of a provider: the trampoline the IB core calls with every MAD it
//! offers the driver first, and the call a test makes the way the core does.

use super::adapter::Adapter;
use super::mad::{
    MadOutcome, MadReply, MadRequest, MadSource, MadVerdict, IB_MAD_SIZE, OPA_BASE_VERSION,
    OPA_MAD_SIZE,
};
use super::{Provider, ProviderDevice};
use crate::{bindings, error::code::*};
use core::ffi::c_int;

impl<T: Provider> Adapter<T> {
    /// Runs [`Provider::process_mad`] on a MAD of `port`, as the core does, and returns what
    /// the core would read: the result flags, the answer's size, its P_Key index.
    ///
    /// `mad` must have the size of its base version on that port (256 bytes, 2048 for an OPA
    /// MAD on an OPA port) and `out` at least as many bytes; `EINVAL` otherwise, or if the port
    /// does not exist.
    pub(super) fn call_process_mad(
        dev: &ProviderDevice<T>,
        port: u32,
        mad: &[u8],
        source: Option<MadSource>,
        ignore_mkey: bool,
        out: &mut [u8],
    ) -> crate::error::Result<MadOutcome> {
        if port == 0 || port > dev.port_count() {
            return Err(EINVAL);
        }
        let want = Self::mad_size(dev, port, mad.first().copied().unwrap_or(0));
        if mad.len() != want || out.len() < want {
            return Err(EINVAL);
        }
        let mut wc: bindings::ib_wc =
            // SAFETY: `struct ib_wc` is valid zeroed (a null `wr_cqe`, zero fields).
            unsafe { core::mem::MaybeUninit::zeroed().assume_init() };
        if let Some(s) = source {
            wc.slid = s.slid;
            wc.pkey_index = s.pkey_index;
            wc.byte_len = s.byte_len;
            wc.port_num = port;
        }
        let wc_ptr = if source.is_some() {
            &wc as *const bindings::ib_wc
        } else {
            core::ptr::null()
        };
        let mut size = out.len();
        let mut pkey_index = 0u16;
        let flags = if ignore_mkey {
            bindings::ib_process_mad_flags_IB_MAD_IGNORE_MKEY as c_int
        } else {
            0
        };
        // SAFETY: `dev` is a device of `T`; `port` exists; `mad` has the size the trampoline
        // reads for its base version and `out` at least as many bytes (`size` says how many),
        // both distinct and valid for the call; `wc_ptr` is null or a valid work completion.
        let ret = unsafe {
            Self::process_mad(
                dev.as_raw(),
                flags,
                port,
                wc_ptr,
                core::ptr::null(),
                mad.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                &mut size,
                &mut pkey_index,
            )
        };
        Ok(MadOutcome {
            flags: ret as u32,
            size,
            pkey_index,
        })
    }

    /// The bytes of a MAD of base version `base` on `port` of `dev` (which exists), as the
    /// core allocates them: an OPA MAD on an OPA port has 2048, any other 256. The port's
    /// capability is the one the core keeps (`rdma_cap_opa_mad()`), which its buffers are
    /// sized by, not the provider's answer now, which could differ.
    fn mad_size(dev: &ProviderDevice<T>, port: u32, base: u8) -> usize {
        // SAFETY: `dev` is a device the core has set up its ports' data for (its ops run from
        // then on, and only they and a registration hand out a `ProviderDevice`); `port` is
        // one of its ports (the caller's check).
        let opa = unsafe { bindings::rdma_cap_opa_mad(dev.as_raw(), port) };
        if opa && base == OPA_BASE_VERSION {
            OPA_MAD_SIZE
        } else {
            IB_MAD_SIZE
        }
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a device of `T`, an existing `port`, and the MADs of
    /// its callers (`ib_mad_recv_done()`, `handle_outgoing_dr_smp()`, `get_perf_mad()`):
    /// `in_mad` readable for the size of its base version on the port (see `mad_size`),
    /// `out_mad` writable for `*out_mad_size` bytes and distinct from it, `in_wc` null or valid,
    /// `out_mad_pkey_index` null or writable.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe extern "C" fn process_mad(
        ibdev: *mut bindings::ib_device,
        flags: c_int,
        port: u32,
        in_wc: *const bindings::ib_wc,
        _in_grh: *const bindings::ib_grh,
        in_mad: *const bindings::ib_mad,
        out_mad: *mut bindings::ib_mad,
        out_mad_size: *mut usize,
        out_mad_pkey_index: *mut u16,
    ) -> c_int {
        let failure = bindings::ib_mad_result_IB_MAD_RESULT_FAILURE as c_int;
        // SAFETY: The caller passes a device of `T`, as to every op of `Adapter::OPS`.
        let dev = unsafe { ProviderDevice::<T>::from_raw(ibdev) };
        if port == 0 || port > dev.port_count() || in_mad.is_null() || out_mad.is_null() {
            return failure;
        }
        if out_mad_size.is_null() {
            return failure;
        }
        // SAFETY: `in_mad` is readable for at least the 256 bytes of any MAD.
        let base = unsafe { *in_mad.cast::<u8>() };
        let in_len = Self::mad_size(dev, port, base);
        // SAFETY: `out_mad_size` is valid (checked non-null, the caller's).
        let out_len = unsafe { *out_mad_size };
        if out_len < in_len {
            return failure;
        }
        // SAFETY: The caller guarantees `in_len` readable bytes at `in_mad`, which nothing
        // writes during the call.
        let input = unsafe { core::slice::from_raw_parts(in_mad.cast::<u8>(), in_len) };
        // SAFETY: The caller guarantees `out_len` writable bytes at `out_mad`, distinct from
        // `in_mad` and used by no one else during the call.
        let output = unsafe { core::slice::from_raw_parts_mut(out_mad.cast::<u8>(), out_len) };
        let source = if in_wc.is_null() {
            None
        } else {
            // SAFETY: `in_wc` is valid (checked non-null, the caller's).
            let wc = unsafe { &*in_wc };
            Some(MadSource {
                slid: wc.slid,
                pkey_index: wc.pkey_index,
                byte_len: wc.byte_len,
            })
        };
        let ignore_mkey = flags & bindings::ib_process_mad_flags_IB_MAD_IGNORE_MKEY as c_int != 0;
        let (Ok(req), Ok(mut reply)) = (
            MadRequest::new(input, port, source, ignore_mkey),
            MadReply::new(output),
        ) else {
            return failure;
        };
        // A MAD passed on keeps the P_Key index it came with (the core gives the agents the
        // index written here).
        reply.set_pkey_index(source.map_or(0, |s| s.pkey_index));
        let verdict = T::process_mad(dev, &req, &mut reply);
        let pkey_index = reply.pkey_index();
        let size = match verdict {
            MadVerdict::Reply(n) if n > out_len => return failure,
            // hfi1 sizes OPA answers to 8 bytes (`hfi1_process_opa_mad()`).
            MadVerdict::Reply(n) => Some(n.next_multiple_of(8).min(out_len)),
            // As hfi1: a MAD passed on keeps its received size.
            MadVerdict::Pass if base == OPA_BASE_VERSION => {
                source.map(|s| (s.byte_len as usize).saturating_sub(40))
            }
            _ => None,
        };
        if let Some(size) = size {
            // SAFETY: `out_mad_size` is valid (checked non-null above).
            unsafe { *out_mad_size = size };
        }
        if !out_mad_pkey_index.is_null() {
            // SAFETY: `out_mad_pkey_index` is valid (checked non-null, the caller's).
            unsafe { *out_mad_pkey_index = pkey_index };
        }
        verdict.flags() as c_int
    }
}
