// SPDX-License-Identifier: GPL-2.0

//! Old spellings of the command line, accepted for one release with a
//! warning, where the parser cannot take them itself: `-v N`, the vport of
//! `show`, `counters` and `set`, now that `-v` means `--verbose`. (Old
//! options that kept their name, `traps --timeout SECS` and `watch
//! --interval SECS`, are hidden options of the parser, warned about where
//! they are read.)

use std::ffi::OsString;

/// The commands whose `-v` took a vport number.
const VPORT_COMMANDS: [&str; 3] = ["show", "counters", "set"];

/// Why `-v` is no longer the vport, said after its warning.
const VERBOSE_NOW: &str = " (-v now means --verbose)";

/// A vport number as `-v` took it: decimal (or `0x` hex, as clap read
/// no u8, but a script may have written it).
fn is_number(s: &str) -> bool {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()),
        None => !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()),
    }
}

/// The deprecation warning of an old spelling, as printed on stderr.
pub fn warning(old: &str, new: &str) -> String {
    format!("vnic-em: warning: `{old}` is deprecated and goes in the next release: write `{new}`")
}

/// `args` (the program name first) with each old `-v N` of a vport command
/// turned into `--vport N`, and a warning for each.
pub fn rewrite(args: Vec<OsString>) -> (Vec<OsString>, Vec<String>) {
    let mut out = Vec::with_capacity(args.len());
    let mut warnings = Vec::new();
    let mut in_vport_cmd = false;
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        let Some(s) = a.to_str() else {
            out.push(a);
            continue;
        };
        if s == "--" {
            out.push(a);
            out.extend(it);
            break;
        }
        if !in_vport_cmd {
            in_vport_cmd = VPORT_COMMANDS.contains(&s);
            out.push(a);
            continue;
        }
        let glued = s.strip_prefix("-v").filter(|n| is_number(n));
        if let Some(n) = glued {
            warnings.push(warning(&format!("-v{n}"), &format!("--vport {n}")) + VERBOSE_NOW);
            out.push("--vport".into());
            out.push(n.into());
            continue;
        }
        let next_is_number = it.peek().and_then(|n| n.to_str()).is_some_and(is_number);
        if s == "-v" && next_is_number {
            let n = it.next().unwrap_or_default();
            let ns = n.to_string_lossy().into_owned();
            warnings.push(warning(&format!("-v {ns}"), &format!("--vport {ns}")) + VERBOSE_NOW);
            out.push("--vport".into());
            out.push(n);
            continue;
        }
        out.push(a);
    }
    (out, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(a: &str) -> (String, usize) {
        let args = a.split(' ').map(OsString::from).collect();
        let (out, w) = rewrite(args);
        let out: Vec<String> = out
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        (out.join(" "), w.len())
    }

    #[test]
    fn old_vport_spelling_only() {
        assert_eq!(
            run("vnic-em -d umad0 show -l 2 -v 0 --json"),
            ("vnic-em -d umad0 show -l 2 --vport 0 --json".into(), 1)
        );
        assert_eq!(
            run("vnic-em set -l 1 -v3 --vesw 2"),
            ("vnic-em set -l 1 --vport 3 --vesw 2".into(), 1)
        );
        // -v as --verbose stays.
        assert_eq!(
            run("vnic-em -v show -l 2"),
            ("vnic-em -v show -l 2".into(), 0)
        );
        assert_eq!(
            run("vnic-em show -v -l 2"),
            ("vnic-em show -v -l 2".into(), 0)
        );
        assert_eq!(run("vnic-em apply -v 5"), ("vnic-em apply -v 5".into(), 0));
        assert!(warning("-v 0", "--vport 0").contains("deprecated"));
    }
}
