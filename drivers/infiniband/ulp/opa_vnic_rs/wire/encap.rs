// SPDX-License-Identifier: GPL-2.0

//! The pure decisions of the transmit path, each matching the C driver for
//! the same inputs: entropy, default port and flow table, SC and VL
//! selection, routing control, DLID selection, the MAC table hash, the
//! interface MAC list checksum and the VLAN tag of a frame.

use super::vema_info::{PerVeswPortInfo, VeswInfo, VESW_MAX_NUM_DEF_PORT};
use super::vema_mac::ETH_ALEN;

/// Entries of the flow to default port table (`OPA_VNIC_FLOW_TBL_SIZE`).
pub const FLOW_TBL_SIZE: usize = 32;
/// No default port (`OPA_VNIC_INVALID_PORT`).
pub const INVALID_PORT: u8 = 0xff;
/// Buckets of the MAC table hash (`OPA_VNIC_MAC_TBL_SIZE`, 2^8).
pub const MAC_TBL_HASH_BITS: u32 = 8;
/// The MAC address byte the MAC table hashes (`OPA_VNIC_MAC_HASH_IDX`).
pub const MAC_HASH_IDX: usize = 5;
/// 802.1Q VLAN ethertype.
pub const ETH_P_8021Q: u16 = 0x8100;
/// 802.1ad VLAN ethertype.
pub const ETH_P_8021AD: u16 = 0x88a8;
/// IPv4 ethertype.
pub const ETH_P_IP: u16 = 0x0800;
/// IPv6 ethertype.
pub const ETH_P_IPV6: u16 = 0x86dd;
/// TCP protocol number.
pub const IPPROTO_TCP: u8 = 6;
/// UDP protocol number.
pub const IPPROTO_UDP: u8 = 17;

/// The 8-bit entropy of a flow from its 32-bit skb hash
/// (`opa_vnic_calc_entropy()`): the XOR of the hash's four bytes.
#[inline]
pub const fn entropy_from_hash(hash: u32) -> u8 {
    let h = hash ^ (hash >> 8);
    let h = h ^ (h >> 16);
    (h & 0xff) as u8
}

/// The flow table index of an entropy (`opa_vnic_get_def_port()`): the sum
/// of its two nibbles, masked to the table size.
#[inline]
pub const fn flow_id(entropy: u8) -> usize {
    ((entropy & 0xf).wrapping_add(entropy >> 4) as usize) & (FLOW_TBL_SIZE - 1)
}

/// The flow to default port table built from `def_port_mask`
/// (`opa_vnic_process_vema_config()`): entry i is the (i mod n)-th set bit
/// of the mask, or [`INVALID_PORT`] everywhere when no bit is set.
pub fn flow_table(def_port_mask: u16) -> [u8; FLOW_TBL_SIZE] {
    let mut ports = [0u8; VESW_MAX_NUM_DEF_PORT];
    let mut n: usize = 0;
    for bit in 0u8..16 {
        if (def_port_mask >> bit) & 1 != 0 {
            if let Some(p) = ports.get_mut(n) {
                *p = bit;
            }
            n = n.wrapping_add(1);
        }
    }
    let mut tbl = [INVALID_PORT; FLOW_TBL_SIZE];
    // `ports[i % n]`, counted round rather than divided: the EM's Sets rebuild this table.
    let ports = ports.get(..n).unwrap_or(&ports);
    for (t, &p) in tbl.iter_mut().zip(ports.iter().cycle()) {
        *t = p;
    }
    tbl
}

/// The default port of a flow: `flow_tbl[flow_id(entropy)]`.
#[inline]
pub fn def_port(flow_tbl: &[u8; FLOW_TBL_SIZE], entropy: u8) -> u8 {
    flow_tbl
        .get(flow_id(entropy))
        .copied()
        .unwrap_or(INVALID_PORT)
}

/// Whether a MAC address is multicast (broadcast included).
#[inline]
pub const fn is_multicast_ether_addr(mac: &[u8; ETH_ALEN]) -> bool {
    mac[0] & 0x01 != 0
}

/// Whether a MAC address is locally administered.
#[inline]
pub const fn is_local_ether_addr(mac: &[u8; ETH_ALEN]) -> bool {
    mac[0] & 0x02 != 0
}

