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
/// subcommands (`vnic-em-apply.1`...) and `fabric.toml.5` into `dir/man`,
/// and the bash, zsh and fish completions into `dir/completions/SHELL`;
/// returns the files written.
pub fn generate(cmd: Command, dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut cmd = cmd.disable_help_subcommand(true);
    // Gives the subcommands their display names ("vnic-em-apply").
    cmd.build();
    let mut out = Vec::new();
    let man = dir.join("man");
    fs::create_dir_all(&man)?;
    let pages: Vec<String> = std::iter::once(&cmd)
        .chain(cmd.get_subcommands().filter(|s| !s.is_hide_set()))
        .map(|c| c.get_display_name().unwrap_or(c.get_name()).to_string())
        .collect();
    for c in std::iter::once(&cmd).chain(cmd.get_subcommands().filter(|s| !s.is_hide_set())) {
        let page = clap_mangen::Man::new(c.clone());
        let path = man.join(page.get_filename());
        let mut f = fs::File::create(&path)?;
        render_page(&page, c, &pages, &mut f)?;
        out.push(path);
    }
    let config = man.join("fabric.toml.5");
    fs::write(&config, FABRIC_TOML_5)?;
    out.push(config);
    let name = cmd.get_name().to_string();
    for (shell, _) in SHELLS {
        let d = dir.join("completions").join(shell.to_string());
        fs::create_dir_all(&d)?;
        out.push(clap_complete::generate_to(shell, &mut cmd, &name, &d)?);
    }
    Ok(out)
}

/// `fabric.toml(5)`, the reference of the config file, written by hand: clap knows nothing
/// of it.
pub const FABRIC_TOML_5: &str = include_str!("../man/fabric.toml.5");

/// The files the commands use, for the FILES section of their pages.
const FILES: &[(&str, &str)] = &[
    (
        "/etc/vnic-em/fabric.toml",
        "The fabric the vnic-em service applies and watches (fabric.toml(5)).",
    ),
    (
        "/etc/default/vnic-em",
        "VNIC_EM_OPTS: the service's options, such as the EM's port.",
    ),
    (
        "/dev/infiniband/umad*",
        "The MAD devices of ib_umad: the EM sends and receives its MADs through them (modprobe ib_umad).",
    ),
];

/// Text as roff shows it, not as requests: backslashes and hyphens escaped, and a line that
/// would start with a control character guarded.
fn roff_text(s: &str) -> String {
    s.lines()
        .map(|l| {
            let l = l.replace('\\', "\\e").replace('-', "\\-");
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

/// Writes the man page of `c` as man-pages(7) orders it: clap's NAME, SYNOPSIS, DESCRIPTION,
/// OPTIONS and COMMANDS, then EXIT STATUS (the "Exit codes" of the help), NOTES (the rest
/// of the help's closing text), FILES and SEE ALSO, naming only what the package installs:
/// the other pages of `pages` and `fabric.toml(5)`.
fn render_page(
    page: &clap_mangen::Man,
    c: &Command,
    pages: &[String],
    w: &mut dyn Write,
) -> io::Result<()> {
    page.render_title(w)?;
    page.render_name_section(w)?;
    page.render_synopsis_section(w)?;
    page.render_description_section(w)?;
    if c.get_arguments().any(|a| !a.is_hide_set()) {
        page.render_options_section(w)?;
    }
    if c.get_subcommands().any(|s| !s.is_hide_set()) {
        page.render_subcommands_section(w)?;
    }
    let after = c
        .get_after_long_help()
        .or(c.get_after_help())
        .map(|t| t.to_string())
        .unwrap_or_default();
    let (exit, notes) = match after.find("Exit codes:") {
        Some(i) => {
            let rest = &after[i + "Exit codes:".len()..];
            let end = rest.find("\n\n").unwrap_or(rest.len());
            (
                rest[..end].trim_matches('\n').to_string(),
                format!("{}{}", &after[..i], &rest[end..]),
            )
        }
        None => (String::new(), after.clone()),
    };
    if !exit.is_empty() {
        write!(w, ".SH \"EXIT STATUS\"\n.nf\n{}.fi\n", roff_text(&exit))?;
    }
    if !notes.trim().is_empty() {
        write!(
            w,
            ".SH NOTES\n.nf\n{}.fi\n",
            roff_text(notes.trim_matches('\n'))
        )?;
    }
    w.write_all(b".SH FILES\n")?;
    for (file, what) in FILES {
        write!(
            w,
            ".TP\n.I {}\n{}",
            roff_text(file).trim_end(),
            roff_text(what)
        )?;
    }
    w.write_all(b".SH \"SEE ALSO\"\n")?;
    let name = c.get_display_name().unwrap_or(c.get_name());
    let mut refs: Vec<String> = pages
        .iter()
        .filter(|p| p.as_str() != name)
        .map(|p| format!(".BR {} (1)", roff_text(p).trim_end()))
        .collect();
    refs.push(".BR fabric.toml (5)".into());
    writeln!(w, "{}", refs.join(",\n"))
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
