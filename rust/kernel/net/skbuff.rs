// SPDX-License-Identifier: GPL-2.0

//! Socket buffers.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)

use crate::{alloc::AllocError, alloc::Flags, bindings, error::to_result, prelude::*};
use core::ptr::NonNull;

/// A socket buffer (`struct sk_buff`) that the holder owns: it is freed when dropped, unless
/// handed on with [`SkBuff::into_raw`].
///
/// Only the linear part of the buffer (the head) is accessible; the `put`, `push` and `pull`
/// operations check their bounds and fail instead of hitting the C functions' BUGs.
///
/// # Invariants
///
/// `self.0` points to a valid `struct sk_buff` that nothing else owns or uses while `self`
/// exists.
pub struct SkBuff(NonNull<bindings::sk_buff>);

// SAFETY: An owned `sk_buff` may be freed or handed on from any thread.
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// Allocates a buffer of `size` bytes of data room, empty, with no headroom.
    pub fn alloc(size: u32, flags: Flags) -> Result<Self, AllocError> {
        // SAFETY: FFI call without preconditions.
        let skb = unsafe { bindings::alloc_skb(size, flags.as_raw()) };
        NonNull::new(skb).map(Self).ok_or(AllocError)
    }

    /// Takes ownership of a raw socket buffer.
    ///
    /// # Safety
    ///
    /// `skb` must be a valid `struct sk_buff` whose ownership (the duty to free or hand it on)
    /// passes to the returned value, and that nothing else uses meanwhile.
    pub unsafe fn from_raw(skb: NonNull<bindings::sk_buff>) -> Self {
        // INVARIANT: As the caller guarantees.
        Self(skb)
    }

    /// Gives up ownership: the caller must free or hand on the buffer.
    pub fn into_raw(self) -> NonNull<bindings::sk_buff> {
        let skb = self.0;
        core::mem::forget(self);
        skb
    }

    fn raw(&self) -> &bindings::sk_buff {
        // SAFETY: By the type invariant the buffer is valid and ours.
        unsafe { self.0.as_ref() }
    }

    /// The length of the data, head and fragments.
    pub fn len(&self) -> u32 {
        self.raw().len
    }

    /// Whether there is no data.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The length of the linear part of the data (`skb_headlen()`).
    pub fn head_len(&self) -> u32 {
        let skb = self.raw();
        skb.len - skb.data_len
    }

    /// Room before the data (`skb_headroom()`).
    pub fn headroom(&self) -> u32 {
        // SAFETY: By the type invariant the buffer is valid.
        unsafe { bindings::skb_headroom(self.0.as_ptr()) }
    }

    /// Room after the data in the head (`skb_tailroom()`).
    pub fn tailroom(&self) -> u32 {
        // SAFETY: By the type invariant the buffer is valid.
        unsafe { bindings::skb_tailroom(self.0.as_ptr()) }
    }

    /// Moves the start of an empty buffer `len` bytes on, to make headroom (`skb_reserve()`).
    pub fn reserve(&mut self, len: u32) -> Result {
        if !self.is_empty() || len > self.tailroom() {
            return Err(EINVAL);
        }
        // SAFETY: The buffer is valid and ours, empty, and has `len` bytes of room.
        unsafe { bindings::skb_reserve(self.0.as_ptr(), len as i32) };
        Ok(())
    }

    /// Makes sure there are `headroom` bytes before the data and that the head is not shared
    /// with a clone, so that [`SkBuff::push`] can write there (`skb_cow_head()`).
    pub fn cow_head(&mut self, headroom: u32) -> Result {
        // SAFETY: The buffer is valid and ours.
        to_result(unsafe { bindings::skb_cow_head(self.0.as_ptr(), headroom) })
    }

    /// Appends `len` bytes to the data and returns them (`skb_put()`).
    pub fn put(&mut self, len: u32) -> Result<&mut [u8]> {
        if self.raw().data_len != 0 || len > self.tailroom() {
            return Err(EINVAL);
        }
        // SAFETY: The buffer is valid and ours, linear, with `len` bytes of tailroom: `skb_put`
        // returns the start of the `len` new bytes, which belong to us like the buffer.
        unsafe {
            let p = bindings::skb_put(self.0.as_ptr(), len);
            Ok(core::slice::from_raw_parts_mut(
                p.cast::<u8>(),
                len as usize,
            ))
        }
    }

    /// Pads the data with zeros to at least `len` bytes (`skb_put_padto()`). On failure the
    /// buffer is freed, as the C function does.
    pub fn put_padto(self, len: u32) -> Result<Self> {
        let skb = self.into_raw();
        // SAFETY: The buffer is valid and ours; `skb_put_padto` either pads it or frees it.
        to_result(unsafe { bindings::skb_put_padto(skb.as_ptr(), len) })?;
        // SAFETY: It succeeded, so the buffer is still valid and ours.
        Ok(unsafe { Self::from_raw(skb) })
    }

    /// Appends `data` to the data.
    pub fn put_data(&mut self, data: &[u8]) -> Result {
        let len = u32::try_from(data.len()).map_err(|_| EINVAL)?;
        self.put(len)?.copy_from_slice(data);
        Ok(())
    }

    /// Prepends `len` bytes to the data and returns them (`skb_push()`).
    pub fn push(&mut self, len: u32) -> Result<&mut [u8]> {
        if len > self.headroom() {
            return Err(EINVAL);
        }
        // SAFETY: The buffer is valid and ours, with `len` bytes of headroom: `skb_push`
        // returns the new start of the data, `len` bytes that belong to us.
        unsafe {
            let p = bindings::skb_push(self.0.as_ptr(), len);
            Ok(core::slice::from_raw_parts_mut(
                p.cast::<u8>(),
                len as usize,
            ))
        }
    }

    /// Removes `len` bytes from the start of the data (`skb_pull()`); fails if the head is
    /// shorter.
    pub fn pull(&mut self, len: u32) -> Result {
        if len > self.head_len() {
            return Err(EINVAL);
        }
        // SAFETY: The buffer is valid and ours, and its head holds at least `len` bytes.
        unsafe { bindings::skb_pull(self.0.as_ptr(), len) };
        Ok(())
    }

    /// The linear part of the data.
    pub fn data(&self) -> &[u8] {
        let skb = self.raw();
        // SAFETY: `data` points to the head's `head_len()` bytes of data, which live as long as
        // the buffer and change only through `&mut self`.
        unsafe { core::slice::from_raw_parts(skb.data, self.head_len() as usize) }
    }

    /// The linear part of the data, to change.
    ///
    /// The head must be the buffer's own (see [`SkBuff::cow_head`]) for the change not to show
    /// in clones.
    pub fn data_mut(&mut self) -> &mut [u8] {
        let len = self.head_len() as usize;
        // SAFETY: As in `data`, and `&mut self` makes the access exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.raw().data, len) }
    }

    /// The flow hash of the buffer, computed from its headers if not known yet
    /// (`skb_get_hash()`).
    pub fn hash(&mut self) -> u32 {
        // SAFETY: The buffer is valid and ours.
        unsafe { bindings::skb_get_hash(self.0.as_ptr()) }
    }

    /// Sets the flow hash (`skb_set_hash()` with a level 4 hash), as a driver that knows it
    /// does.
    pub fn set_hash(&mut self, hash: u32) {
        // SAFETY: The buffer is valid and ours.
        unsafe {
            bindings::skb_set_hash(
                self.0.as_ptr(),
                hash,
                bindings::pkt_hash_types_PKT_HASH_TYPE_L4,
            )
        };
    }

    /// The link-layer protocol (`skb->protocol`), host order.
    pub fn protocol(&self) -> u16 {
        // SAFETY: The buffer is valid and ours.
        u16::from_be(unsafe { bindings::skb_protocol(self.0.as_ptr()) })
    }

    /// Sets the link-layer protocol (host order).
    pub fn set_protocol(&mut self, protocol: u16) {
        // SAFETY: The buffer is valid and ours.
        unsafe { bindings::skb_set_protocol(self.0.as_ptr(), protocol.to_be()) };
    }

    /// The VLAN tag held out of the data (hardware-accelerated tagging), if any.
    pub fn vlan_tci(&self) -> Option<u16> {
        // SAFETY: The buffer is valid and ours.
        let (present, tci) = unsafe {
            let skb = self.0.as_ptr();
            (
                bindings::skb_vlan_tag_present(skb),
                bindings::skb_vlan_tag_get(skb),
            )
        };
        present.then_some(tci)
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the buffer is ours to free.
        unsafe { bindings::kfree_skb(self.0.as_ptr()) };
    }
}