/// The priority code point of a VLAN TCI (bits 13-15).
#[inline]
pub const fn vlan_pcp(tci: u16) -> usize {
    ((tci & 0xe000) >> 13) as usize
}

/// The destination MAC of an Ethernet frame.
#[inline]
pub fn frame_dmac(frame: &[u8]) -> Option<[u8; ETH_ALEN]> {
    frame.get(..ETH_ALEN)?.try_into().ok()
}

/// The VLAN TCI in an Ethernet frame, as `__vlan_get_tag()` reads it: when
/// the ethertype (bytes 12-13) is 802.1Q or 802.1ad, the TCI in bytes
/// 14-15; `None` for an untagged or too short frame.
#[inline]
pub fn frame_vlan_tci(frame: &[u8]) -> Option<u16> {
    let proto = u16::from_be_bytes(frame.get(12..14)?.try_into().ok()?);
    if proto != ETH_P_8021Q && proto != ETH_P_8021AD {
        return None;
    }
    Some(u16::from_be_bytes(frame.get(14..16)?.try_into().ok()?))
}

impl PerVeswPortInfo {
    /// The SC of a frame (`opa_vnic_get_sc()`): with a VLAN tag in the
    /// frame, the PCP-indexed multicast or unicast table; without, the
    /// non-VLAN multicast or unicast SC. The value is returned as
    /// configured (not masked to 5 bits, as in C).
    #[inline]
    pub fn select_sc(&self, dmac: &[u8; ETH_ALEN], frame_tci: Option<u16>) -> u8 {
        let mc = is_multicast_ether_addr(dmac);
        match frame_tci {
            Some(tci) => {
                let tbl = if mc {
                    &self.pcp_to_sc_mc
                } else {
                    &self.pcp_to_sc_uc
                };
                tbl.get(vlan_pcp(tci)).copied().unwrap_or(0)
            }
            None if mc => self.non_vlan_sc_mc,
            None => self.non_vlan_sc_uc,
        }
    }

    /// The VL of a frame: like [`PerVeswPortInfo::select_sc`], on the VL tables and keyed by
    /// the same VLAN tag, the one in the frame, so that SC and VL always come from the same
    /// row of the EM's tables.
    ///
    /// hfi1 drops a packet whose VL (in the PBC) is not the SC-to-VL mapping of its header's
    /// SC, so the pair must agree. The C driver's `opa_vnic_get_vl()` keys the VL by the
    /// offloaded VLAN tag of the skb, which a VNIC netdev (no VLAN offload) never has, while
    /// its SC looks for a tag in the bytes in front of the frame (see
    /// `Documentation/infiniband/opa_vnic_rs_wire.rst`).
    #[inline]
    pub fn select_vl(&self, dmac: &[u8; ETH_ALEN], frame_tci: Option<u16>) -> u8 {
        let mc = is_multicast_ether_addr(dmac);
        match frame_tci {
            Some(tci) => {
                let tbl = if mc {
                    &self.pcp_to_vl_mc
                } else {
                    &self.pcp_to_vl_uc
                };
                tbl.get(vlan_pcp(tci)).copied().unwrap_or(0)
            }
            None if mc => self.non_vlan_vl_mc,
            None => self.non_vlan_vl_uc,
        }
    }
}

/// The traffic classes routing control distinguishes, with their bit
/// offset in the vesw `rc` word (`OPA_VNIC_ENCAP_RC_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RcClass {
    /// Anything but IPv4 and IPv6 (offset 0).
    Default,
    /// IPv4, neither TCP nor UDP (offset 4).
    Ipv4,
    /// IPv4 UDP (offset 8).
    Ipv4Udp,
    /// IPv4 TCP (offset 12).
    Ipv4Tcp,
    /// IPv6, neither TCP nor UDP (offset 16).
    Ipv6,
    /// IPv6 TCP (offset 20).
    Ipv6Tcp,
    /// IPv6 UDP (offset 24).
    Ipv6Udp,
}

