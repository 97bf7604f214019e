// SPDX-License-Identifier: GPL-2.0

//! The SC-to-VL table (`[em] sc2vl`) and the SC/VL pairs of each vport.
//!
//! hfi1 turns on the send-side integrity checks of every SDMA engine and
//! send context: a packet whose VL (the PBC's, the vport's `*_vl_*`) is
//! not what the port's SC-to-VL table maps its SC (the 16B header's, the
//! vport's `*_sc_*`) to is dropped by the hardware, while the driver
//! counts it as sent. The EM cannot read that table (it is an SMA
//! attribute, for the fabric manager's SMPs), so the config says it, and
//! a pair that disagrees with it is an error: nothing of the vport would
//! ever arrive, and nothing on the node says why.

use std::ops::Range;

use opa_wire::vema_info::MAX_NUM_PCP;
use toml::Spanned;

use super::Checker;
use crate::config::{Qos, RawVport, SInt, DEFAULT_SC2VL, NUM_SC, SC_VL_MAX, VL15};

/// The table the pairs are checked against, and where it was declared
/// (`None`: hfi1's after reset).
pub(super) struct Sc2vl {
    pub(super) table: [u8; NUM_SC],
    pub(super) line: Option<usize>,
}

impl Sc2vl {
    /// Whose table it is, for the messages.
    fn source(&self) -> String {
        match self.line {
            Some(l) => format!("[em] sc2vl at line {l}"),
            None => "hfi1's table after reset; if the fabric manager programs another, \
                     declare it with [em] sc2vl"
                .to_string(),
        }
    }
}

/// A VL of a port: a data VL (0 to 7) or VL15; the HFI refuses the others.
fn port_vl(vl: i64) -> bool {
    (0..8).contains(&vl) || vl == i64::from(VL15)
}

/// `[em] sc2vl`: 32 VLs (SC0 to SC31), or a string of `SC:VL` pairs that
/// change hfi1's table after reset (`"8:1 9:1"`), as opasim's `sc2vl`
/// file takes them.
pub(super) fn check_sc2vl(c: &mut Checker<'_>, v: &Spanned<toml::Value>) -> Option<[u8; NUM_SC]> {
    let span = v.span();
    let mut t = DEFAULT_SC2VL;
    match v.get_ref() {
        toml::Value::Array(a) => {
            if a.len() != NUM_SC {
                c.err(
                    span,
                    format!("sc2vl must list {NUM_SC} VLs, one per SC (got {})", a.len()),
                );
                return None;
            }
            for (sc, x) in a.iter().enumerate() {
                match x.as_integer() {
                    Some(vl) if port_vl(vl) => t[sc] = vl as u8,
                    _ => {
                        let got = x
                            .as_integer()
                            .map_or_else(|| format!("a {}", x.type_str()), |n| n.to_string());
                        c.err(
                            span,
                            format!("sc2vl: the VL of SC{sc} must be 0 to 7 or 15 (got {got})"),
                        );
                        return None;
                    }
                }
            }
        }
        toml::Value::String(s) => {
            for pair in s.split([' ', ',', '\t']).filter(|p| !p.is_empty()) {
                let parsed = pair
                    .split_once(':')
                    .and_then(|(sc, vl)| Some((sc.parse::<i64>().ok()?, vl.parse::<i64>().ok()?)));
                match parsed {
                    Some((sc, vl)) if (0..NUM_SC as i64).contains(&sc) && port_vl(vl) => {
                        t[sc as usize] = vl as u8;
                    }
                    _ => {
                        c.err(
                            span,
                            format!(
                                "sc2vl: {pair:?} is not SC:VL with an SC from 0 to 31 and \
                                 a VL from 0 to 7 or 15"
                            ),
                        );
                        return None;
                    }
                }
            }
        }
        _ => {
            c.err(
                span,
                "sc2vl must be 32 VLs ([0, 1, ...]) or SC:VL pairs over hfi1's table \
                 (\"8:1 9:1\")",
            );
            return None;
        }
    }
    Some(t)
}

/// The place of a value, if the file gives it.
fn elem_span(v: &Option<Spanned<Vec<SInt>>>, i: usize) -> Option<Range<usize>> {
    v.as_ref()
        .filter(|v| v.get_ref().len() == MAX_NUM_PCP)
        .and_then(|v| v.get_ref().get(i))
        .map(|x| x.span())
}

/// One SC/VL pair: its names for the messages, its values, and where it
/// is written (the SC if given, else the VL, else the `[[vport]]`).
struct Pair {
    sc_name: String,
    vl_name: String,
    sc: u8,
    vl: u8,
    span: Range<usize>,
}

