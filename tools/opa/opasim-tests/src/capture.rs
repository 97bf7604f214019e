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

use opa_wire::wire::hdr16b;
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

fn num(s: &str) -> Option<u32> {
    match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn parse() -> Result<Args, String> {
    let usage = "usage: opasim-capture [--file F] --slid L --dlid L --pkey P --vesw V [--ethertype T] [--min N]";
    let mut a = Args {
        file: "/sys/kernel/debug/opasim/capture".into(),
        slid: 0,
        dlid: 0,
        pkey: 0,
        vesw: 0,
        ethertype: None,
        min: 1,
    };
    let mut it = std::env::args().skip(1);
    let mut seen = 0;
    while let Some(o) = it.next() {
        let v = it.next().ok_or(usage)?;
        let n = || num(&v).ok_or_else(|| format!("bad value '{v}' for {o}"));
        match o.as_str() {
            "--file" => a.file = v.clone(),
            "--slid" => a.slid = n()?,
            "--dlid" => a.dlid = n()?,
            "--pkey" => a.pkey = n()? as u16,
            "--vesw" => a.vesw = n()? as u16,
            "--ethertype" => a.ethertype = Some(n()? as u16),
            "--min" => a.min = n()? as usize,
            _ => return Err(usage.into()),
        }
        if matches!(o.as_str(), "--slid" | "--dlid" | "--pkey" | "--vesw") {
            seen += 1;
        }
    }
    if seen != 4 {
        return Err(usage.into());
    }
    Ok(a)
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
        let (Some(slid), Some(dlid), Some(len)) = (num(w[7]), num(w[9]), num(w[13])) else {
            return Err(format!("cannot parse '{line}'"));
        };
        if slid != a.slid || dlid != a.dlid {
            continue;
        }
        let bytes = hex(w[16]).ok_or_else(|| format!("bad hex in '{line}'"))?;
        match check(a, len as usize, &bytes) {
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
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("--list") {
        let file = match argv.get(1..) {
            Some([o, f]) if o == "--file" => f.clone(),
            Some([]) => "/sys/kernel/debug/opasim/capture".into(),
            _ => {
                eprintln!("usage: opasim-capture --list [--file F]");
                return ExitCode::FAILURE;
            }
        };
        return match list(&file) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("opasim-capture: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("opasim-capture: {e}");
            ExitCode::FAILURE
        }
    }
}
