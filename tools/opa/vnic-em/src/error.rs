// SPDX-License-Identifier: GPL-2.0

//! How a command ends: its exit code ([`Exit`], documented in
//! `Documentation/infiniband/vnic-em.rst` and the man pages) and the
//! error that ends it early ([`Error`]), which knows its exit code.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;

use crate::client::EmError;
use crate::config::ConfigErrors;

/// The exit codes of `vnic-em`. Their numbers are an interface: scripts
/// and the QEMU scenarios test them. A worse outcome has a higher
/// number, but for [`Exit::Differs`], which no error outranks, and
/// [`Exit::NotJoined`], numbered after the others so that none moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Success.
    Ok = 0,
    /// Usage or config error: nothing was sent.
    Usage = 1,
    /// Fabric error (timeout, MAD status, bad response): nothing was
    /// changed (or, for read-only commands, some reads failed).
    Fabric = 2,
    /// Partial apply: some Sets were applied, then something failed.
    Partial = 3,
    /// Local error: no umad device, or it cannot be opened or registered.
    Device = 4,
    /// `apply --check`: the fabric differs from the config.
    Differs = 5,
    /// `apply`: every vport is as the config says, but a node port could
    /// not join its vesw's multicast group, so broadcast (ARP) does not
    /// reach it. Not [`Exit::Fabric`], which says nothing was changed.
    NotJoined = 6,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The exit code of a command that met `e` and went on: a transport
    /// failure is local, anything else the fabric's.
    pub fn of(e: &EmError) -> Exit {
        match e {
            EmError::Transport(_) => Exit::Device,
            _ => Exit::Fabric,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}

/// What ends a command early. Each knows its exit code ([`Error::exit`])
/// and its message ([`fmt::Display`]); [`finish`] prints it.
#[derive(Debug)]
pub enum Error {
    /// A request failed.
    Em(EmError),
    /// A request failed after some Sets were applied.
    Partial(EmError),
    /// The config file does not load.
    Config(ConfigErrors),
    /// A usage error, said in a sentence.
    Usage(String),
    /// A fabric error that is not one request's, said in a sentence.
    Fabric(String),
    /// A local error (the umad device, signals), said in a sentence.
    Device(String),
    /// The output cannot be written. `BrokenPipe` (the reader is gone,
    /// as in `vnic-em apply | head`) ends the command quietly.
    Output(io::Error),
}

impl Error {
    /// The exit code this error ends the process with. A broken pipe is
    /// success, as in ripgrep: the reader has what it wanted, and nothing
    /// more was sent to the fabric.
    pub fn exit(&self) -> Exit {
        match self {
            Error::Em(e) => Exit::of(e),
            Error::Partial(_) => Exit::Partial,
            Error::Config(_) | Error::Usage(_) => Exit::Usage,
            Error::Fabric(_) => Exit::Fabric,
            Error::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => Exit::Ok,
            Error::Device(_) | Error::Output(_) => Exit::Device,
        }
    }

    /// Whether the reader of the output is gone.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Output(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The config's diagnostics name their file and line already.
            Error::Config(e) => write!(f, "{e}"),
            Error::Em(e) | Error::Partial(e) => write!(f, "vnic-em: {e}"),
            Error::Usage(m) | Error::Fabric(m) | Error::Device(m) => write!(f, "vnic-em: {m}"),
            Error::Output(e) => write!(f, "vnic-em: cannot write the output: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<EmError> for Error {
    fn from(e: EmError) -> Self {
        Error::Em(e)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Output(e)
    }
}

impl From<ConfigErrors> for Error {
    fn from(e: ConfigErrors) -> Self {
        Error::Config(e)
    }
}

/// What a command returns: how it ended (it may have reported errors on
/// the way and gone on), or the error that stopped it.
pub type Result<T = Exit> = std::result::Result<T, Error>;

/// The exit code of a command's result, its error (if any) printed on
/// `err`, unless the reader of the output is gone.
pub fn finish(r: Result, err: &mut dyn Write) -> Exit {
    match r {
        Ok(code) => code,
        Err(e) => {
            if !e.is_broken_pipe() {
                // Nowhere left to say that stderr failed too.
                let _ = writeln!(err, "{e}");
            }
            e.exit()
        }
    }
}
