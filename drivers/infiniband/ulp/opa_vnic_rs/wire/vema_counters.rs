// SPDX-License-Identifier: GPL-2.0

//! VEMA counter attributes: summary counters and error counters.

use super::codec::{Field, Reader, Writer};
use super::error::WireError;

wire_struct! {
    /// Summary counters (`struct opa_veswport_summary_counters`), 360 bytes.
    /// Size buckets are 64, 65-127, 128-255, 256-511, 512-1023, 1024-1518
    /// and 1519 bytes and up.
    pub struct SummaryCounters {
        /// Virtual port index on the OPA port.
        vp_instance: u16,
        /// Virtual Ethernet switch id.
        vesw_id: u16,
        /// Port number (the C driver puts the OPA port number here).
        veswport_num: u32,
        /// Transmit errors.
        tx_errors: u64,
        /// Receive errors.
        rx_errors: u64,
        /// Packets transmitted.
        tx_packets: u64,
        /// Packets received.
        rx_packets: u64,
        /// Bytes transmitted.
        tx_bytes: u64,
        /// Bytes received.
        rx_bytes: u64,
        /// Unicast packets transmitted.
        tx_unicast: u64,
        /// Multicast and broadcast packets transmitted.
        tx_mcastbcast: u64,
        /// Untagged packets transmitted.
        tx_untagged: u64,
        /// VLAN packets transmitted.
        tx_vlan: u64,
        /// 64-byte packets transmitted.
        tx_64_size: u64,
        /// 65-127-byte packets transmitted.
        tx_65_127: u64,
        /// 128-255-byte packets transmitted.
        tx_128_255: u64,
        /// 256-511-byte packets transmitted.
        tx_256_511: u64,
        /// 512-1023-byte packets transmitted.
        tx_512_1023: u64,
        /// 1024-1518-byte packets transmitted.
        tx_1024_1518: u64,
        /// Packets of 1519 bytes and more transmitted.
        tx_1519_max: u64,
        /// Unicast packets received.
        rx_unicast: u64,
        /// Multicast and broadcast packets received.
        rx_mcastbcast: u64,
        /// Untagged packets received.
        rx_untagged: u64,
        /// VLAN packets received.
        rx_vlan: u64,
        /// 64-byte packets received.
        rx_64_size: u64,
        /// 65-127-byte packets received.
        rx_65_127: u64,
        /// 128-255-byte packets received.
        rx_128_255: u64,
        /// 256-511-byte packets received.
        rx_256_511: u64,
        /// 512-1023-byte packets received.
        rx_512_1023: u64,
        /// 1024-1518-byte packets received.
        rx_1024_1518: u64,
        /// Packets of 1519 bytes and more received.
        rx_1519_max: u64,
        /// Reserved.
        reserved: [u64; 16],
    }
}

const _: () = assert!(SummaryCounters::SIZE == 360);

wire_struct! {
    /// Error counters (`struct opa_veswport_error_counters`), 304 bytes.
    pub struct ErrorCounters {
        /// Virtual port index on the OPA port.
        vp_instance: u16,
        /// Virtual Ethernet switch id.
        vesw_id: u16,
        /// Port number (the C driver puts the OPA port number here).
        veswport_num: u32,
        /// Transmit errors.
        tx_errors: u64,
        /// Receive errors.
        rx_errors: u64,
        /// Reserved.
        rsvd0: u64,
        /// Source MAC filter errors.
        tx_smac_filt: u64,
        /// Reserved.
        rsvd1: u64,
        /// Reserved.
        rsvd2: u64,
        /// Reserved.
        rsvd3: u64,
        /// Packets not sent for want of a DLID.
        tx_dlid_zero: u64,
        /// Reserved.
        rsvd4: u64,
        /// Other transmit errors.
        tx_logic: u64,
        /// Reserved.
        rsvd5: u64,
        /// Packets not sent because the port was not forwarding.
        tx_drop_state: u64,
        /// Packets received with an unknown vesw id.
        rx_bad_veswid: u64,
        /// Reserved.
        rsvd6: u64,
        /// Runt frames received (under 60 bytes).
        rx_runt: u64,
        /// Oversize frames received (over MTU plus VLAN Ethernet header).
        rx_oversize: u64,
        /// Reserved.
        rsvd7: u64,
        /// Packets received while the interface was down.
        rx_eth_down: u64,
        /// Packets dropped because the port was not forwarding.
        rx_drop_state: u64,
        /// Other receive errors.
        rx_logic: u64,
        /// Reserved.
        rsvd8: u64,
        /// Reserved.
        rsvd9: [u64; 16],
    }
}

const _: () = assert!(ErrorCounters::SIZE == 304);
