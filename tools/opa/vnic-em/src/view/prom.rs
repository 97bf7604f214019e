// SPDX-License-Identifier: GPL-2.0

//! `counters --prometheus`: the per-vport counters in the Prometheus text
//! exposition format (version 0.0.4), for a node exporter's textfile
//! collector or any scraper that reads a file.
//!
//! Each VEMA counter is a counter family `opa_vnic_vport_<name>_total`
//! (the name as `counters --json` spells it), with the labels `lid`,
//! `vport`, `vesw` and `mac`; the error counters that the summary also
//! has (`tx_errors`, `rx_errors`) come once. `opa_vnic_em_read_errors` is
//! a gauge of the vports that could not be read, so that a scrape that
//! lost some vports is seen as such.

use std::fmt::Write as _;

use opa_wire::vema_counters::{ErrorCounters, SummaryCounters};

use super::{error_fields, summary_fields};
use crate::mac::Mac;

/// The prefix of every per-vport metric.
pub const PREFIX: &str = "opa_vnic_vport_";

/// What was read of one vport.
#[derive(Debug, Clone)]
pub struct VportCounters {
    /// Node port LID.
    pub lid: u16,
    /// Virtual port number.
    pub vport: u8,
    /// Base MAC of the vport.
    pub mac: Mac,
    /// Summary counters.
    pub summary: SummaryCounters,
    /// Error counters.
    pub errors: ErrorCounters,
}

/// The three ids at the head of both counter attributes: labels, not
/// counters.
const IDS: [&str; 3] = ["vp_instance", "vesw_id", "veswport_num"];

/// A label value with `\`, `"` and line feeds escaped, as the format
/// wants them.
pub fn escape_label(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A counter: its name (without prefix and suffix), the start of its
/// HELP text, its value.
type Sample = (&'static str, &'static str, u64);

/// The counters of a vport: the summary counters, then the error
/// counters the summary does not have.
fn counters_of(c: &VportCounters) -> Vec<Sample> {
    let mut out: Vec<Sample> = summary_fields(&c.summary)
        .into_iter()
        .filter(|(k, _)| !IDS.contains(k))
        .map(|(k, v)| (k, "VEMA summary counter", v))
        .collect();
    for (k, v) in error_fields(&c.errors) {
        if !IDS.contains(&k) && !out.iter().any(|(n, _, _)| *n == k) {
            out.push((k, "VEMA error counter", v));
        }
    }
    out
}

/// The label set of a vport: `{lid="0x0002",vport="0",vesw="1",mac="..."}`.
fn labels(c: &VportCounters) -> String {
    format!(
        "{{lid=\"{}\",vport=\"{}\",vesw=\"{}\",mac=\"{}\"}}",
        escape_label(&format!("{:#06x}", c.lid)),
        c.vport,
        c.summary.vesw_id,
        escape_label(&c.mac.to_string())
    )
}

/// The exposition of every vport read, and of `read_errors` vports that
/// could not be: `# HELP` and `# TYPE` once per family, then one sample
/// per vport, families in the order `counters --json` lists them.
pub fn prometheus_text(vports: &[VportCounters], read_errors: usize) -> String {
    let mut out = String::new();
    let per_vport: Vec<(String, Vec<Sample>)> =
        vports.iter().map(|c| (labels(c), counters_of(c))).collect();
    // Every vport has the same families in the same order.
    if let Some((_, first)) = per_vport.first() {
        for (i, (name, help, _)) in first.iter().enumerate() {
            let metric = format!("{PREFIX}{name}_total");
            let _ = writeln!(out, "# HELP {metric} {help} {name} of the vport.");
            let _ = writeln!(out, "# TYPE {metric} counter");
            for (l, vals) in &per_vport {
                if let Some((_, _, v)) = vals.get(i) {
                    let _ = writeln!(out, "{metric}{l} {v}");
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "# HELP opa_vnic_em_read_errors Vports whose counters could not be read."
    );
    let _ = writeln!(out, "# TYPE opa_vnic_em_read_errors gauge");
    let _ = writeln!(out, "opa_vnic_em_read_errors {read_errors}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(escape_label("0x0002"), "0x0002");
    }

    #[test]
    fn families_once_samples_per_vport() {
        let mut a = VportCounters {
            lid: 2,
            vport: 0,
            mac: Mac([2, 0, 0, 0, 2, 0]),
            summary: SummaryCounters::ZERO,
            errors: ErrorCounters::ZERO,
        };
        a.summary.vesw_id = 1;
        a.summary.rx_packets = 123;
        a.summary.tx_errors = 4;
        a.errors.tx_errors = 4;
        a.errors.tx_dlid_zero = 9;
        let mut b = a.clone();
        b.lid = 3;
        b.vport = 1;
        let t = prometheus_text(&[a, b], 1);
        assert!(t.contains(
            "# HELP opa_vnic_vport_rx_packets_total VEMA summary counter rx_packets of the \
             vport.\n# TYPE opa_vnic_vport_rx_packets_total counter\n\
             opa_vnic_vport_rx_packets_total{lid=\"0x0002\",vport=\"0\",vesw=\"1\",\
             mac=\"02:00:00:00:02:00\"} 123\n\
             opa_vnic_vport_rx_packets_total{lid=\"0x0003\",vport=\"1\",vesw=\"1\",\
             mac=\"02:00:00:00:02:00\"} 123\n"
        ));
        assert!(t.contains("opa_vnic_vport_tx_dlid_zero_total{lid=\"0x0002\""));
        assert_eq!(
            t.matches("# TYPE opa_vnic_vport_tx_errors_total ").count(),
            1
        );
        assert!(!t.contains("vesw_id_total") && !t.contains("vp_instance"));
        assert!(t.ends_with("# TYPE opa_vnic_em_read_errors gauge\nopa_vnic_em_read_errors 1\n"));
        // Every line is a comment or `name{labels} value`.
        for l in t.lines().filter(|l| !l.starts_with('#')) {
            let (_, v) = l.rsplit_once(' ').unwrap();
            assert!(v.parse::<u64>().is_ok(), "{l}");
        }
        assert_eq!(
            prometheus_text(&[], 0),
            "# HELP opa_vnic_em_read_errors Vports whose counters could not be read.\n\
             # TYPE opa_vnic_em_read_errors gauge\nopa_vnic_em_read_errors 0\n"
        );
    }
}
