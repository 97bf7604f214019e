// SPDX-License-Identifier: GPL-2.0

//! Socket buffers.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)
//!
//! Three types, by what their holder may do:
//!
//! - [`SkBuffRef`]: a buffer borrowed for the duration of a call (for example the one the stack
//!   passes to `ndo_select_queue`): read only, never freed.
//! - [`SkBuff`]: an owned buffer, freed when dropped. Its head (the data) may be shared with
//!   clones (a packet tap holds one of every transmitted frame), so its data can be read, and
//!   its own offsets moved ([`SkBuff::pull`]), but not written.
//! - [`SkBuffMut`]: an owned buffer that no clone shares, from [`SkBuff::alloc`] or
//!   [`SkBuff::into_mut`]: its data can be written, prepended to and appended to.
//! - [`SkBuffHead`]: an owned buffer whose headroom is its own, from [`SkBuff::cow_head`]
//!   (`skb_cow_head()` leaves the payload shared with a clone that only uses the payload, as
//!   TCP's are): it can be prepended to, and its data read, not written.
//!
//! The bytes [`SkBuffMut::put`] and the pushes hand out are zeroed first: the allocator leaves
//! them uninitialised, and a partial write must not put old heap bytes on the wire.
//!
//! The data of a buffer may lie partly in its head (the linear part, [`SkBuffRef::data`]) and
//! partly in page fragments: a device that advertises scatter-gather (`NETIF_F_SG`) gets
//! frames whose linear part holds only some of the headers, or only the Ethernet header.
//! [`SkBuffRef::header`] and [`SkBuffRef::copy_bits`] read bytes wherever they lie; `put`,
//! `push` and `pull` work on the head, check their bounds and fail instead of hitting the C
//! functions' BUGs.

use crate::types::Opaque;

#[cfg(CONFIG_RUST_KERNEL_DOCTESTS)]
#[path = "skbuff_kunit.rs"]
mod kunit;
mod writable;
use crate::{alloc::AllocError, alloc::Flags, bindings, error::to_result, prelude::*};
use core::{mem::MaybeUninit, ops::Deref, ptr::NonNull};
pub use writable::{SkBuffHead, SkBuffMut};

/// A socket buffer (`struct sk_buff`) as a borrower sees it: its data and metadata, read only.
///
/// Not `Sync`: reading the flow hash may compute and store it.
///
/// # Invariants
///
/// The buffer is valid, and while a reference to `Self` is live nothing else frees it or
/// changes its data or metadata, nor reads or writes its flow hash (which [`SkBuffRef::hash`]
/// may store).
#[repr(transparent)]
pub struct SkBuffRef(Opaque<bindings::sk_buff>);

