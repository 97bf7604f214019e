// SPDX-License-Identifier: GPL-2.0

//! `opasim-capture`: checks the VNIC packets in opasim's capture
//! (`/sys/kernel/debug/opasim/capture`) with the shared wire code.
//!
//! ```text
//! opasim-capture [--file F] --slid L --dlid L --pkey P --vesw V [--ethertype T] [--min N]
//! ```
//!
//! Every `vnic` line whose SLID and DLID match is decoded as a whole 16B packet: the header
//! must carry the L4 type ETHR, the P_Key and the vesw id given, a length field equal to the
//! packet's length and a valid tail byte with the pad count. The program prints each packet and
//! fails if one is wrong, or if fewer than `--min` (default 1) correct ones carry an Ethernet
//! frame of the type given by `--ethertype` (any type without it).
//!
//! ```text
//! opasim-capture --list [--file F]
//! ```
//!
//! prints every VNIC packet decoded, one a line, without its entropy (which follows the flow
//! hash): `slid S dlid D vl V sc C rc R pkey P vesw W len N type T`, the type being the
//! ethertype, or for a VLAN-tagged frame `8100/pcpP/T` with the inner one. Two runs of the same
//! frames under two drivers list the same lines when the drivers build the same headers.

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use opa_wire::wire::hdr16b;
use opasim_tests::cli::num;
use std::process::ExitCode;

struct Args {
    file: String,
    slid: u32,
    dlid: u32,
    pkey: u16,
    vesw: u16,
    ethertype: Option<u16>,
    min: usize,
}

/// Checks the VNIC packets in opasim's capture with the shared wire code, or lists them.
#[derive(Parser)]
#[command(name = "opasim-capture")]
struct Cli {
    /// Print every VNIC packet of the capture, decoded, one a line
    #[arg(long, conflicts_with_all = ["slid", "dlid", "pkey", "vesw", "ethertype"])]
    list: bool,
    /// The capture file
    #[arg(long, value_name = "F", default_value = CAPTURE)]
    file: String,
    /// SLID of the packets to check
    #[arg(long, value_name = "L", value_parser = num::<u32>, required_unless_present = "list")]
    slid: Option<u32>,
    /// DLID of the packets to check
    #[arg(long, value_name = "L", value_parser = num::<u32>, required_unless_present = "list")]
    dlid: Option<u32>,
    /// The P_Key they must carry
    #[arg(long, value_name = "P", value_parser = num::<u16>, required_unless_present = "list")]
    pkey: Option<u16>,
    /// The vesw id they must carry
    #[arg(long, value_name = "V", value_parser = num::<u16>, required_unless_present = "list")]
    vesw: Option<u16>,
    /// The Ethernet type the correct packets counted must carry (any without it)
    #[arg(long, value_name = "T", value_parser = num::<u16>)]
    ethertype: Option<u16>,
    /// How many correct packets there must be at least
    #[arg(long, value_name = "N", default_value = "1", value_parser = num::<usize>)]
    min: usize,
}

/// opasim's capture in debugfs.
const CAPTURE: &str = "/sys/kernel/debug/opasim/capture";

impl Cli {
    /// The check to make; `None` without the four options it needs.
    fn check_args(&self) -> Option<Args> {
        Some(Args {
            file: self.file.clone(),
            slid: self.slid?,
            dlid: self.dlid?,
            pkey: self.pkey?,
            vesw: self.vesw?,
            ethertype: self.ethertype,
            min: self.min,
        })
    }
}

fn hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

