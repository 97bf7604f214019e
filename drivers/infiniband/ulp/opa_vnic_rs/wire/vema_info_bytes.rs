// SPDX-License-Identifier: GPL-2.0

//! The VESW port info in its wire form, as the agent keeps it: a Get copies it out, a Set
//! copies the writable fields in, and each field is read where it is, when it is needed.
//!
//! This is how the C driver keeps it (`struct opa_veswport_info`, big-endian, copied by
//! `opa_vnic_set_vesw_info()` and read back by `opa_vnic_get_vesw_info()`). Decoding all 40
//! fields of a Set into a [`VeswPortInfo`] and encoding them again for its answer cost the
//! agent more than the C driver's whole Set; the decoded form stays for the tools and the
//! tests, and [`VeswPortInfoBytes::info`] gives it.
//!
//! The offsets below are those of [`VeswPortInfo`]'s fields on the wire; the host tests check
//! every accessor against the decoded structure, for any bytes.

use super::codec::{get_at, put_at};
use super::error::WireError;
use super::vema_info::{
    VeswInfo, VeswPortInfo, ETH_LINK_DOWN, ETH_LINK_UP, MAX_NUM_PCP, STATE_DROP_ALL,
    STATE_FORWARDING, VESW_MAX_NUM_DEF_PORT,
};
use core::borrow::Borrow;

/// Bytes of a VESW port info on the wire.
pub const SIZE: usize = VeswPortInfo::SIZE;

// `struct opa_vesw_info`, at 0.
const FABRIC_ID: usize = 0;
const VESW_ID: usize = 2;
const DEF_PORT_MASK: usize = 10;
const PKEY: usize = 14;
const U_MCAST_DLID: usize = 20;
const U_UCAST_DLID: usize = 24;
const RC: usize = 88;
const ETH_MTU: usize = 148;
// `struct opa_per_veswport_info`, after it.
const VPORT: usize = VeswInfo::SIZE;
const PORT_NUM: usize = VPORT;
const ETH_LINK_STATUS: usize = VPORT + 4;
const BASE_MAC_ADDR: usize = VPORT + 8;
const CONFIG_STATE: usize = VPORT + 14;
const OPER_STATE: usize = VPORT + 15;
const MAC_TBL_DIGEST: usize = VPORT + 20;
const ENCAP_SLID: usize = VPORT + 28;
const PCP_TO_SC_UC: usize = VPORT + 32;
const PCP_TO_VL_UC: usize = VPORT + 40;
const PCP_TO_SC_MC: usize = VPORT + 48;
const PCP_TO_VL_MC: usize = VPORT + 56;
const NON_VLAN_SC_UC: usize = VPORT + 64;
const NON_VLAN_VL_UC: usize = VPORT + 65;
const NON_VLAN_SC_MC: usize = VPORT + 66;
const NON_VLAN_VL_MC: usize = VPORT + 67;
const UC_MACS_GEN_COUNT: usize = VPORT + 116;
const MC_MACS_GEN_COUNT: usize = VPORT + 118;

const _: () = assert!(SIZE == VPORT + 128 && U_UCAST_DLID + 4 * VESW_MAX_NUM_DEF_PORT == RC);

/// The `N` bytes at `AT`.
#[inline(always)]
fn get<const AT: usize, const N: usize>(b: &[u8; SIZE]) -> [u8; N] {
    get_at::<AT, N, SIZE>(b)
}

/// Writes `v` at `AT`.
#[inline(always)]
fn put<const AT: usize, const N: usize>(b: &mut [u8; SIZE], v: [u8; N]) {
    put_at::<AT, N, SIZE>(b, v);
}

/// Copies the `N` bytes at `AT` of `src` into `dst`.
#[inline(always)]
fn copy<const AT: usize, const N: usize>(dst: &mut [u8; SIZE], src: &[u8; SIZE]) {
    put::<AT, N>(dst, get::<AT, N>(src));
}

/// A VESW port info in its wire form (`struct opa_veswport_info`): owned (the default `B`),
/// as a vport keeps it, or borrowed ([`VeswPortInfoRef`]), as a Set carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VeswPortInfoBytes<B = [u8; SIZE]>(B);

