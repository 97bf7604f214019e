// SPDX-License-Identifier: GPL-2.0
// expect: E0382
//! A `WorkCompletion` is neither `Copy` nor `Clone`: a provider that queued a completion twice
//! would have its consumer (`ib_mad`) free or repost the request on the first and use it
//! again on the second.
use kernel::rdma::verbs::WorkCompletion;

/// What the type refuses.
pub fn complete_twice(wc: WorkCompletion) -> (WorkCompletion, WorkCompletion) {
    (wc, wc)
}
