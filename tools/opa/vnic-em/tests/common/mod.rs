// SPDX-License-Identifier: GPL-2.0

//! What the end-to-end tests share: the fake fabric they talk to and the capture of a
//! command's exit code and output.

use std::time::Duration;

use opa_wire::mad::METHOD_SET;
use vnic_em::client::{Client, Policy};
use vnic_em::commands::Io;
use vnic_em::error::{self, Exit};
use vnic_em::fake::FakeFabric;

/// The fake fabric of the tests: the EM's port at `em_lid`, and one VEMA agent on each of
/// LIDs 2 and 3.
#[allow(dead_code)]
pub fn fabric(em_lid: u16) -> FakeFabric {
    let mut f = FakeFabric::new(em_lid);
    f.add_node(2, 1).add_node(3, 1);
    f
}

/// The client policy of the tests: the fake fabric answers at once or never, so a short
/// time-out and no grace period for late answers.
pub fn policy(timeout_ms: u64) -> Policy {
    Policy {
        timeout: Duration::from_millis(timeout_ms),
        grace: Duration::ZERO,
        ..Policy::default()
    }
}

/// How many Sets the fabric has received.
// Each test file builds this module on its own, and not all of them count Sets.
#[allow(dead_code)]
pub fn sets(c: &Client<FakeFabric>) -> usize {
    c.fabric().count(METHOD_SET)
}

/// A command's exit code, standard output and standard error.
#[allow(dead_code)]
pub struct Out {
    pub code: Exit,
    pub out: String,
    pub err: String,
}

#[allow(dead_code)]
/// Runs a command with its output captured, its error printed as `vnic-em` prints it.
pub fn capture(f: impl FnOnce(&mut Io<'_>) -> error::Result) -> Out {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = {
        let mut io = Io {
            out: &mut out,
            err: &mut err,
        };
        let r = f(&mut io);
        // As main prints an error that ends a command.
        error::finish(r, io.err)
    };
    Out {
        code,
        out: String::from_utf8(out).unwrap(),
        err: String::from_utf8(err).unwrap(),
    }
}
