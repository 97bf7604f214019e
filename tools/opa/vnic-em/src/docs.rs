// SPDX-License-Identifier: GPL-2.0

//! Man pages and shell completions, generated from the command line's own
//! clap definitions, so that they say what `--help` says and cannot drift
//! from it. The package build runs `vnic-em gen-docs DIR` (a hidden
//! command) and installs what it writes.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Command;
use clap_complete::Shell;

use crate::error::{self, Error, Exit};

/// The shells completions are written for, and where Debian's packages
/// of those shells look for them (under `/usr/share`).
pub const SHELLS: [(Shell, &str); 3] = [
    (Shell::Bash, "bash-completion/completions"),
    (Shell::Zsh, "zsh/vendor-completions"),
    (Shell::Fish, "fish/vendor_completions.d"),
];

/// Writes a section 1 man page for `cmd` and one for each of its visible
/// subcommands (`vnic-em-apply.1`...) into `dir/man`, and the bash, zsh
/// and fish completions into `dir/completions/SHELL`; returns the files
/// written.
pub fn generate(cmd: Command, dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut cmd = cmd.disable_help_subcommand(true);
    // Gives the subcommands their display names ("vnic-em-apply").
    cmd.build();
    let mut out = Vec::new();
    let man = dir.join("man");
    fs::create_dir_all(&man)?;
    for c in std::iter::once(&cmd).chain(cmd.get_subcommands().filter(|s| !s.is_hide_set())) {
        out.push(clap_mangen::Man::new(c.clone()).generate_to(&man)?);
    }
    let name = cmd.get_name().to_string();
    for (shell, _) in SHELLS {
        let d = dir.join("completions").join(shell.to_string());
        fs::create_dir_all(&d)?;
        out.push(clap_complete::generate_to(shell, &mut cmd, &name, &d)?);
    }
    Ok(out)
}

/// The hidden `gen-docs DIR`: added to the parser at run time only, so
/// that the man pages and completions it writes from the command line do
/// not list it.
pub fn gen_docs_command() -> Command {
    Command::new("gen-docs")
        .hide(true)
        .about("Write the man pages and shell completions into DIR")
        .arg(
            clap::Arg::new("dir")
                .value_name("DIR")
                .required(true)
                .value_parser(clap::value_parser!(PathBuf)),
        )
}

/// `gen-docs DIR`: writes the files of `cmd` (the command line without
/// `gen-docs`), then lists them on stdout.
pub fn gen_docs(cmd: Command, dir: &Path) -> Exit {
    let r = generate(cmd, dir)
        .map_err(|e| Error::Device(format!("gen-docs: {}: {e}", dir.display())))
        .and_then(|files| {
            let mut out = std::io::stdout().lock();
            for f in files {
                writeln!(out, "{}", f.display())?;
            }
            out.flush()?;
            Ok(Exit::Ok)
        });
    error::finish(r, &mut std::io::stderr().lock())
}
