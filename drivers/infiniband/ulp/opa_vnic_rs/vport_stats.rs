// SPDX-License-Identifier: GPL-2.0-only

//! A vport's statistics as `ethtool -S` and the EM's counter attributes show them, from the
//! device's statistics of its netdev.

use crate::wire::vema_counters::{ErrorCounters, SummaryCounters};
use kernel::rdma::netdev::{EthtoolStat, VnicStats};

/// What `ethtool -S` shows: the C driver's names, in its order.
pub(crate) const ETHTOOL_STATS: &[EthtoolStat] = &[
    ("rx_packets", |s| s.netstats.rx_packets),
    ("tx_packets", |s| s.netstats.tx_packets),
    ("rx_bytes", |s| s.netstats.rx_bytes),
    ("tx_bytes", |s| s.netstats.tx_bytes),
    ("rx_errors", |s| s.netstats.rx_errors),
    ("tx_errors", |s| s.netstats.tx_errors),
    ("rx_dropped", |s| s.netstats.rx_dropped),
    ("tx_dropped", |s| s.netstats.tx_dropped),
    ("tx_unicast", |s| s.tx_grp.unicast),
    ("tx_mcastbcast", |s| s.tx_grp.mcastbcast),
    ("tx_untagged", |s| s.tx_grp.untagged),
    ("tx_vlan", |s| s.tx_grp.vlan),
    ("tx_64_size", |s| s.tx_grp.s_64),
    ("tx_65_127", |s| s.tx_grp.s_65_127),
    ("tx_128_255", |s| s.tx_grp.s_128_255),
    ("tx_256_511", |s| s.tx_grp.s_256_511),
    ("tx_512_1023", |s| s.tx_grp.s_512_1023),
    ("tx_1024_1518", |s| s.tx_grp.s_1024_1518),
    ("tx_1519_max", |s| s.tx_grp.s_1519_max),
    ("rx_unicast", |s| s.rx_grp.unicast),
    ("rx_mcastbcast", |s| s.rx_grp.mcastbcast),
    ("rx_untagged", |s| s.rx_grp.untagged),
    ("rx_vlan", |s| s.rx_grp.vlan),
    ("rx_64_size", |s| s.rx_grp.s_64),
    ("rx_65_127", |s| s.rx_grp.s_65_127),
    ("rx_128_255", |s| s.rx_grp.s_128_255),
    ("rx_256_511", |s| s.rx_grp.s_256_511),
    ("rx_512_1023", |s| s.rx_grp.s_512_1023),
    ("rx_1024_1518", |s| s.rx_grp.s_1024_1518),
    ("rx_1519_max", |s| s.rx_grp.s_1519_max),
    ("rx_fifo_errors", |s| s.netstats.rx_fifo_errors),
    ("rx_length_errors", |s| s.netstats.rx_length_errors),
    ("tx_fifo_errors", |s| s.netstats.tx_fifo_errors),
    ("tx_carrier_errors", |s| s.netstats.tx_carrier_errors),
    ("tx_dlid_zero", |s| s.tx_dlid_zero),
    ("tx_drop_state", |s| s.tx_drop_state),
    ("rx_drop_state", |s| s.rx_drop_state),
    ("rx_oversize", |s| s.rx_oversize),
    ("rx_runt", |s| s.rx_runt),
];

/// Which vport counters are of: its number, its vesw and the OPA port.
pub(crate) struct VportId {
    pub(crate) num: u8,
    pub(crate) vesw_id: u16,
    pub(crate) port: u32,
}

/// `opa_vnic_get_summary_counters()`: from the device's statistics `s` of the netdev.
pub(crate) fn summary_counters(id: &VportId, s: &VnicStats) -> SummaryCounters {
    let mut c = SummaryCounters::ZERO;
    c.vp_instance = u16::from(id.num);
    c.vesw_id = id.vesw_id;
    c.veswport_num = id.port;
    c.tx_errors = s.netstats.tx_errors;
    c.rx_errors = s.netstats.rx_errors;
    c.tx_packets = s.netstats.tx_packets;
    c.rx_packets = s.netstats.rx_packets;
    c.tx_bytes = s.netstats.tx_bytes;
    c.rx_bytes = s.netstats.rx_bytes;
    let (t, r) = (&s.tx_grp, &s.rx_grp);
    c.tx_unicast = t.unicast;
    c.tx_mcastbcast = t.mcastbcast;
    c.tx_untagged = t.untagged;
    c.tx_vlan = t.vlan;
    c.tx_64_size = t.s_64;
    c.tx_65_127 = t.s_65_127;
    c.tx_128_255 = t.s_128_255;
    c.tx_256_511 = t.s_256_511;
    c.tx_512_1023 = t.s_512_1023;
    c.tx_1024_1518 = t.s_1024_1518;
    c.tx_1519_max = t.s_1519_max;
    c.rx_unicast = r.unicast;
    c.rx_mcastbcast = r.mcastbcast;
    c.rx_untagged = r.untagged;
    c.rx_vlan = r.vlan;
    c.rx_64_size = r.s_64;
    c.rx_65_127 = r.s_65_127;
    c.rx_128_255 = r.s_128_255;
    c.rx_256_511 = r.s_256_511;
    c.rx_512_1023 = r.s_512_1023;
    c.rx_1024_1518 = r.s_1024_1518;
    c.rx_1519_max = r.s_1519_max;
    c
}

/// `opa_vnic_get_error_counters()`: from the device's statistics `s` of the netdev.
pub(crate) fn error_counters(id: &VportId, s: &VnicStats) -> ErrorCounters {
    let mut c = ErrorCounters::ZERO;
    c.vp_instance = u16::from(id.num);
    c.vesw_id = id.vesw_id;
    c.veswport_num = id.port;
    c.tx_errors = s.netstats.tx_errors;
    c.rx_errors = s.netstats.rx_errors;
    c.tx_dlid_zero = s.tx_dlid_zero;
    c.tx_drop_state = s.tx_drop_state;
    c.tx_logic = s
        .netstats
        .tx_fifo_errors
        .wrapping_add(s.netstats.tx_carrier_errors);
    c.rx_bad_veswid = s.netstats.rx_nohandler;
    c.rx_runt = s.rx_runt;
    c.rx_oversize = s.rx_oversize;
    c.rx_drop_state = s.rx_drop_state;
    c.rx_logic = s.netstats.rx_fifo_errors;
    c
}
