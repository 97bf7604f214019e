// SPDX-License-Identifier: GPL-2.0

//! Transcripts of `vema-fuzz run` and their comparison (`vema-fuzz compare`).
//!
//! A transcript is binary: a header (magic, seed, count, timeout), then one record per
//! request in order: its index, what came of it (answered, not answered in time, refused by
//! umad's write) and the answer. The answer is stored with the upper half of its TID zeroed
//! (ib_umad sets it per agent, so it differs between two runs) and without its trailing
//! zeros (most of a 2048-byte answer is zero; a campaign of 10^5 requests must fit the
//! guest's RAM), its length kept apart. The requests are not stored: the seed rebuilds them.
//!
//! [`format`](mod@format) writes and reads transcripts; [`diff`] tells how two outcomes of a request
//! differ; [`rules`] parses the allow (and skip) files and matches their rules; [`report`]
//! compares two transcripts and writes the report.

pub mod diff;
pub mod format;
pub mod report;
pub mod rules;

pub use diff::{difference, first_diff, Difference};
pub use format::{read, write_header, write_record, Header, Outcome, Record, MAGIC};
pub use report::{compare, Report};
pub use rules::{parse_rules, Rule};

#[cfg(test)]
mod tests;
