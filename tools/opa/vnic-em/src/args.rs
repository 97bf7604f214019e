// SPDX-License-Identifier: GPL-2.0

//! How the command line's values are read: integers in a range (decimal
//! or `0x` hex) with [`int`], bytes in hex with [`hex`], and the few
//! values that are more than a number. Each is a clap `value_parser`;
//! its error is what clap prints after `invalid value '...' for '--opt'`.

use std::time::Duration;

use opa_wire::mad::{IB_MGMT_MAD_HDR, OPA_MGMT_MAD_SIZE};

use crate::commands::EntryArg;
use crate::config::{pkey_problem, LID24_MAX, UNICAST_LID_MAX};
use crate::mac::Mac;

/// A parser of one kind of integer, for `value_parser`.
pub type IntParser<T> = fn(&str) -> Result<T, String>;

/// A node port (unicast) LID.
pub const LID: IntParser<u16> = int::<u16, 1, { UNICAST_LID_MAX as u64 }>;
/// A 24-bit DLID, not 0.
pub const DLID: IntParser<u32> = int::<u32, 1, { LID24_MAX as u64 }>;

/// A number, decimal or `0x` hex.
fn number(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse::<u64>(),
    };
    r.map_err(|_| format!("{s:?} is not a number (decimal or 0x hex)"))
}

/// An integer in `LO..=HI`, decimal or `0x` hex: the parser of every
/// integer option with a range, e.g.
/// `value_parser = int::<u8, 0, { SC_VL_MAX as u64 }>`.
pub fn int<T: TryFrom<u64>, const LO: u64, const HI: u64>(s: &str) -> Result<T, String> {
    let v = number(s)?;
    let out = || format!("{s} is out of range: give {LO:#x} to {HI:#x}");
    if !(LO..=HI).contains(&v) {
        return Err(out());
    }
    T::try_from(v).map_err(|_| out())
}

/// Bytes given in hex on the command line. Not a `Vec<u8>`: clap would
/// take that for a list of values.
#[derive(Debug, Clone, Default)]
pub struct HexData(pub Vec<u8>);

/// Bytes in hex, two digits each, spaces and colons between them allowed.
pub fn hex(s: &str) -> Result<HexData, String> {
    let t: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ':')
        .collect();
    if t.len() % 2 != 0 {
        return Err(format!("{s:?}: odd number of hex digits"));
    }
    (0..t.len())
        .step_by(2)
        .map(|i| {
            t.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
                .ok_or_else(|| format!("{s:?}: not hex"))
        })
        .collect::<Result<Vec<u8>, String>>()
        .map(HexData)
}

/// The size of a whole MAD, header included: said in words, as a bare
/// range would not tell why.
pub fn mad_len(s: &str) -> Result<usize, String> {
    let v = number(s)?;
    let (lo, hi) = (IB_MGMT_MAD_HDR, OPA_MGMT_MAD_SIZE);
    match usize::try_from(v) {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!(
            "a MAD of {s} bytes: it must hold the {lo}-byte MAD header and fit in {hi} bytes"
        )),
    }
}

/// Seconds, from 0.1 to a day.
pub fn interval(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && (0.1..=86400.0).contains(&t) => Ok(Duration::from_secs_f64(t)),
        _ => Err(format!("{s:?}: give seconds, from 0.1 to 86400")),
    }
}

/// A vesw's P_Key: 16 bits, checked as the config file's
/// ([`pkey_problem`]).
pub fn pkey(s: &str) -> Result<u16, String> {
    let v = int::<u16, 0, 0xffff>(s)?;
    match pkey_problem(v, s.trim()) {
        Some(p) => Err(p),
        None => Ok(v),
    }
}

/// A MAC table entry of `set --mac-entry`: `INDEX=MAC,DLID[,src]`; a zero
/// MAC (which clears the slot) needs no DLID.
pub fn entry(s: &str) -> Result<EntryArg, String> {
    let (idx, rest) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected INDEX=MAC,DLID[,src]"))?;
    let index = int::<u16, 0, 2047>(idx)?;
    let mut parts = rest.split(',');
    let mac: Mac = parts
        .next()
        .unwrap_or_default()
        .parse()
        .map_err(|e| format!("{e}"))?;
    let dlid = match parts.next() {
        Some(d) => int::<u32, 0, { LID24_MAX as u64 }>(d)?,
        None if mac.is_zero() => 0,
        None => return Err(format!("{s:?}: missing DLID")),
    };
    let source = match parts.next() {
        None => false,
        Some("src") | Some("source") => true,
        Some(x) => return Err(format!("{s:?}: unknown flag {x:?} (only \"src\")")),
    };
    if parts.next().is_some() {
        return Err(format!("{s:?}: too many fields"));
    }
    if let Some(p) = mac.unicast_problem().filter(|_| !mac.is_zero()) {
        return Err(format!("{s:?}: {p}"));
    }
    if !mac.is_zero() && dlid == 0 {
        return Err(format!("{s:?}: DLID must not be 0"));
    }
    Ok(EntryArg {
        index,
        mac,
        dlid,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_takes_decimal_and_hex_in_range() {
        assert_eq!(LID("0x2"), Ok(2));
        assert_eq!(LID(" 49151 "), Ok(0xbfff));
        assert_eq!(
            LID("0"),
            Err("0 is out of range: give 0x1 to 0xbfff".to_string())
        );
        assert_eq!(
            LID("x"),
            Err("\"x\" is not a number (decimal or 0x hex)".to_string())
        );
        assert_eq!(
            int::<u32, 0, { u32::MAX as u64 }>("0xffffffff"),
            Ok(u32::MAX)
        );
        assert!(int::<u8, 0, 15>("16").is_err());
    }

    #[test]
    fn hex_and_entries() {
        assert_eq!(hex("01:02 ff").map(|h| h.0), Ok(vec![1, 2, 0xff]));
        assert!(hex("123").is_err());
        assert!(pkey("0x8000").is_err());
        assert_eq!(pkey("0x8001"), Ok(0x8001));
        let e = entry("7=02:00:00:00:00:07,0x7,src").unwrap();
        assert_eq!((e.index, e.dlid, e.source), (7, 7, true));
        assert_eq!(entry("7=0:0:0:0:0:0").map(|e| e.dlid), Ok(0));
        assert!(entry("7=02:00:00:00:00:07").is_err());
    }
}