/// The VESW port info of a request, read where it arrived.
pub type VeswPortInfoRef<'a> = VeswPortInfoBytes<&'a [u8; SIZE]>;

impl<'a> VeswPortInfoRef<'a> {
    /// The info in the first [`SIZE`] bytes of `buf` (a request's data); bytes after them are
    /// ignored.
    #[inline]
    pub fn read(buf: &'a [u8]) -> Result<Self, WireError> {
        buf.first_chunk::<SIZE>()
            .map(VeswPortInfoBytes)
            .ok_or(WireError::Truncated)
    }
}

impl VeswPortInfoBytes {
    /// The wire form of `info`.
    pub fn from_info(info: &VeswPortInfo) -> Self {
        Self(info.to_bytes())
    }

    /// This info, borrowed as a request's is.
    #[inline]
    pub fn borrowed(&self) -> VeswPortInfoRef<'_> {
        VeswPortInfoBytes(&self.0)
    }

    /// Applies a Set, as [`VeswPortInfo::apply_set`]: the whole vesw part and the writable
    /// per-port fields (`opa_vnic_set_per_veswport_info()`), by the byte ranges that hold
    /// them; the link status, the oper state, the table limits, the digest and the
    /// generation counts stay.
    pub fn apply_set<R: Borrow<[u8; SIZE]>>(&mut self, req: &VeswPortInfoBytes<R>) {
        let (dst, src) = (&mut self.0, req.0.borrow());
        // The vesw part, the port number.
        copy::<0, { ETH_LINK_STATUS }>(dst, src);
        // Reserved, base MAC, config state.
        copy::<{ ETH_LINK_STATUS + 1 }, { OPER_STATE - ETH_LINK_STATUS - 1 }>(dst, src);
        // Reserved, encap SLID, SC and VL tables, reserved.
        copy::<{ MAC_TBL_DIGEST + 4 }, { UC_MACS_GEN_COUNT - MAC_TBL_DIGEST - 4 }>(dst, src);
        // Reserved.
        copy::<{ MC_MACS_GEN_COUNT + 2 }, { SIZE - MC_MACS_GEN_COUNT - 2 }>(dst, src);
    }

    /// [`PerVeswPortInfo::update_state`](super::vema_info::PerVeswPortInfo::update_state):
    /// forwarding and link up only when configured forwarding and the interface is up.
    pub fn update_state(&mut self, if_up: bool) {
        let (oper, link) = if self.config_state() == STATE_FORWARDING && if_up {
            (STATE_FORWARDING, ETH_LINK_UP)
        } else {
            (STATE_DROP_ALL, ETH_LINK_DOWN)
        };
        put::<OPER_STATE, 1>(&mut self.0, [oper]);
        put::<ETH_LINK_STATUS, 1>(&mut self.0, [link]);
    }

    /// Sets the MAC table digest.
    pub fn set_mac_tbl_digest(&mut self, digest: u32) {
        put::<MAC_TBL_DIGEST, 4>(&mut self.0, digest.to_be_bytes());
    }

    /// Counts a change of the unicast MAC list.
    pub fn bump_uc_macs_gen_count(&mut self) {
        let n = self.uc_macs_gen_count().wrapping_add(1);
        put::<UC_MACS_GEN_COUNT, 2>(&mut self.0, n.to_be_bytes());
    }

    /// Counts a change of the multicast MAC list.
    pub fn bump_mc_macs_gen_count(&mut self) {
        let n = self.mc_macs_gen_count().wrapping_add(1);
        put::<MC_MACS_GEN_COUNT, 2>(&mut self.0, n.to_be_bytes());
    }
}

