// SPDX-License-Identifier: GPL-2.0

//! The `ethtool_ops` of a VNIC netdev: driver information and the device's statistics.

use super::{UlpNetdev, VnicUlp};
use crate::{bindings, str::CStr};
use core::ffi::c_int;

impl<T: VnicUlp> UlpNetdev<T> {
    pub(super) const ETHTOOL_OPS: bindings::ethtool_ops = bindings::ethtool_ops {
        get_drvinfo: Some(Self::get_drvinfo),
        get_link: Some(bindings::ethtool_op_get_link),
        get_strings: Some(Self::get_strings),
        get_sset_count: Some(Self::get_sset_count),
        get_ethtool_stats: Some(Self::get_ethtool_stats),
        // SAFETY: The other operations are absent (null).
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    pub(super) unsafe extern "C" fn get_drvinfo(
        nd: *mut bindings::net_device,
        info: *mut bindings::ethtool_drvinfo,
    ) {
        // SAFETY: `info` is the ethtool core's buffer; `nd` a netdev of this type, whose parent
        // (the device's parent, possibly none) outlives it.
        unsafe {
            copy_c_str(&mut (*info).driver, T::DRIVER_NAME.as_bytes());
            let parent = (*nd).dev.parent;
            if !parent.is_null() {
                let name = CStr::from_char_ptr(bindings::dev_name(parent));
                copy_c_str(&mut (*info).bus_info, name.as_bytes());
            }
        }
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    pub(super) unsafe extern "C" fn get_sset_count(
        _nd: *mut bindings::net_device,
        sset: c_int,
    ) -> c_int {
        if sset == bindings::ethtool_stringset_ETH_SS_STATS as c_int {
            T::ETHTOOL_STATS.len() as c_int
        } else {
            -(bindings::EOPNOTSUPP as c_int)
        }
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    pub(super) unsafe extern "C" fn get_strings(
        _nd: *mut bindings::net_device,
        sset: u32,
        data: *mut u8,
    ) {
        if sset != bindings::ethtool_stringset_ETH_SS_STATS {
            return;
        }
        let len = bindings::ETH_GSTRING_LEN as usize;
        for (i, (name, _)) in T::ETHTOOL_STATS.iter().enumerate() {
            // SAFETY: The ethtool core gives room for `get_sset_count()` strings of
            // `ETH_GSTRING_LEN` bytes.
            let slot = unsafe { core::slice::from_raw_parts_mut(data.add(i * len), len) };
            slot.fill(0);
            let n = name.len().min(len - 1);
            slot[..n].copy_from_slice(&name.as_bytes()[..n]);
        }
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    pub(super) unsafe extern "C" fn get_ethtool_stats(
        nd: *mut bindings::net_device,
        _stats: *mut bindings::ethtool_stats,
        data: *mut u64,
    ) {
        // SAFETY: Called by the ethtool core for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: The ethtool core asks only a registered netdev of this type, set up before
        // its registration, and `inner` is its part.
        let vstats = unsafe { Self::device_stats(nd, inner) };
        for (i, (_, read)) in T::ETHTOOL_STATS.iter().enumerate() {
            // SAFETY: The ethtool core gives room for `get_sset_count()` values.
            unsafe { *data.add(i) = read(&vstats) };
        }
    }
}

/// Copies `src` into the C string buffer `dst`, truncated and NUL-terminated.
fn copy_c_str<const N: usize>(dst: &mut [u8; N], src: &[u8]) {
    let n = src.len().min(N.saturating_sub(1));
    dst[..n].copy_from_slice(&src[..n]);
    if let Some(end) = dst.get_mut(n) {
        *end = 0;
    }
}
