// SPDX-License-Identifier: GPL-2.0
// expect: E0382
//! A send's completion consumes its `SendWr`, and only a `SendWr` can be refused: a provider
//! cannot complete a request and then fail `post_send` (the core would report it not
//! posted, and its consumer free it while the completion is queued).
use kernel::{
    prelude::*,
    rdma::verbs::{Refused, SendWr, WcStatus, WorkCompletion},
};

/// What the type refuses.
pub fn complete_then_refuse<'a>(wr: SendWr<'a>) -> (WorkCompletion, Refused<SendWr<'a>>) {
    let wc = WorkCompletion::send(wr, WcStatus::Success, 1);
    (wc, Refused::new(wr, EINVAL))
}
