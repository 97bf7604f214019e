// SPDX-License-Identifier: GPL-2.0-only

//! The statistics of opasim's VNIC netdevs, as hfi1 keeps them (`struct opa_vnic_stats`).

use crate::{hfi::Hfi, port::Counters};
use core::sync::atomic::AtomicU64;
use kernel::{bindings, rdma::vnic::ProviderNetdev};

/// `ETH_FCS_LEN`: hfi1 counts the FCS in the byte counters.
pub(crate) const ETH_FCS_LEN: u64 = 4;

/// Packet size and type counters (`struct opa_vnic_grp_stats`).
#[derive(Default)]
pub(crate) struct GrpCounters {
    pub(crate) unicast: AtomicU64,
    pub(crate) mcastbcast: AtomicU64,
    pub(crate) untagged: AtomicU64,
    pub(crate) vlan: AtomicU64,
    pub(crate) s_64: AtomicU64,
    pub(crate) s_65_127: AtomicU64,
    pub(crate) s_128_255: AtomicU64,
    pub(crate) s_256_511: AtomicU64,
    pub(crate) s_512_1023: AtomicU64,
    pub(crate) s_1024_1518: AtomicU64,
    pub(crate) s_1519_max: AtomicU64,
}

impl GrpCounters {
    /// The size buckets, smallest first (for tests).
    #[cfg(CONFIG_INFINIBAND_OPASIM_KUNIT_TEST)]
    pub(crate) fn sizes(&self) -> [u64; 7] {
        [
            &self.s_64,
            &self.s_65_127,
            &self.s_128_255,
            &self.s_256_511,
            &self.s_512_1023,
            &self.s_1024_1518,
            &self.s_1519_max,
        ]
        .map(Counters::get)
    }

    /// The kind counters: unicast, multicast or broadcast, untagged, VLAN (for tests).
    #[cfg(CONFIG_INFINIBAND_OPASIM_KUNIT_TEST)]
    pub(crate) fn kinds(&self) -> [u64; 4] {
        [&self.unicast, &self.mcastbcast, &self.untagged, &self.vlan].map(Counters::get)
    }

    /// Counts a frame of `len` bytes (without FCS); the kind counters for good frames only.
    pub(crate) fn count(&self, eth: &[u8], len: usize, good: bool) {
        // hfi1's thresholds, which account for the 4-byte FCS.
        let size = match len {
            1515.. => &self.s_1519_max,
            1020.. => &self.s_1024_1518,
            508.. => &self.s_512_1023,
            252.. => &self.s_256_511,
            124.. => &self.s_128_255,
            61.. => &self.s_65_127,
            _ => &self.s_64,
        };
        Counters::inc(size);
        if !good {
            return;
        }
        if eth.first().is_some_and(|b| b & 1 != 0) {
            Counters::inc(&self.mcastbcast);
        } else {
            Counters::inc(&self.unicast);
        }
        let ethertype = eth.get(12..14).map(|t| u16::from_be_bytes([t[0], t[1]]));
        if matches!(ethertype, Some(0x8100 | 0x88a8)) {
            Counters::inc(&self.vlan);
        } else {
            Counters::inc(&self.untagged);
        }
    }

    pub(crate) fn read(&self, out: &mut bindings::opa_vnic_grp_stats) {
        let g = Counters::get;
        out.unicast = g(&self.unicast);
        out.mcastbcast = g(&self.mcastbcast);
        out.untagged = g(&self.untagged);
        out.vlan = g(&self.vlan);
        out.s_64 = g(&self.s_64);
        out.s_65_127 = g(&self.s_65_127);
        out.s_128_255 = g(&self.s_128_255);
        out.s_256_511 = g(&self.s_256_511);
        out.s_512_1023 = g(&self.s_512_1023);
        out.s_1024_1518 = g(&self.s_1024_1518);
        out.s_1519_max = g(&self.s_1519_max);
    }
}

/// The statistics of a VNIC netdev (hfi1's `struct opa_vnic_stats` per queue; one queue).
#[derive(Default)]
pub(crate) struct VnicCounters {
    pub(crate) tx_packets: AtomicU64,
    pub(crate) tx_bytes: AtomicU64,
    pub(crate) tx_fifo_errors: AtomicU64,
    pub(crate) tx_carrier_errors: AtomicU64,
    pub(crate) tx_dlid_zero: AtomicU64,
    pub(crate) tx_drop_state: AtomicU64,
    pub(crate) rx_packets: AtomicU64,
    pub(crate) rx_bytes: AtomicU64,
    pub(crate) rx_fifo_errors: AtomicU64,
    pub(crate) rx_nohandler: AtomicU64,
    pub(crate) rx_drop_state: AtomicU64,
    pub(crate) rx_runt: AtomicU64,
    pub(crate) rx_oversize: AtomicU64,
    pub(crate) rx_crc_errors: AtomicU64,
    pub(crate) rx_frame_errors: AtomicU64,
    pub(crate) tx_grp: GrpCounters,
    pub(crate) rx_grp: GrpCounters,
}

/// `ndo_get_stats64`: hfi1's sums (one queue each way).
pub(crate) fn stats(nd: &ProviderNetdev<Hfi>, out: &mut bindings::opa_vnic_stats) {
    let s = &nd.data().stats;
    let g = Counters::get;
    let n = &mut out.netstats;
    n.tx_packets = g(&s.tx_packets);
    n.tx_bytes = g(&s.tx_bytes);
    n.tx_fifo_errors = g(&s.tx_fifo_errors);
    n.tx_carrier_errors = g(&s.tx_carrier_errors);
    n.rx_packets = g(&s.rx_packets);
    n.rx_bytes = g(&s.rx_bytes);
    n.rx_fifo_errors = g(&s.rx_fifo_errors);
    n.rx_nohandler = g(&s.rx_nohandler);
    n.rx_crc_errors = g(&s.rx_crc_errors);
    n.rx_frame_errors = g(&s.rx_frame_errors);
    out.tx_dlid_zero = g(&s.tx_dlid_zero);
    out.tx_drop_state = g(&s.tx_drop_state);
    out.rx_drop_state = g(&s.rx_drop_state);
    out.rx_runt = g(&s.rx_runt);
    out.rx_oversize = g(&s.rx_oversize);
    s.tx_grp.read(&mut out.tx_grp);
    s.rx_grp.read(&mut out.rx_grp);
    let n = &mut out.netstats;
    n.tx_errors = n.tx_fifo_errors + n.tx_carrier_errors + out.tx_drop_state + out.tx_dlid_zero;
    n.tx_dropped = n.tx_errors;
    n.rx_errors = n.rx_fifo_errors
        + n.rx_nohandler
        + n.rx_crc_errors
        + n.rx_frame_errors
        + out.rx_drop_state
        + out.rx_oversize
        + out.rx_runt;
    n.rx_dropped = n.rx_errors;
    // hfi1 sets `multicast` and `rx_length_errors` in `netdev->stats` only, which the VNIC
    // driver's `ndo_get_stats64` does not read: they stay 0 in the `opa_vnic_stats`.
}
