// SPDX-License-Identifier: GPL-2.0

//! The guest test programs of opasim and the VNIC drivers, and what they share (they send
//! MADs with the `opa_umad` crate): the differential VEMA fuzzer's request generator
//! ([`vema_gen`]) and transcripts ([`transcript`]), which the host tests too, and the RMPP
//! segments and answers of `mad-rmpp` ([`rmpp`]), and the number syntax of their command
//! lines ([`cli`]). The programs are the files of `src/bin/`.

#![deny(unsafe_code)]
#![warn(missing_docs, rust_2018_idioms)]

pub mod cli;
pub mod rmpp;
pub mod transcript;
pub mod vema_gen;
