// SPDX-License-Identifier: GPL-2.0
// expect: E0599
//! An owned `SkBuff` may share its head with a clone (a packet tap's): it cannot be appended
//! to in place.
use kernel::net::skbuff::SkBuff;

/// What the type refuses.
pub fn append_to_shared(skb: &mut SkBuff) {
    let _ = skb.put(4);
}
