// SPDX-License-Identifier: GPL-2.0

//! The checks of a parsed config, one function a table: `[em]`
//! ([`check_em`]), `[[vesw]]` ([`vesw`]: the vesw, its default ports and
//! routing control, its `[[vesw.mac_table]]`), `[[vport]]` ([`vport`]),
//! and what spans tables (the size of the MAC tables with the vports'
//! entries); the SC/VL pairs against the SC-to-VL table are in [`qos`].
//! Every error and warning is kept with its place; none stops the
//! checking, so one run reports them all.

use std::ops::Range;

use opa_wire::vema_info::{MAC_TBL_MAX_ENTRIES, MAX_NUM_PCP};
use toml::Spanned;

use super::{
    line_col, Config, Diag, EmSettings, NodeName, RawConfig, RawEm, SInt, Vesw, Vport,
    FABRIC_ID_MAX, SC_VL_MAX, UNICAST_LID_MAX,
};
use crate::mac::Mac;
use crate::sa::NodeRef;
use qos::{check_sc2vl, Sc2vl};
use vesw::{check_vesw, VeswsSeen};
use vport::{check_vport, VportsSeen};

mod qos;
mod vesw;
mod vport;

/// The errors and warnings found so far, each with its offset in the file
/// (to sort them in file order) and its line and column.
pub(super) struct Checker<'a> {
    pub(super) src: &'a str,
    pub(super) diags: Vec<(usize, Diag)>,
    /// The node ports named so far (`node = "..."`).
    pub(super) names: Vec<NodeName>,
    pub(super) warnings: Vec<(usize, Diag)>,
    /// The parser could not read every line: what seems missing may be
    /// on one of them, so it is not reported ([`Checker::err_absent`]).
    pub(super) partial: bool,
}

impl<'a> Checker<'a> {
    fn diag(&self, span: &Range<usize>, msg: String) -> (usize, Diag) {
        let (line, col) = line_col(self.src, span.start);
        (span.start, Diag { line, col, msg })
    }

    pub(super) fn err(&mut self, span: Range<usize>, msg: impl Into<String>) {
        let d = self.diag(&span, msg.into());
        self.diags.push(d);
    }

    /// An error about something absent (a key, a vesw): not reported when
    /// a syntax error may have hidden it.
    pub(super) fn err_absent(&mut self, span: Range<usize>, msg: impl Into<String>) {
        if !self.partial {
            self.err(span, msg);
        }
    }

    fn warn(&mut self, span: Range<usize>, msg: impl Into<String>) {
        let d = self.diag(&span, msg.into());
        self.warnings.push(d);
    }

    fn line_of(&self, span: &Range<usize>) -> usize {
        line_col(self.src, span.start).0
    }

    /// An integer in `lo..=hi`, or an error naming `what`.
    fn int<T: TryFrom<i64> + Default>(
        &mut self,
        v: &SInt,
        lo: i64,
        hi: i64,
        hex: bool,
        what: &str,
    ) -> T {
        let x = *v.get_ref();
        if x < lo || x > hi {
            // The value as the user wrote it, decimal or hex.
            let got = self.src.get(v.span()).unwrap_or_default();
            let msg = if hex {
                format!("{what} must be from {lo:#x} to {hi:#x} (got {got})")
            } else {
                format!("{what} must be from {lo} to {hi} (got {got})")
            };
            self.err(v.span(), msg);
            return T::default();
        }
        T::try_from(x).unwrap_or_default()
    }

    fn opt_int<T: TryFrom<i64> + Default>(
        &mut self,
        v: &Option<SInt>,
        lo: i64,
        hi: i64,
        hex: bool,
        what: &str,
        default: T,
    ) -> T {
        match v {
            Some(v) => self.int(v, lo, hi, hex, what),
            None => default,
        }
    }

    /// A node port's name: a port GUID (`0x` and 16 hexadecimal digits) or a node
    /// description; its index in [`Checker::names`].
    fn node(&mut self, v: &Spanned<String>, what: &str) -> Option<usize> {
        match NodeRef::parse(v.get_ref()) {
            Some(name) => {
                let (line, col) = line_col(self.src, v.span().start);
                self.names.push(NodeName { name, line, col });
                Some(self.names.len() - 1)
            }
            None => {
                self.err(
                    v.span(),
                    format!(
                        "{what}: a port GUID (0x and 16 hexadecimal digits) or a node \
                         description of 1 to 64 bytes"
                    ),
                );
                None
            }
        }
    }