impl RcClass {
    /// The class of a frame from its protocol after any VLAN tags
    /// (`vlan_get_protocol()`) and the IPv4 protocol or the IPv6 next
    /// header (the first one: extension headers are not followed).
    pub const fn classify(l3_proto: u16, l4_proto: u8) -> Self {
        match l3_proto {
            ETH_P_IPV6 => match l4_proto {
                IPPROTO_TCP => RcClass::Ipv6Tcp,
                IPPROTO_UDP => RcClass::Ipv6Udp,
                _ => RcClass::Ipv6,
            },
            ETH_P_IP => match l4_proto {
                IPPROTO_TCP => RcClass::Ipv4Tcp,
                IPPROTO_UDP => RcClass::Ipv4Udp,
                _ => RcClass::Ipv4,
            },
            _ => RcClass::Default,
        }
    }

    /// Bit offset of the class's 3-bit RC in the vesw `rc` word.
    pub const fn shift(self) -> u32 {
        match self {
            RcClass::Default => 0,
            RcClass::Ipv4 => 4,
            RcClass::Ipv4Udp => 8,
            RcClass::Ipv4Tcp => 12,
            RcClass::Ipv6 => 16,
            RcClass::Ipv6Tcp => 20,
            RcClass::Ipv6Udp => 24,
        }
    }
}

/// The shortest Ethernet frame without its FCS (`ETH_ZLEN`, defined once in
/// [`hdr16b`](super::hdr16b)). Transmit pads every frame to it first, as the
/// C driver does, so the headers [`TxFrame::parse`] reads are always there.
pub use super::hdr16b::ETH_ZLEN;

/// The bytes of a frame [`TxFrame::parse`] reads: the Ethernet header, one
/// VLAN tag and the first 10 bytes of an IPv4 header (whose protocol is byte
/// 9; the IPv6 next header is byte 6). Transmit reads them wherever they lie
/// in the buffer; a frame keeps at least this much in its linear part in
/// nearly every layout the stack makes (54 bytes for TCP over IPv4 without
/// timestamps), so the common case copies nothing.
pub const TX_PARSE_LEN: usize = 28;

/// What the encapsulation reads of an Ethernet frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxFrame {
    /// The destination MAC.
    pub dmac: [u8; ETH_ALEN],
    /// The VLAN TCI in the frame ([`frame_vlan_tci`]).
    pub vlan_tci: Option<u16>,
    /// The routing control class (`opa_vnic_get_rc()`).
    pub class: RcClass,
}

impl TxFrame {
    /// Reads the first [`TX_PARSE_LEN`] bytes of a frame whose `skb->protocol`
    /// is `skb_protocol` (host order): the destination MAC, the frame's
    /// VLAN tag, and, as `opa_vnic_get_rc()`, the protocol after one VLAN
    /// tag (`vlan_get_protocol()`) with the IPv4 protocol or IPv6 next
    /// header. Every offset is a constant into a whole array: transmit calls
    /// this for each frame, and it has no bounds check and no failure.
    #[inline]
    pub fn parse(frame: &[u8; TX_PARSE_LEN], skb_protocol: u16) -> Self {
        TxFrame {
            dmac: Self::dmac(frame),
            vlan_tci: Self::vlan_tci(frame),
            class: Self::class(frame, skb_protocol),
        }
    }

    /// The destination MAC of [`TxFrame::parse`].
    #[inline]
    pub fn dmac(frame: &[u8; TX_PARSE_LEN]) -> [u8; ETH_ALEN] {
        [frame[0], frame[1], frame[2], frame[3], frame[4], frame[5]]
    }

    /// The frame's VLAN tag of [`TxFrame::parse`] (`__vlan_get_tag()`).
    #[inline]
    pub fn vlan_tci(frame: &[u8; TX_PARSE_LEN]) -> Option<u16> {
        let proto = u16::from_be_bytes([frame[12], frame[13]]);
        (proto == ETH_P_8021Q || proto == ETH_P_8021AD)
            .then(|| u16::from_be_bytes([frame[14], frame[15]]))
    }

