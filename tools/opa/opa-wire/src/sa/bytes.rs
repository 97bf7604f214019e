// SPDX-License-Identifier: GPL-2.0

//! Big-endian fields at fixed offsets of a record, checked: the SA records are read from
//! answers of any length, and nothing here may panic on one.

use crate::wire::WireError;

/// The `N` bytes at `off`, or [`WireError::Truncated`].
pub(crate) fn get<const N: usize>(buf: &[u8], off: usize) -> Result<[u8; N], WireError> {
    let end = off.checked_add(N).ok_or(WireError::Truncated)?;
    buf.get(off..end)
        .and_then(|b| b.try_into().ok())
        .ok_or(WireError::Truncated)
}

/// Writes `bytes` at `off`, or [`WireError::NoSpace`].
pub(crate) fn put(buf: &mut [u8], off: usize, bytes: &[u8]) -> Result<(), WireError> {
    let end = off.checked_add(bytes.len()).ok_or(WireError::NoSpace)?;
    buf.get_mut(off..end)
        .ok_or(WireError::NoSpace)?
        .copy_from_slice(bytes);
    Ok(())
}

/// The byte at `off`.
pub(crate) fn u8_at(buf: &[u8], off: usize) -> Result<u8, WireError> {
    Ok(u8::from_be_bytes(get(buf, off)?))
}

/// The big-endian `u16` at `off`.
pub(crate) fn u16_at(buf: &[u8], off: usize) -> Result<u16, WireError> {
    Ok(u16::from_be_bytes(get(buf, off)?))
}

/// The big-endian `u32` at `off`.
pub(crate) fn u32_at(buf: &[u8], off: usize) -> Result<u32, WireError> {
    Ok(u32::from_be_bytes(get(buf, off)?))
}

/// The big-endian `u64` at `off`.
pub(crate) fn u64_at(buf: &[u8], off: usize) -> Result<u64, WireError> {
    Ok(u64::from_be_bytes(get(buf, off)?))
}