    fn mac(&mut self, v: &Spanned<String>, what: &str) -> Option<Mac> {
        match v.get_ref().parse::<Mac>() {
            Ok(m) => Some(m),
            Err(e) => {
                self.err(v.span(), format!("{what}: {e}"));
                None
            }
        }
    }

    fn pcp(&mut self, v: &Option<Spanned<Vec<SInt>>>, what: &str) -> [u8; MAX_NUM_PCP] {
        let mut out = [0u8; MAX_NUM_PCP];
        let Some(v) = v else {
            return out;
        };
        if v.get_ref().len() != MAX_NUM_PCP {
            self.err(
                v.span(),
                format!(
                    "{what} must list {MAX_NUM_PCP} values, one per PCP (got {})",
                    v.get_ref().len()
                ),
            );
            return out;
        }
        for (slot, x) in out.iter_mut().zip(v.get_ref()) {
            *slot = self.int(x, 0, i64::from(SC_VL_MAX), false, what);
        }
        out
    }
}

/// Checks a whole config and builds it (with placeholders where a value
/// is wrong: the errors in `c` say the config is not to be used).
pub(super) fn check(c: &mut Checker<'_>, raw: RawConfig) -> Config {
    let em = raw.em.as_ref().map(|e| check_em(c, e)).unwrap_or_default();
    let sc2vl = Sc2vl {
        table: em.sc2vl_table(),
        line: raw
            .em
            .as_ref()
            .and_then(|e| e.sc2vl.as_ref())
            .map(|v| c.line_of(&v.span())),
    };
    let mut seen = VeswsSeen::default();
    let vesws: Vec<Vesw> = raw
        .vesw
        .iter()
        .map(|sv| check_vesw(c, sv, &em, &mut seen))
        .collect();
    let mut vports_seen = VportsSeen::default();
    let vports: Vec<Vport> = raw
        .vport
        .iter()
        .map(|sp| check_vport(c, sp, &seen.ids, &sc2vl, &mut vports_seen))
        .collect();
    check_table_sizes(c, &raw, &vesws, &vports);
    Config {
        em,
        vesws,
        vports,
        names: std::mem::take(&mut c.names),
        warnings: Vec::new(),
    }
}

/// `[em]`.
fn check_em(c: &mut Checker<'_>, e: &RawEm) -> EmSettings {
    EmSettings {
        fabric_id: c.opt_int(
            &e.fabric_id,
            0,
            i64::from(FABRIC_ID_MAX),
            true,
            "fabric_id",
            0,
        ),
        trap_lid: e
            .trap_lid
            .as_ref()
            .map(|v| c.int(v, 1, i64::from(UNICAST_LID_MAX), true, "trap_lid")),
        trap_sl: c.opt_int(&e.trap_sl, 0, i64::from(SC_VL_MAX), false, "trap_sl", 0),
        sc2vl: e.sc2vl.as_ref().and_then(|v| check_sc2vl(c, v)),
    }
}

/// The MAC table of each vesw with the entries of its vports: the
/// vports' entries must fit with the explicit ones.
fn check_table_sizes(c: &mut Checker<'_>, raw: &RawConfig, vesws: &[Vesw], vports: &[Vport]) {
    for (sv, v) in raw.vesw.iter().zip(vesws) {
        if !v.mac_table_from_vports {
            continue;
        }
        let explicit: Vec<Mac> = v.mac_table.iter().map(|e| e.mac).collect();
        let auto = vports
            .iter()
            .filter(|p| p.vesw == v.id && !explicit.contains(&p.mac))
            .count();
        if v.mac_table.len() + auto > usize::from(MAC_TBL_MAX_ENTRIES) {
            c.err(
                sv.span(),
                format!(
                    "MAC table of vesw {} needs {} entries, more than {MAC_TBL_MAX_ENTRIES}",
                    v.id,
                    v.mac_table.len() + auto
                ),
            );
        }
    }
}