/// Every SC/VL pair of a vport: the 8 PCPs of unicast and multicast, and
/// the untagged unicast and multicast ones.
fn pairs(p: &RawVport, q: &Qos, vport_span: &Range<usize>) -> Vec<Pair> {
    let mut out = Vec::new();
    let tables = [
        (
            "pcp_sc_uc",
            "pcp_vl_uc",
            &q.pcp_sc_uc,
            &q.pcp_vl_uc,
            &p.pcp_sc_uc,
            &p.pcp_vl_uc,
        ),
        (
            "pcp_sc_mc",
            "pcp_vl_mc",
            &q.pcp_sc_mc,
            &q.pcp_vl_mc,
            &p.pcp_sc_mc,
            &p.pcp_vl_mc,
        ),
    ];
    for (scn, vln, scs, vls, raw_sc, raw_vl) in tables {
        for i in 0..MAX_NUM_PCP {
            let span = elem_span(raw_sc, i)
                .or_else(|| elem_span(raw_vl, i))
                .unwrap_or_else(|| vport_span.clone());
            out.push(Pair {
                sc_name: format!("{scn}[{i}]"),
                vl_name: format!("{vln}[{i}]"),
                sc: scs[i],
                vl: vls[i],
                span,
            });
        }
    }
    let untagged = [
        (
            "non_vlan_sc_uc",
            "non_vlan_vl_uc",
            q.non_vlan_sc_uc,
            q.non_vlan_vl_uc,
            &p.non_vlan_sc_uc,
            &p.non_vlan_vl_uc,
        ),
        (
            "non_vlan_sc_mc",
            "non_vlan_vl_mc",
            q.non_vlan_sc_mc,
            q.non_vlan_vl_mc,
            &p.non_vlan_sc_mc,
            &p.non_vlan_vl_mc,
        ),
    ];
    for (scn, vln, sc, vl, raw_sc, raw_vl) in untagged {
        let span = raw_sc
            .as_ref()
            .or(raw_vl.as_ref())
            .map_or_else(|| vport_span.clone(), |v| v.span());
        out.push(Pair {
            sc_name: scn.to_string(),
            vl_name: vln.to_string(),
            sc,
            vl,
            span,
        });
    }
    out
}