    /// The routing control class of [`TxFrame::parse`] (`opa_vnic_get_rc()`), which only a
    /// vport whose classes differ in RC needs.
    #[inline]
    pub fn class(frame: &[u8; TX_PARSE_LEN], skb_protocol: u16) -> RcClass {
        let be16 = |hi: u8, lo: u8| u16::from_be_bytes([hi, lo]);
        let tagged = skb_protocol == ETH_P_8021Q || skb_protocol == ETH_P_8021AD;
        let l3 = if tagged {
            be16(frame[16], frame[17])
        } else {
            skb_protocol
        };
        // The IP header follows the Ethernet header (14 bytes) and the tag
        // (4 more); its protocol or next header field is at byte 9 or 6.
        let l4 = match (l3, tagged) {
            (ETH_P_IP, false) => frame[14 + 9],
            (ETH_P_IP, true) => frame[18 + 9],
            (ETH_P_IPV6, false) => frame[14 + 6],
            (ETH_P_IPV6, true) => frame[18 + 6],
            _ => 0,
        };
        RcClass::classify(l3, l4)
    }
}

impl VeswInfo {
    /// The RC of a traffic class (`opa_vnic_get_rc()`):
    /// `(rc >> shift) & 7`.
    #[inline]
    pub const fn select_rc(&self, class: RcClass) -> u8 {
        ((self.rc >> class.shift()) & 0x7) as u8
    }

    /// The DLID of a frame (`opa_vnic_get_dlid()`), 0 meaning none (the
    /// frame is dropped and counted in `tx_dlid_zero`):
    /// 1. `mac_tbl_dlid`, the MAC table lookup result, when not 0;
    /// 2. multicast and broadcast: `u_mcast_dlid`;
    /// 3. locally administered unicast: the DLID in bytes 3-5 of the MAC
    ///    (`mac[5] << 16 | mac[4] << 8 | mac[3]`);
    /// 4. other unicast: `u_ucast_dlid[def_port]` when `def_port` is a
    ///    valid default port, else 0.
    #[inline]
    pub fn select_dlid(&self, mac_tbl_dlid: u32, dmac: &[u8; ETH_ALEN], def_port: u8) -> u32 {
        if mac_tbl_dlid != 0 {
            return mac_tbl_dlid;
        }
        if is_multicast_ether_addr(dmac) {
            self.u_mcast_dlid
        } else if is_local_ether_addr(dmac) {
            (u32::from(dmac[5]) << 16) | (u32::from(dmac[4]) << 8) | u32::from(dmac[3])
        } else if def_port != INVALID_PORT {
            self.u_ucast_dlid
                .get(usize::from(def_port))
                .copied()
                .unwrap_or(0)
        } else {
            0
        }
    }
}

/// The kernel's `hash_32(val, bits)` (generic version): `val *
/// GOLDEN_RATIO_32 >> (32 - bits)`; `bits` is taken modulo 32, and 0 gives
/// 0.
#[inline]
pub const fn hash_32(val: u32, bits: u32) -> u32 {
    let bits = bits & 31;
    if bits == 0 {
        return 0;
    }
    val.wrapping_mul(0x61c8_8647) >> 32u32.wrapping_sub(bits)
}

/// The MAC table hash bucket of a MAC address: `hash_32(mac[5], 8)`, as
/// `vnic_hash_add()` and `vnic_hash_for_each_possible()` key it. Only the
/// order of a table walk depends on it.
#[inline]
pub const fn mac_hash_bucket(mac: &[u8; ETH_ALEN]) -> u8 {
    hash_32(mac[MAC_HASH_IDX] as u32, MAC_TBL_HASH_BITS) as u8
}

/// The kernel's `crc32_le(crc, p, len)`: reflected CRC-32 (polynomial
/// 0xedb88320) without pre- or post-inversion.
pub fn crc32_le(mut crc: u32, data: &[u8]) -> u32 {
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xedb8_8320 & mask);
        }
    }
    crc
}

/// The checksum `opa_vnic_mac_send_event()` keeps of an interface MAC list
/// to tell whether it changed (a trap is sent when it does):
/// `~crc32_le(crc32_le(0, addrs...), count * 6 as a little-endian u32)`.
/// The C driver hashes the count in host order; this is the value on
/// little-endian hosts.
pub fn iface_mac_list_crc<'a, I>(addrs: I) -> u32
where
    I: IntoIterator<Item = &'a [u8; ETH_ALEN]>,
{
    let mut crc = 0u32;
    let mut n: u32 = 0;
    for a in addrs {
        crc = crc32_le(crc, a);
        n = n.wrapping_add(1);
    }
    let l = n.wrapping_mul(ETH_ALEN as u32);
    !crc32_le(crc, &l.to_le_bytes())
}
