// SPDX-License-Identifier: GPL-2.0
// expect: E0596
//! A `SkBuffMut` has no `DerefMut` to `SkBuff`: through one, `core::mem::swap` would put a
//! buffer whose head a clone shares behind a `SkBuffMut`, whose writes would then race the
//! clone's reader.
use kernel::net::skbuff::{SkBuff, SkBuffMut};

/// What the type refuses.
pub fn swap_in_a_shared_buffer(owned: &mut SkBuffMut, shared: &mut SkBuff) {
    core::mem::swap(&mut **owned, shared);
}
