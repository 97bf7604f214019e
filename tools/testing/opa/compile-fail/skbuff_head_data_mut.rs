// SPDX-License-Identifier: GPL-2.0
// expect: E0599
//! `skb_cow_head()` makes only the headroom a buffer's own: the data of a `SkBuffHead` may
//! still be shared, so it offers pushes, not writes to the data.
use kernel::net::skbuff::SkBuffHead;

/// What the type refuses.
pub fn write_shared_payload(skb: &mut SkBuffHead) {
    skb.data_mut()[0] = 0;
}
