// SPDX-License-Identifier: GPL-2.0

//! What the tests that run the `vnic-em` binary share: running it, and its output as text.

// Each test file builds this module on its own.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs the `vnic-em` binary of this build with `args`.
pub fn vnic_em(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vnic-em"))
        .args(args)
        .output()
        .expect("run vnic-em")
}

/// Output bytes as text, for messages and assertions.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