/// Checks each SC/VL pair of a vport against the table: an error for a
/// pair the HFI drops, a warning for VNIC traffic on VL15.
pub(super) fn check_pairs(
    c: &mut Checker<'_>,
    p: &RawVport,
    q: &Qos,
    vport_span: &Range<usize>,
    t: &Sc2vl,
) {
    for pair in pairs(p, q, vport_span) {
        if pair.sc > SC_VL_MAX || pair.vl > SC_VL_MAX {
            continue; // Out of range: reported already.
        }
        let mapped = t.table[usize::from(pair.sc)];
        if pair.vl != mapped {
            c.err(
                pair.span,
                format!(
                    "{} = {} with {} = {}: the SC-to-VL table maps SC{} to VL{mapped} ({}), \
                     so the HFI drops every frame sent with this pair",
                    pair.sc_name,
                    pair.sc,
                    pair.vl_name,
                    pair.vl,
                    pair.sc,
                    t.source()
                ),
            );
        } else if pair.vl == VL15 {
            c.warn(
                pair.span,
                format!(
                    "{} = {} sends on VL15, the management VL: its packets are at most \
                     2048 bytes (larger frames are dropped) and compete with the fabric \
                     manager's",
                    pair.sc_name, pair.sc
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{parse, Diag, DEFAULT_SC2VL};

    const VESW: &str = "[[vesw]]\nid = 1\npkey = 0x8001\n";

    fn vport(extra: &str) -> String {
        format!(
            "{VESW}[[vport]]\nlid = 2\nvport = 0\nvesw = 1\nport_num = 1\n\
             mac = \"02:00:00:00:02:00\"\n{extra}"
        )
    }

    fn errs(src: &str) -> Vec<Diag> {
        parse(src).err().unwrap_or_default()
    }

    #[test]
    fn a_pair_the_default_table_drops_is_an_error() {
        // Accepted before, and every frame of the vport was dropped.
        let e = errs(&vport("non_vlan_sc_uc = 5\n"));
        assert_eq!(e.len(), 1, "{e:#?}");
        assert_eq!((e[0].line, e[0].col), (10, 18));
        assert!(
            e[0].msg.starts_with(
                "non_vlan_sc_uc = 5 with non_vlan_vl_uc = 0: the SC-to-VL table maps SC5 to VL5 \
                 (hfi1's table after reset"
            ),
            "{}",
            e[0].msg
        );
        assert!(e[0].msg.contains("declare it with [em] sc2vl"));
        // A VL without its SC: the place is the VL's.
        let e = errs(&vport("\nnon_vlan_vl_mc = 2\n"));
        assert_eq!((e.len(), e[0].line), (1, 11), "{e:#?}");
        assert!(e[0]
            .msg
            .starts_with("non_vlan_sc_mc = 0 with non_vlan_vl_mc = 2"));
        // PCP tables: one error per PCP that disagrees, at its element.
        let e = errs(&vport(
            "pcp_sc_mc = [0, 1, 2, 3, 4, 5, 6, 7]\npcp_vl_mc = [0, 1, 2, 3, 4, 5, 6, 0]\n\
             pcp_vl_uc = [0, 0, 0, 0, 0, 0, 0, 15]\n",
        ));
        let got: Vec<(usize, usize, &str)> = e
            .iter()
            .map(|d| (d.line, d.col, d.msg.split(':').next().unwrap_or("")))
            .collect();
        assert_eq!(
            got,
            vec![
                (10, 35, "pcp_sc_mc[7] = 7 with pcp_vl_mc[7] = 0"),
                (12, 35, "pcp_sc_uc[7] = 0 with pcp_vl_uc[7] = 15"),
            ]
        );
        assert!(e[1].msg.contains("maps SC0 to VL0"), "{}", e[1].msg);
        // What the default table maps is fine.
        let ok =
            vport("pcp_sc_uc = [0, 0, 1, 1, 2, 2, 3, 3]\npcp_vl_uc = [0, 0, 1, 1, 2, 2, 3, 3]\n");
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn a_declared_table_is_what_pairs_are_checked_against() {
        let pairs = format!(
            "[em]\nsc2vl = \"5:0 8:1\"\n{}",
            vport("non_vlan_sc_uc = 5\n")
        );
        let c = parse(&pairs).unwrap();
        let mut want = DEFAULT_SC2VL;
        want[5] = 0;
        want[8] = 1;
        assert_eq!(c.em.sc2vl, Some(want));
        let list: Vec<String> = (0..32).map(|sc| (sc % 8).to_string()).collect();
        let full = format!(
            "[em]\nsc2vl = [{}]\n{}",
            list.join(", "),
            vport("non_vlan_sc_mc = 9\nnon_vlan_vl_mc = 1\nnon_vlan_sc_uc = 1\n")
        );
        let e = errs(&full);
        assert_eq!(e.len(), 1, "{e:#?}");
        assert!(
            e[0].msg.contains("maps SC1 to VL1") || e[0].msg.contains("([em] sc2vl at line 2)"),
            "{}",
            e[0].msg
        );
        // SC1 -> VL1 in both tables: the error is non_vlan_uc's VL 0.
        assert!(e[0]
            .msg
            .starts_with("non_vlan_sc_uc = 1 with non_vlan_vl_uc = 0"));
        assert!(e[0].msg.ends_with(
            "maps SC1 to VL1 ([em] sc2vl at line 2), so the HFI drops every frame sent with \
             this pair"
        ));
    }

    #[test]
    fn bad_tables_are_errors() {
        for (t, msg) in [
            ("[0, 1]", "sc2vl must list 32 VLs, one per SC (got 2)"),
            ("\"3:9\"", "sc2vl: \"3:9\" is not SC:VL"),
            ("\"32:1\"", "sc2vl: \"32:1\" is not SC:VL"),
            ("\"3-1\"", "sc2vl: \"3-1\" is not SC:VL"),
            ("7", "sc2vl must be 32 VLs"),
        ] {
            let e = errs(&format!("[em]\nsc2vl = {t}\n"));
            assert_eq!(e.len(), 1, "{t}: {e:#?}");
            assert!(e[0].msg.starts_with(msg), "{t}: {}", e[0].msg);
            assert_eq!((e[0].line, e[0].col), (2, 9));
        }
        let mut l = vec!["0"; 32];
        l[4] = "8";
        let e = errs(&format!("[em]\nsc2vl = [{}]\n", l.join(",")));
        assert!(e[0]
            .msg
            .contains("the VL of SC4 must be 0 to 7 or 15 (got 8)"));
    }

    #[test]
    fn warnings_do_not_refuse() {
        let c = parse(&vport("non_vlan_sc_uc = 15\nnon_vlan_vl_uc = 15\n")).unwrap();
        assert_eq!(c.warnings.len(), 1, "{:#?}", c.warnings);
        assert_eq!(c.warnings[0].line, 10);
        assert!(c.warnings[0].msg.contains("VL15, the management VL"));
        // Two vesws equal modulo 256 on one node port, not on two.
        let two = |lid2: u16| {
            format!(
                "{}[[vesw]]\nid = 0x101\npkey = 0x8002\n[[vport]]\nlid = {lid2}\nvport = 1\n\
                 vesw = 0x101\nport_num = 1\nmac = \"02:00:00:00:02:01\"\n",
                vport("")
            )
        };
        let c = parse(&two(2)).unwrap();
        assert_eq!(c.warnings.len(), 1, "{:#?}", c.warnings);
        assert_eq!((c.warnings[0].line, c.warnings[0].col), (16, 8));
        assert!(c.warnings[0].msg.starts_with(
            "vesw 257 (0x101) and vesw 1 (0x1, line 7) both have vports on LID 0x0002"
        ));
        assert!(parse(&two(3)).unwrap().warnings.is_empty());
    }
}
