// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rust_net_skbuff` of the socket buffer types: bytes read wherever they lie, and
//! bytes handed out for writing never carry old heap contents.
//!
//! Part of the kernel crate's tests (`CONFIG_RUST_KERNEL_DOCTESTS`), run at boot. Buffers with
//! page fragments come from the stack only (a scatter-gather netdev); the
//! `vnic-hfi1-netdev` scenario reads headers across fragments through `header()`.

use super::{xmit_busy, SkBuff};
use crate::{bindings, kunit_expect, kunit_expect_eq, prelude::*};
use core::mem::MaybeUninit;

/// A buffer of `len` bytes of data room whose memory last held `fill` bytes: one is filled
/// and freed first, and the allocator hands the same object back to the next allocation of
/// its size on this CPU (whether it does is not asserted, only what the new buffer shows).
fn reused(len: u32, fill: u8) -> Option<super::SkBuffMut> {
    let mut old = SkBuff::alloc(len, GFP_KERNEL).ok()?;
    let room = old.tailroom();
    old.put(room).ok()?.fill(fill);
    drop(old);
    SkBuff::alloc(len, GFP_KERNEL).ok()
}

/// `put` and `push` hand out zeroed bytes, whatever the memory held before.
fn handed_out_bytes_are_zero() {
    let Some(mut skb) = reused(128, 0xa5) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect_eq!(skb.reserve(32), Ok(()));
    match skb.put(64) {
        Ok(bytes) => kunit_expect!(bytes.iter().all(|&b| b == 0)),
        Err(_) => kunit_expect!(false),
    }
    match skb.push(16) {
        Ok(bytes) => kunit_expect!(bytes.iter().all(|&b| b == 0)),
        Err(_) => kunit_expect!(false),
    }
    let mut head = skb.into_head();
    kunit_expect_eq!(head.push_bytes([7u8; 16]), Ok(()));
    kunit_expect_eq!(head.len(), 96);
    kunit_expect_eq!(
        head.data().first_chunk::<17>(),
        Some(&[7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 0])
    );
    // Past the headroom (the 32 bytes reserved are used up): refused, nothing moves.
    kunit_expect_eq!(head.push_bytes([1u8; 17]), Err(EINVAL));
    kunit_expect_eq!(head.len(), 96);
}

/// `header` reads the bytes in the head in place, and refuses what lies past the data.
fn header_reads_within_data() {
    let Ok(mut skb) = SkBuff::alloc(64, GFP_KERNEL) else {
        kunit_expect!(false);
        return;
    };
    let frame: [u8; 20] = core::array::from_fn(|i| i as u8);
    kunit_expect_eq!(skb.put_data(&frame), Ok(()));
    let mut copy = MaybeUninit::uninit();
    kunit_expect_eq!(skb.header(16, &mut copy).copied(), Some([16, 17, 18, 19]));
    let mut copy = MaybeUninit::<[u8; 4]>::uninit();
    kunit_expect_eq!(skb.header(17, &mut copy).copied(), None);
    let mut all = [0u8; 20];
    kunit_expect_eq!(skb.copy_bits(0, &mut all), Ok(()));
    kunit_expect_eq!(all, frame);
    kunit_expect!(skb.copy_bits(1, &mut all).is_err());
    kunit_expect_eq!(skb.nr_frags(), 0);
}

/// A buffer from `alloc` is its own: `into_mut` takes it, and `cow_head` of a buffer that is
/// not cloned copies nothing.
fn ownership_of_new_buffers() {
    let Ok(skb) = SkBuff::alloc(64, GFP_KERNEL) else {
        kunit_expect!(false);
        return;
    };
    let skb = skb.into_inner();
    let skb = match skb.into_mut() {
        Ok(m) => m.into_inner(),
        Err(s) => {
            kunit_expect!(false);
            s
        }
    };
    kunit_expect!(skb.cow_head(0).is_ok());
}

/// A headroom the C function cannot compute (it would `BUG()`) is refused.
fn cow_head_refuses_huge_headroom() {
    let Ok(skb) = SkBuff::alloc(64, GFP_KERNEL) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect!(matches!(skb.into_inner().cow_head(u32::MAX), Err(e) if e == EINVAL));
}

/// Padding is zeros up to the length asked; a length whose padding the C function would take
/// as a negative `int` (and `memset()` that many bytes) is refused.
fn put_padto_pads_with_zeros_and_refuses_huge_lengths() {
    let Some(mut skb) = reused(128, 0xa5) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect_eq!(skb.put_data(&[3u8; 10]), Ok(()));
    let skb = match skb.into_inner().put_padto(60) {
        Ok(skb) => skb,
        Err(_) => {
            kunit_expect!(false);
            return;
        }
    };
    kunit_expect_eq!(skb.len(), 60);
    let mut all = [0xffu8; 60];
    kunit_expect_eq!(skb.copy_bits(0, &mut all), Ok(()));
    kunit_expect!(all[..10].iter().all(|&b| b == 3) && all[10..].iter().all(|&b| b == 0));
    kunit_expect!(matches!(skb.put_padto(u32::MAX), Err(e) if e == EINVAL));
    let Ok(skb) = SkBuff::alloc(64, GFP_KERNEL) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect!(
        matches!(skb.into_inner().put_padto(i32::MAX as u32 / 2 + 1), Err(e) if e == EINVAL)
    );
}

/// A busy transmit gives the stack back only the buffer it gave: another one is dropped and
/// counted, and the transmit answers that it took the frame.
fn busy_transmit_gives_back_only_the_given_buffer() {
    let (Ok(a), Ok(b)) = (SkBuff::alloc(64, GFP_KERNEL), SkBuff::alloc(64, GFP_KERNEL)) else {
        kunit_expect!(false);
        return;
    };
    let a = a.into_inner();
    let given = a.as_raw();
    let mut drops = 0;
    kunit_expect_eq!(
        xmit_busy(given, a, || drops += 1),
        bindings::netdev_tx_NETDEV_TX_BUSY
    );
    kunit_expect_eq!(drops, 0);
    // SAFETY: `NETDEV_TX_BUSY`: the buffer `given` (valid, not null) is its caller's again.
    let a = unsafe { SkBuff::from_raw(core::ptr::NonNull::new_unchecked(given)) };
    kunit_expect_eq!(
        xmit_busy(given, b.into_inner(), || drops += 1),
        bindings::netdev_tx_NETDEV_TX_OK
    );
    kunit_expect_eq!(drops, 1);
    drop(a);
}

crate::kunit_suite!(
    rust_net_skbuff,
    [
        handed_out_bytes_are_zero,
        header_reads_within_data,
        ownership_of_new_buffers,
        cow_head_refuses_huge_headroom,
        put_padto_pads_with_zeros_and_refuses_huge_lengths,
        busy_transmit_gives_back_only_the_given_buffer,
    ]
);
