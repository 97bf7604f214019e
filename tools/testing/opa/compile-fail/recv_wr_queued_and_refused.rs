// SPDX-License-Identifier: GPL-2.0
// expect: E0382
//! Queueing a receive consumes its `RecvWr`, and only a `RecvWr` can be refused: a provider
//! cannot queue a buffer and then fail `post_recv` (its consumer would free the buffer, which
//! a delivery would then write).
use kernel::{
    prelude::*,
    rdma::{
        provider::Provider,
        verbs::{Qp, RecvWr, Refused},
    },
};

/// What the type refuses.
pub fn queue_then_refuse<'a, T: Provider>(qp: &Qp<T>, wr: RecvWr<'a>) -> Refused<RecvWr<'a>> {
    let _ = qp.post_recv(wr);
    Refused::new(wr, EINVAL)
}
