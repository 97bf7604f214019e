// SPDX-License-Identifier: GPL-2.0

//! Man pages and shell completions, generated from the command line's own
//! clap definitions, so that they say what `--help` says and cannot drift
//! from it. The package build runs `vnic-em gen-docs DIR` (a hidden
//! command) and installs what it writes.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use clap::Command;
use clap_complete::Shell;

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