impl SkBuffRef {
    /// Borrows a buffer.
    ///
    /// # Safety
    ///
    /// `skb` is a valid buffer that nothing frees, whose data and metadata nothing else
    /// changes, and whose flow hash nothing else reads or writes, for `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(skb: *mut bindings::sk_buff) -> &'a Self {
        // SAFETY: `Self` is a transparent wrapper of `sk_buff`, and the caller guarantees the
        // type invariant for `'a`.
        unsafe { &*skb.cast::<Self>() }
    }

    /// The raw buffer, for the abstractions of its users.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::sk_buff {
        self.0.get()
    }

    #[inline]
    fn raw(&self) -> &bindings::sk_buff {
        // SAFETY: By the type invariant the buffer is valid and does not change meanwhile
        // (except for the hash, which only `hash` writes, through the raw pointer).
        unsafe { &*self.as_raw() }
    }

    /// The length of the data, head and fragments.
    #[inline]
    pub fn len(&self) -> u32 {
        self.raw().len
    }

    /// Whether there is no data.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The length of the linear part of the data (`skb_headlen()`).
    #[inline]
    pub fn head_len(&self) -> u32 {
        let skb = self.raw();
        // The kernel keeps `data_len <= len`; wrapping as C does, so that no overflow check
        // runs per frame.
        skb.len.wrapping_sub(skb.data_len)
    }

    /// Room before the data (`skb_headroom()`).
    #[inline]
    pub fn headroom(&self) -> u32 {
        let skb = self.raw();
        // `skb_headroom()`, read here rather than called: the data starts in the head, at or
        // after its start.
        (skb.data as usize).wrapping_sub(skb.head as usize) as u32
    }

    /// Room after the data in the head (`skb_tailroom()`).
    pub fn tailroom(&self) -> u32 {
        // SAFETY: By the type invariant the buffer is valid.
        unsafe { bindings::skb_tailroom(self.as_raw()) }
    }

    /// The linear part of the data (the head's, `skb_headlen()` bytes): the whole data only
    /// when the buffer has no fragments. [`SkBuffRef::header`] reads past it.
    #[inline]
    pub fn data(&self) -> &[u8] {
        let skb = self.raw();
        // SAFETY: `data` points to the head's `head_len()` bytes of data, which live as long as
        // the buffer and do not change while `self` is borrowed (type invariant; writers need
        // a `&mut SkBuffMut`).
        unsafe { core::slice::from_raw_parts(skb.data, self.head_len() as usize) }
    }

    /// `N` bytes of the data from `offset`, wherever they lie (`skb_header_pointer()`): the
    /// bytes in the head when they are all there (no copy), else a copy of them into `buf`
    /// from the head and the fragments. `None` if the data is shorter than `offset + N`.
    /// `buf` need not be initialised: a frame whose headers are linear costs no stores.
    #[inline]
    pub fn header<'a, const N: usize>(
        &'a self,
        offset: u32,
        buf: &'a mut MaybeUninit<[u8; N]>,
    ) -> Option<&'a [u8; N]> {
        let len = u32::try_from(N).ok()?;
        let end = offset.checked_add(len)?;
        if end <= self.head_len() {
            // SAFETY: The `N` bytes from `offset` are in the head's data (checked above), which
            // lives as long as the buffer and does not change while `self` is borrowed (type
            // invariant), as in `data`; `[u8; N]` has no alignment.
            return Some(unsafe { &*self.raw().data.add(offset as usize).cast::<[u8; N]>() });
        }
        if end > self.len() || end > i32::MAX as u32 {
            return None;
        }
        // SAFETY: As in `copy_bits`: the buffer is valid, `offset + N` is within its data
        // (checked above), and `buf` has room for `N` bytes.
        let ret = unsafe {
            bindings::skb_copy_bits(
                self.as_raw(),
                offset as i32,
                buf.as_mut_ptr().cast(),
                N as i32,
            )
        };
        // SAFETY: `skb_copy_bits` succeeded, so it wrote all `N` bytes.
        (ret == 0).then(|| unsafe { buf.assume_init_ref() })
    }

    /// Copies `buf.len()` bytes of the data from `offset` into `buf`, from the head and the
    /// fragments (`skb_copy_bits()`). `EINVAL` if the data is shorter than that.
    pub fn copy_bits(&self, offset: u32, buf: &mut [u8]) -> Result {
        let len = u32::try_from(buf.len()).map_err(|_| EINVAL)?;
        match offset.checked_add(len) {
            Some(end) if end <= self.len() && end <= i32::MAX as u32 => {}
            _ => return Err(EINVAL),
        }
        // SAFETY: By the type invariant the buffer is valid and its data (head and
        // fragments) does not change meanwhile; `offset + len` is within it (checked above),
        // and `buf` has room for `len` bytes. `skb_copy_bits` only reads the buffer (it maps
        // fragment pages with `kmap_local`, which is allowed in atomic context).
        to_result(unsafe {
            bindings::skb_copy_bits(
                self.as_raw(),
                offset as i32,
                buf.as_mut_ptr().cast(),
                len as i32,
            )
        })
    }

    /// The number of page fragments that hold the data past the head
    /// (`skb_shinfo(skb)->nr_frags`).
    #[inline]
    pub fn nr_frags(&self) -> u32 {
        // SAFETY: By the type invariant the buffer is valid, and so is its shared info.
        unsafe { bindings::skb_nr_frags(self.as_raw()) }
    }

    /// The transmit queue the stack chose for the buffer (`skb_get_queue_mapping()`).
    #[inline]
    pub fn queue_mapping(&self) -> u16 {
        self.raw().queue_mapping
    }

    /// The fields the kernel groups as the skb's `headers` (`struct_group()`), as a raw
    /// pointer: `hash` may write one of them (the flow hash) while others are read.
    #[inline]
    fn headers(&self) -> *const bindings::sk_buff__bindgen_ty_4__bindgen_ty_1 {
        // SAFETY: The buffer is valid; only an address is taken. Both members of the union are
        // the same fields (`struct_group()`), so the first one's type describes them.
        unsafe { core::ptr::addr_of!((*self.as_raw()).__bindgen_anon_4).cast() }
    }

    /// The flow hash of the buffer, computed from its headers if not known yet
    /// (`skb_get_hash()`, which stores it in the buffer). Written out rather than called
    /// through a helper: transmit reads it for every frame, and it is known for most.
    #[inline]
    pub fn hash(&self) -> u32 {
        let h = self.headers();
        // SAFETY: The buffer is valid; the bits are read through a reference that ends here.
        let known = unsafe { (*h).l4_hash() != 0 || (*h).sw_hash() != 0 };
        if !known {
            // SAFETY: The buffer is valid; `Self` is not `Sync`, so no other thread reads or
            // writes the hash through it meanwhile, and nothing else does (type invariant); no
            // reference to its fields is live. A null `net` is what `skb_get_hash()` passes.
            unsafe { bindings::__skb_get_hash_net(core::ptr::null(), self.as_raw()) };
        }
        // SAFETY: The buffer is valid; the field is read after any write above.
        unsafe { core::ptr::addr_of!((*h).hash).read() }
    }

    /// The link-layer protocol (`skb->protocol`), host order.
    #[inline]
    pub fn protocol(&self) -> u16 {
        // SAFETY: The buffer is valid and its protocol does not change meanwhile.
        u16::from_be(unsafe { core::ptr::addr_of!((*self.headers()).protocol).read() })
    }

    /// The VLAN tag held out of the data (hardware-accelerated tagging), if any
    /// (`skb_vlan_tag_present()`, `skb_vlan_tag_get()`, which read the fields so).
    #[inline]
    pub fn vlan_tci(&self) -> Option<u16> {
        // SAFETY: The buffer is valid and its tag does not change meanwhile; `vlan_all` covers
        // the protocol and the TCI, so both members of the union are initialised.
        let (all, tci) = unsafe {
            let v = core::ptr::addr_of!((*self.headers()).__bindgen_anon_2);
            ((*v).vlan_all, (*v).__bindgen_anon_1.vlan_tci)
        };
        (all != 0).then_some(tci)
    }
}

