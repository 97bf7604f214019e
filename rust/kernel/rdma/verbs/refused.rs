// SPDX-License-Identifier: GPL-2.0

//! Work requests a provider refuses.

use crate::error::Error;

/// A work request (a [`SendWr`](super::SendWr) or a [`RecvWr`](super::RecvWr)) that the
/// provider refused: `post_send` or `post_recv` fails with `err`, and the core reports the
/// request as not posted (`bad_wr`), so its consumer frees it.
///
/// It holds the request itself: a provider that completed a send (which consumes its
/// [`SendWr`](super::SendWr)) or queued a receive (which consumes its
/// [`RecvWr`](super::RecvWr)) has no request left to refuse, so it cannot report as not posted
/// a request whose completion or buffer it keeps.
pub struct Refused<W> {
    _wr: W,
    err: Error,
}

impl<W> Refused<W> {
    /// Refuses `wr` with `err`.
    pub fn new(wr: W, err: Error) -> Self {
        Self { _wr: wr, err }
    }

    /// The error the post fails with.
    pub fn err(&self) -> Error {
        self.err
    }
}