/// Checks one captured packet; returns its Ethernet type and a description, or what is
/// wrong.
fn check(a: &Args, len: usize, bytes: &[u8]) -> Result<(u16, String), String> {
    if bytes.len() != len {
        return Err(format!("only {} of {len} bytes captured", bytes.len()));
    }
    let d = hdr16b::decap(bytes).map_err(|e| format!("not a valid 16B packet: {e:?}"))?;
    let h = d.hdr;
    if h.l4_type != hdr16b::L4_ETHR {
        return Err(format!("L4 type {:#x}, not ETHR", h.l4_type));
    }
    if h.pkey != a.pkey {
        return Err(format!("P_Key {:#06x}, not {:#06x}", h.pkey, a.pkey));
    }
    if h.vesw_id() != a.vesw {
        return Err(format!("vesw id {}, not {}", h.vesw_id(), a.vesw));
    }
    if d.eth.len() < 14 {
        return Err("no Ethernet header".into());
    }
    let et = u16::from_be_bytes([d.eth[12], d.eth[13]]);
    let mac = |m: &[u8]| {
        m.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    };
    Ok((et, format!(
        "16B slid {:#x} dlid {:#x} len {} qw sc {} pkey {:#06x} entropy {:#x} vesw {} pad {}; eth {} -> {} type {et:#06x}, {} bytes",
        h.slid,
        h.dlid,
        h.len_qw,
        h.sc,
        h.pkey,
        h.entropy,
        h.vesw_id(),
        d.pad,
        mac(&d.eth[6..12]),
        mac(&d.eth[0..6]),
        d.eth.len()
    )))
}

/// `--list`: every VNIC packet of the capture, decoded.
fn list(file: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() != 17 || w[1] != "vnic" {
            continue;
        }
        let bytes = hex(w[16]).ok_or_else(|| format!("bad hex in '{line}'"))?;
        let Ok(h) = hdr16b::Hdr16b::decode(&bytes) else {
            println!("undecodable {}", w[16]);
            continue;
        };
        let eth = bytes.get(hdr16b::HDR_LEN..).unwrap_or(&[]);
        let be16 = |at: usize| {
            eth.get(at..at + 2)
                .map(|b| u16::from_be_bytes([b[0], b[1]]))
        };
        let ty = match be16(12) {
            Some(t @ (0x8100 | 0x88a8)) => format!(
                "{t:04x}/pcp{}/{:04x}",
                be16(14).unwrap_or(0) >> 13,
                be16(16).unwrap_or(0)
            ),
            Some(t) => format!("{t:04x}"),
            None => "-".into(),
        };
        println!(
            "slid {:#x} dlid {:#x} vl {} sc {} rc {} pkey {:#06x} vesw {} len {} type {ty}",
            h.slid,
            h.dlid,
            w[15],
            h.sc,
            h.rc,
            h.pkey,
            h.vesw_id(),
            h.len_qw
        );
    }
    Ok(())
}

fn run(a: &Args) -> Result<(), String> {
    let text = std::fs::read_to_string(&a.file).map_err(|e| format!("{}: {e}", a.file))?;
    let (mut good, mut bad) = (0, 0);
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        // seq kind dev D port P slid S dlid D pkey K len N vl V hex
        if w.len() != 17 || w[1] != "vnic" {
            continue;
        }
        let (Ok(slid), Ok(dlid), Ok(len)) =
            (num::<u32>(w[7]), num::<u32>(w[9]), num::<usize>(w[13]))
        else {
            return Err(format!("cannot parse '{line}'"));
        };
        if slid != a.slid || dlid != a.dlid {
            continue;
        }
        let bytes = hex(w[16]).ok_or_else(|| format!("bad hex in '{line}'"))?;
        match check(a, len, &bytes) {
            Ok((et, desc)) => {
                if a.ethertype.map_or(true, |t| t == et) {
                    good += 1;
                }
                println!("ok   #{} vl {} {desc}", w[0], w[15]);
            }
            Err(e) => {
                bad += 1;
                println!("BAD  #{} {e}", w[0]);
            }
        }
    }
    println!(
        "{good} correct, {bad} wrong VNIC packet(s) from LID {:#x} to {:#x}",
        a.slid, a.dlid
    );
    if bad > 0 || good < a.min {
        return Err(format!(
            "expected at least {} correct and no wrong packet",
            a.min
        ));
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.list {
        return match list(&cli.file) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("opasim-capture: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let Some(a) = cli.check_args() else {
        // clap requires the four without --list.
        Cli::command()
            .error(
                ErrorKind::MissingRequiredArgument,
                "--slid, --dlid, --pkey and --vesw are needed",
            )
            .exit();
    };
    match run(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("opasim-capture: {e}");
            ExitCode::FAILURE
        }
    }
}
