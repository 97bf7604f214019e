// SPDX-License-Identifier: GPL-2.0

//! The guest test programs of opasim and the VNIC drivers, and what they share: the umad
//! layer they send MADs with ([`umad`]), and the differential VEMA fuzzer's request generator
//! ([`vema_gen`]) and transcripts ([`transcript`]), which the host tests too, and the RMPP
//! segments and answers of `mad-rmpp` ([`rmpp`]).

#![deny(unsafe_code)]
#![warn(missing_docs, rust_2018_idioms)]

pub mod rmpp;
pub mod transcript;
pub mod umad;
pub mod vema_gen;
