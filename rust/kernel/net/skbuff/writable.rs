// SPDX-License-Identifier: GPL-2.0

//! The socket buffers whose holder may write them: [`SkBuffMut`] (no clone shares the buffer)
//! and [`SkBuffHead`] (the headroom is its own); see the parent module.

use super::SkBuff;
use crate::{bindings, prelude::*};
use core::ops::Deref;

/// Moves the start of the data of `skb` `len` bytes back into the headroom, zeroes those bytes
/// and returns them; fails if the headroom is shorter.
///
/// # Safety
///
/// The headroom of `skb` is not shared with another `sk_buff` (`!skb_header_cloned()`).
#[inline]
unsafe fn push_zeroed(skb: &SkBuff, len: u32) -> Result<*mut u8> {
    if len > skb.headroom() {
        return Err(EINVAL);
    }
    let skb = skb.0.as_ptr();
    // SAFETY: The buffer is valid and ours, with `len` bytes of headroom (checked above), which
    // no other `sk_buff` uses (the caller guarantees it): the new start is still in the head.
    // This is `__skb_push()`, which the checked `skb_push()` calls; written out here because
    // transmit pushes a header per frame and the C function would be a call per push. The
    // bytes are zeroed: they come from the allocator, uninitialised.
    unsafe {
        (*skb).data = (*skb).data.sub(len as usize);
        (*skb).len += len;
        core::ptr::write_bytes((*skb).data, 0, len as usize);
        Ok((*skb).data)
    }
}

/// An owned socket buffer that no clone shares (`!skb_cloned()`): its data can be written,
/// prepended to and appended to.
///
/// It has no `DerefMut` to [`SkBuff`]: through one, `core::mem::swap` could put any buffer,
/// a shared one included, behind a `SkBuffMut`.
///
/// # Invariants
///
/// No other `sk_buff` shares the head (data and headroom) of `self.0` (`!skb_cloned()`).
pub struct SkBuffMut(pub(super) SkBuff);

impl SkBuffMut {
    /// The buffer, which may be shared from then on.
    #[inline]
    pub fn into_inner(self) -> SkBuff {
        self.0
    }

    /// The buffer as one that can be prepended to.
    #[inline]
    pub fn into_head(self) -> SkBuffHead {
        // INVARIANT: Not cloned at all, so its header is not cloned either.
        SkBuffHead {
            skb: self.0,
            room: 0,
        }
    }

    #[inline]
    fn ptr(&self) -> *mut bindings::sk_buff {
        self.0 .0.as_ptr()
    }

    /// Moves the start of an empty buffer `len` bytes on, to make headroom (`skb_reserve()`).
    pub fn reserve(&mut self, len: u32) -> Result {
        if !self.is_empty() || len > self.tailroom() {
            return Err(EINVAL);
        }
        // SAFETY: The buffer is valid and ours, empty, and has `len` bytes of room.
        unsafe { bindings::skb_reserve(self.ptr(), len as i32) };
        Ok(())
    }

    /// Appends `len` zeroed bytes to the data and returns them (`skb_put_zero()`).
    pub fn put(&mut self, len: u32) -> Result<&mut [u8]> {
        if self.head_len() != self.len() || len > self.tailroom() {
            return Err(EINVAL);
        }
        // SAFETY: The buffer is valid and ours, linear, with `len` bytes of tailroom in a head
        // of its own (type invariant): `skb_put` returns the start of the `len` new bytes,
        // which are zeroed before they are handed out.
        unsafe {
            let p = bindings::skb_put(self.ptr(), len).cast::<u8>();
            core::ptr::write_bytes(p, 0, len as usize);
            Ok(core::slice::from_raw_parts_mut(p, len as usize))
        }
    }

    /// Appends `data` to the data.
    pub fn put_data(&mut self, data: &[u8]) -> Result {
        let len = u32::try_from(data.len()).map_err(|_| EINVAL)?;
        self.put(len)?.copy_from_slice(data);
        Ok(())
    }