/// A socket buffer that the holder owns: it is freed when dropped (as a drop,
/// `dev_kfree_skb_any()`;
/// [`SkBuff::consume`] frees one that was delivered), unless handed on with
/// [`SkBuff::into_raw`]. Its head may be shared with clones: see the module documentation.
///
/// # Invariants
///
/// `self.0` points to a valid `struct sk_buff` that nothing else owns or uses while `self`
/// exists (clones are other `sk_buff`s, which may share its head).
pub struct SkBuff(NonNull<bindings::sk_buff>);

// SAFETY: An owned `sk_buff` may be freed or handed on from any thread.
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// Allocates a buffer of `size` bytes of data room, empty, with no headroom.
    pub fn alloc(size: u32, flags: Flags) -> Result<SkBuffMut, AllocError> {
        // SAFETY: FFI call without preconditions.
        let skb = unsafe { bindings::alloc_skb(size, flags.as_raw()) };
        // INVARIANT: A new buffer is ours, and its head is not shared.
        NonNull::new(skb)
            .map(|skb| SkBuffMut(Self(skb)))
            .ok_or(AllocError)
    }

    /// Takes ownership of a raw socket buffer.
    ///
    /// # Safety
    ///
    /// `skb` must be a valid `struct sk_buff` whose ownership (the duty to free or hand it on)
    /// passes to the returned value, and that nothing else uses meanwhile.
    #[inline]
    pub unsafe fn from_raw(skb: NonNull<bindings::sk_buff>) -> Self {
        // INVARIANT: As the caller guarantees.
        Self(skb)
    }

    /// Gives up ownership: the caller must free or hand on the buffer.
    #[inline]
    pub fn into_raw(self) -> NonNull<bindings::sk_buff> {
        let skb = self.0;
        core::mem::forget(self);
        skb
    }

    /// Frees a buffer that was delivered (`dev_consume_skb_any()`): drop monitors do not count
    /// it. Any context, interrupts off included (netpoll transmits with them off).
    pub fn consume(self) {
        let skb = self.into_raw();
        // SAFETY: The buffer was ours, and is given up here; `dev_kfree_skb_any_reason()`
        // defers the free when interrupts are off.
        unsafe {
            bindings::dev_kfree_skb_any_reason(skb.as_ptr(), bindings::skb_drop_reason_SKB_CONSUMED)
        };
    }

    /// Makes the headroom the buffer's own, with at least `headroom` bytes before the data
    /// (`skb_cow_head()`), so that headers can be pushed. The data may stay shared with a
    /// clone. On failure the buffer is freed.
    ///
    /// `EINVAL` (and the buffer freed) for a headroom past `i32::MAX / 2`: the C function
    /// computes the new head's size in an `int` and hits a `BUG_ON()` when it overflows.
    #[inline]
    pub fn cow_head(self, headroom: u32) -> Result<SkBuffHead> {
        // The test of the inline `skb_cow_head()` (`__skb_cow()` of `skb_header_cloned()`),
        // here so that a buffer never cloned, with the room, costs no call: a driver makes
        // the head of every frame it sends its own.
        if self.raw().cloned() == 0 && self.headroom() >= headroom {
            // INVARIANT: Not cloned: no other `sk_buff` shares the head, and nothing can
            // clone the buffer while `SkBuffHead` owns it; the headroom is at least `room`.
            return Ok(SkBuffHead {
                skb: self,
                room: headroom,
            });
        }
        // `pskb_expand_head()` takes the missing room, aligned up, as an `int`, and `BUG_ON()`s
        // a negative one.
        if headroom > i32::MAX as u32 / 2 {
            return Err(EINVAL);
        }
        // SAFETY: The buffer is valid and ours; the headroom is small enough (above).
        to_result(unsafe { bindings::skb_cow_head(self.0.as_ptr(), headroom) })?;
        // INVARIANT: `skb_cow_head` succeeded: the header is not cloned (`skb_cow_head()`
        // guarantees `!skb_header_cloned()`), nothing can clone the buffer while `SkBuffHead`
        // owns it, and the headroom is at least `room` (what it made).
        Ok(SkBuffHead {
            skb: self,
            room: headroom,
        })
    }

    /// The buffer as one whose data can be written, if no clone shares it (`!skb_cloned()`);
    /// else the buffer back.
    pub fn into_mut(self) -> Result<SkBuffMut, Self> {
        if self.raw().cloned() != 0 {
            return Err(self);
        }
        // INVARIANT: Not cloned: no other `sk_buff` shares its data, and nothing can clone it
        // while `SkBuffMut` owns it.
        Ok(SkBuffMut(self))
    }

    /// Pads the data with zeros to at least `len` bytes (`skb_put_padto()`, which copies a
    /// shared head first). On failure the buffer is freed, as by the C function, but with
    /// `dev_kfree_skb_any()` (it may run with interrupts off). A `len` above `i32::MAX / 2`
    /// fails with `EINVAL`.
    #[inline]
    pub fn put_padto(self, len: u32) -> Result<Self> {
        // The test of the inline `skb_put_padto()`, here so that a frame long enough costs no
        // call: a driver pads every frame it sends.
        if self.len() >= len {
            return Ok(self);
        }
        // `__skb_pad()` takes the padding as an `int`: past `i32::MAX` it is negative, passes
        // the tailroom test and `memset()`s that many bytes. Below the bound the padding, and
        // `data_len` plus the padding that `pskb_expand_head()` takes as an `int`, stay
        // positive (`data_len` is less than `len` here).
        if len > i32::MAX as u32 / 2 {
            return Err(EINVAL);
        }
        // SAFETY: The buffer is valid and ours; `__skb_put_padto()` without `free_on_error`
        // pads it by a positive `int` (above) or fails leaving it valid (and ours: on `Err`,
        // `self` is dropped, which frees it).
        to_result(unsafe { bindings::__skb_put_padto(self.0.as_ptr(), len, false) })?;
        Ok(self)
    }

    /// Removes `len` bytes from the start of the data (`skb_pull()`); fails if the head is
    /// shorter. Only this buffer's offsets change, so the head may be shared.
    pub fn pull(&mut self, len: u32) -> Result {
        if len > self.head_len() {
            return Err(EINVAL);
        }
        // SAFETY: The buffer is valid and ours, and its head holds at least `len` bytes.
        unsafe { bindings::skb_pull(self.0.as_ptr(), len) };
        Ok(())
    }

    /// Sets the flow hash (`skb_set_hash()` with a level 4 hash), as a driver that knows it
    /// does.
    pub fn set_hash(&mut self, hash: u32) {
        // SAFETY: The buffer is valid and ours; the hash is a field of this `sk_buff`.
        unsafe {
            bindings::skb_set_hash(
                self.0.as_ptr(),
                hash,
                bindings::pkt_hash_types_PKT_HASH_TYPE_L4,
            )
        };
    }

    /// Sets the link-layer protocol (host order).
    pub fn set_protocol(&mut self, protocol: u16) {
        // SAFETY: The buffer is valid and ours; the protocol is a field of this `sk_buff`.
        unsafe { bindings::skb_set_protocol(self.0.as_ptr(), protocol.to_be()) };
    }
}

