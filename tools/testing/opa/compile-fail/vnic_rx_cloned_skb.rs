// SPDX-License-Identifier: GPL-2.0
// expect: E0308
//! A provider cannot hand GRO a buffer a clone may share (one from transmit, say): GRO moves
//! a merged buffer's fragments out of its shared info and may take over its head, from under
//! the clone. `VnicRx::receive_gro` takes only a `SkBuffMut`.
use kernel::{error::Result, net::skbuff::SkBuff, rdma::provider::Provider, rdma::vnic::VnicRx};

/// What the type refuses.
pub fn maybe_cloned_buffer_to_gro<T: Provider>(rx: &VnicRx<'_, T>, skb: SkBuff) -> Result {
    rx.receive_gro(skb)
}