    /// Prepends `len` zeroed bytes to the data and returns them (`skb_push()`).
    #[inline]
    pub fn push(&mut self, len: u32) -> Result<&mut [u8]> {
        // SAFETY: No clone shares the head (type invariant).
        let p = unsafe { push_zeroed(&self.0, len)? };
        // SAFETY: `push_zeroed` made the `len` bytes at `p` part of the data, initialised, in a
        // head of our own, borrowed as long as `self`.
        Ok(unsafe { core::slice::from_raw_parts_mut(p, len as usize) })
    }

    /// The linear part of the data, to change.
    pub fn data_mut(&mut self) -> &mut [u8] {
        let len = self.head_len() as usize;
        // SAFETY: As in `SkBuffRef::data`; `&mut self` makes the access exclusive, and no clone
        // shares the data (type invariant).
        unsafe { core::slice::from_raw_parts_mut((*self.ptr()).data, len) }
    }

    /// Sets the flow hash ([`SkBuff::set_hash`]).
    pub fn set_hash(&mut self, hash: u32) {
        self.0.set_hash(hash);
    }

    /// Sets the link-layer protocol ([`SkBuff::set_protocol`]).
    pub fn set_protocol(&mut self, protocol: u16) {
        self.0.set_protocol(protocol);
    }
}

impl Deref for SkBuffMut {
    type Target = SkBuff;

    #[inline]
    fn deref(&self) -> &SkBuff {
        &self.0
    }
}

/// An owned socket buffer whose headroom is its own (`!skb_header_cloned()`, as
/// `skb_cow_head()` leaves it): headers can be pushed in front of its data. The data itself
/// may be shared with a clone that uses only the payload (`skb_header_release()`, as TCP's
/// clones do), so it is only read.
///
/// # Invariants
///
/// The headroom of `skb` is not shared with another `sk_buff` (`!skb_header_cloned()`), and
/// holds at least `room` bytes.
pub struct SkBuffHead {
    pub(super) skb: SkBuff,
    /// Headroom known to be there, so that a push within it needs no check: a driver that
    /// asked [`SkBuff::cow_head`] for room for its header pushes it with no test per frame.
    pub(super) room: u32,
}

impl SkBuffHead {
    /// The buffer, which may be shared from then on.
    #[inline]
    pub fn into_inner(self) -> SkBuff {
        self.skb
    }

    /// Prepends `len` zeroed bytes to the data and returns them (`skb_push()`).
    #[inline]
    pub fn push(&mut self, len: u32) -> Result<&mut [u8]> {
        // SAFETY: The headroom is not shared (type invariant).
        let p = unsafe { push_zeroed(&self.skb, len)? };
        // INVARIANT: The push used `len` bytes of the headroom, perhaps of the known room.
        self.room = self.room.saturating_sub(len);
        // SAFETY: `push_zeroed` made the `len` bytes at `p` part of the data, initialised, in
        // the buffer's own headroom, borrowed as long as `self`.
        Ok(unsafe { core::slice::from_raw_parts_mut(p, len as usize) })
    }

    /// Prepends `bytes` to the data (`skb_push()` and a copy): a header built whole, whose
    /// stores go straight into the headroom, with no zeroing first.
    #[inline]
    pub fn push_bytes<const N: usize>(&mut self, bytes: [u8; N]) -> Result {
        let len = u32::try_from(N).map_err(|_| EINVAL)?;
        // Within the known room (usually a constant: no test), else as the buffer says.
        if len > self.room && len > self.headroom() {
            return Err(EINVAL);
        }
        // INVARIANT: The push uses `len` bytes of the headroom, perhaps of the known room.
        self.room = self.room.saturating_sub(len);
        let skb = self.skb.0.as_ptr();
        // SAFETY: The buffer is valid and ours, with `len` bytes of headroom (checked above)
        // that no other `sk_buff` uses (type invariant): the new start is still in the head,
        // and the `N` bytes there are written whole (`__skb_push()` and a copy).
        unsafe {
            (*skb).data = (*skb).data.sub(N);
            // The headroom bounds `len`, and a buffer's length its size: no overflow.
            (*skb).len = (*skb).len.wrapping_add(len);
            (*skb).data.cast::<[u8; N]>().write_unaligned(bytes);
        }
        Ok(())
    }
}

impl Deref for SkBuffHead {
    type Target = SkBuff;

    #[inline]
    fn deref(&self) -> &SkBuff {
        &self.skb
    }
}