/// What an `ndo_start_xmit` that was given the buffer `given` answers when the device has no
/// room for `back` and hands it back: `NETDEV_TX_BUSY`, with which the stack takes `given`
/// back (requeues or frees it), only if `back` is that buffer. A transmit may have dropped the
/// stack's buffer and made another: the stack must not get the dropped one back (its requeue
/// would be a use after free), so the other is dropped too, `dropped` counts it, and the answer
/// is `NETDEV_TX_OK` (the buffer was taken).
///
/// `given` is only compared, never dereferenced.
pub fn xmit_busy(
    given: *mut bindings::sk_buff,
    back: SkBuff,
    dropped: impl FnOnce(),
) -> bindings::netdev_tx_t {
    if back.as_raw() == given {
        // The stack's own buffer: it takes it back.
        let _ = back.into_raw();
        return bindings::netdev_tx_NETDEV_TX_BUSY;
    }
    drop(back);
    dropped();
    bindings::netdev_tx_NETDEV_TX_OK
}

impl Deref for SkBuff {
    type Target = SkBuffRef;

    #[inline]
    fn deref(&self) -> &SkBuffRef {
        // SAFETY: The buffer is valid and ours alone (type invariant): nothing else uses it,
        // its hash included, and its data and metadata change only through `&mut self`
        // (`SkBuffMut`), which this borrow excludes.
        unsafe { SkBuffRef::from_raw(self.0.as_ptr()) }
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the buffer is ours to free. `dev_kfree_skb_any()`:
        // a buffer may be dropped with interrupts off (netpoll calls `ndo_start_xmit` so),
        // where `kfree_skb()` must not run its destructor; the free is then deferred.
        unsafe {
            bindings::dev_kfree_skb_any_reason(
                self.0.as_ptr(),
                bindings::skb_drop_reason_SKB_DROP_REASON_NOT_SPECIFIED,
            )
        };
    }
}
