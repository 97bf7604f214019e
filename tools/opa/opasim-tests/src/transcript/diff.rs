// SPDX-License-Identifier: GPL-2.0

//! How two outcomes of one request differ.

use super::format::Outcome;

/// What differs between the two outcomes of a request, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Difference {
    /// One side answered (or was refused, or lost it), the other not the same way.
    Answered,
    /// Both answered, with different lengths.
    Length,
    /// Both answered, with different MAD statuses.
    Status,
    /// Both answered with the same status and length, different bytes.
    Data,
    /// One transcript has no record of the request (its run stopped early).
    Missing,
}

impl Difference {
    /// The name used in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Difference::Answered => "answered",
            Difference::Length => "length",
            Difference::Status => "status",
            Difference::Data => "data",
            Difference::Missing => "missing",
        }
    }
}

/// The first byte offset where two answers differ (over the longer of the two).
pub fn first_diff(a: &Outcome, b: &Outcome) -> Option<usize> {
    let len = |o: &Outcome| match o {
        Outcome::Answered { len, .. } => *len as usize,
        _ => 0,
    };
    (0..len(a).max(len(b))).find(|&i| a.byte(i) != b.byte(i))
}

/// Compares two outcomes of one request.
pub fn difference(a: &Outcome, b: &Outcome) -> Option<Difference> {
    if a == b {
        return None;
    }
    match (a, b) {
        (Outcome::Answered { len: la, .. }, Outcome::Answered { len: lb, .. }) => {
            Some(if a.status() != b.status() {
                Difference::Status
            } else if la != lb {
                Difference::Length
            } else {
                Difference::Data
            })
        }
        _ => Some(Difference::Answered),
    }
}