macro_rules! be_fields {
    ($($(#[$m:meta])* $name:ident: $t:ty = $at:expr;)*) => {$(
        $(#[$m])*
        #[inline]
        pub fn $name(&self) -> $t {
            <$t>::from_be_bytes(get::<{ $at }, { core::mem::size_of::<$t>() }>(self.bytes()))
        }
    )*};
}

macro_rules! byte_fields {
    ($($(#[$m:meta])* $name:ident: [u8; $n:expr] = $at:expr;)*) => {$(
        $(#[$m])*
        #[inline]
        pub fn $name(&self) -> [u8; $n] {
            get::<{ $at }, { $n }>(self.bytes())
        }
    )*};
}

impl<B: Borrow<[u8; SIZE]>> VeswPortInfoBytes<B> {
    /// The bytes, as on the wire.
    #[inline]
    pub fn bytes(&self) -> &[u8; SIZE] {
        self.0.borrow()
    }

    /// The decoded form.
    pub fn info(&self) -> VeswPortInfo {
        // Cannot fail: exactly `SIZE` bytes.
        VeswPortInfo::decode(self.bytes()).unwrap_or(VeswPortInfo::ZERO)
    }

    /// Writes the info into the first [`SIZE`] bytes of `out` (an answer's data).
    #[inline]
    pub fn encode(&self, out: &mut [u8]) -> Result<(), WireError> {
        let out = out.first_chunk_mut::<SIZE>().ok_or(WireError::NoSpace)?;
        *out = *self.bytes();
        Ok(())
    }

    /// The DLID of unknown unicast destinations of default port `port` (0 past the last).
    #[inline]
    pub fn u_ucast_dlid(&self, port: usize) -> u32 {
        let at = port.wrapping_mul(4).wrapping_add(U_UCAST_DLID);
        match self.bytes().get(at..RC).and_then(|s| s.first_chunk::<4>()) {
            Some(b) => u32::from_be_bytes(*b),
            None => 0,
        }
    }

    be_fields! {
        /// Fabric id.
        fabric_id: u16 = FABRIC_ID;
        /// Virtual Ethernet switch id.
        vesw_id: u16 = VESW_ID;
        /// Bit mask of the default ports.
        def_port_mask: u16 = DEF_PORT_MASK;
        /// Partition key.
        pkey: u16 = PKEY;
        /// DLID of unknown multicast destinations.
        u_mcast_dlid: u32 = U_MCAST_DLID;
        /// Routing control.
        rc: u32 = RC;
        /// Ethernet MTU.
        eth_mtu: u16 = ETH_MTU;
        /// Port number on the vesw.
        port_num: u32 = PORT_NUM;
        /// MAC table digest.
        mac_tbl_digest: u32 = MAC_TBL_DIGEST;
        /// Source LID of encapsulated packets.
        encap_slid: u32 = ENCAP_SLID;
        /// Unicast MAC list generation count.
        uc_macs_gen_count: u16 = UC_MACS_GEN_COUNT;
        /// Multicast MAC list generation count.
        mc_macs_gen_count: u16 = MC_MACS_GEN_COUNT;
        /// Configured state.
        config_state: u8 = CONFIG_STATE;
        /// SC of untagged unicast.
        non_vlan_sc_uc: u8 = NON_VLAN_SC_UC;
        /// VL of untagged unicast.
        non_vlan_vl_uc: u8 = NON_VLAN_VL_UC;
        /// SC of untagged multicast.
        non_vlan_sc_mc: u8 = NON_VLAN_SC_MC;
        /// VL of untagged multicast.
        non_vlan_vl_mc: u8 = NON_VLAN_VL_MC;
    }

    byte_fields! {
        /// Base MAC address.
        base_mac_addr: [u8; 6] = BASE_MAC_ADDR;
        /// SC by PCP, unicast.
        pcp_to_sc_uc: [u8; MAX_NUM_PCP] = PCP_TO_SC_UC;
        /// VL by PCP, unicast.
        pcp_to_vl_uc: [u8; MAX_NUM_PCP] = PCP_TO_VL_UC;
        /// SC by PCP, multicast.
        pcp_to_sc_mc: [u8; MAX_NUM_PCP] = PCP_TO_SC_MC;
        /// VL by PCP, multicast.
        pcp_to_vl_mc: [u8; MAX_NUM_PCP] = PCP_TO_VL_MC;
    }
}
