// SPDX-License-Identifier: GPL-2.0

//! What the agent reads and writes where it is, against the decoded structures: for any
//! bytes, every accessor of the VESW port info in its wire form reads the field the decoder
//! reads, a Set, a state update, a digest or a generation count changes the bytes as they
//! change the structure, and a response header made in place is the one decoded and encoded.

use opa_wire::mad::{VemaMadHdr, IB_MGMT_VENDOR_HDR};
use opa_wire::vema_info::*;
use opa_wire::vema_info_bytes::{VeswPortInfoBytes, VeswPortInfoRef, SIZE};
use opa_wire::WireError;
use proptest::prelude::*;

fn any_bytes() -> impl Strategy<Value = [u8; SIZE]> {
    proptest::collection::vec(any::<u8>(), SIZE).prop_map(|v| v.try_into().unwrap())
}

/// Every accessor against the decoded field.
fn same_fields(b: &VeswPortInfoBytes, i: &VeswPortInfo) -> Result<(), TestCaseError> {
    let (w, p) = (&i.vesw, &i.vport);
    prop_assert_eq!(b.fabric_id(), w.fabric_id);
    prop_assert_eq!(b.vesw_id(), w.vesw_id);
    prop_assert_eq!(b.def_port_mask(), w.def_port_mask);
    prop_assert_eq!(b.pkey(), w.pkey);
    prop_assert_eq!(b.u_mcast_dlid(), w.u_mcast_dlid);
    for (port, &dlid) in w.u_ucast_dlid.iter().enumerate() {
        prop_assert_eq!(b.u_ucast_dlid(port), dlid);
    }
    prop_assert_eq!(b.u_ucast_dlid(VESW_MAX_NUM_DEF_PORT), 0);
    prop_assert_eq!(b.rc(), w.rc);
    prop_assert_eq!(b.eth_mtu(), w.eth_mtu);
    prop_assert_eq!(b.port_num(), p.port_num);
    prop_assert_eq!(b.base_mac_addr(), p.base_mac_addr);
    prop_assert_eq!(b.config_state(), p.config_state);
    prop_assert_eq!(b.mac_tbl_digest(), p.mac_tbl_digest);
    prop_assert_eq!(b.encap_slid(), p.encap_slid);
    prop_assert_eq!(b.pcp_to_sc_uc(), p.pcp_to_sc_uc);
    prop_assert_eq!(b.pcp_to_vl_uc(), p.pcp_to_vl_uc);
    prop_assert_eq!(b.pcp_to_sc_mc(), p.pcp_to_sc_mc);
    prop_assert_eq!(b.pcp_to_vl_mc(), p.pcp_to_vl_mc);
    prop_assert_eq!(b.non_vlan_sc_uc(), p.non_vlan_sc_uc);
    prop_assert_eq!(b.non_vlan_vl_uc(), p.non_vlan_vl_uc);
    prop_assert_eq!(b.non_vlan_sc_mc(), p.non_vlan_sc_mc);
    prop_assert_eq!(b.non_vlan_vl_mc(), p.non_vlan_vl_mc);
    prop_assert_eq!(b.uc_macs_gen_count(), p.uc_macs_gen_count);
    prop_assert_eq!(b.mc_macs_gen_count(), p.mc_macs_gen_count);
    prop_assert_eq!(&b.info(), i);
    prop_assert_eq!(b.bytes(), &i.to_bytes());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5_000))]

    #[test]
    fn accessors_read_what_the_decoder_reads(bytes in any_bytes()) {
        let info = VeswPortInfo::decode(&bytes).unwrap();
        same_fields(&VeswPortInfoBytes::from_info(&info), &info)?;
    }

    #[test]
    fn changes_match_the_decoded_ones(
        old in any_bytes(),
        req in any_bytes(),
        up in any::<bool>(),
        forwarding in any::<bool>(),
        digest in any::<u32>(),
    ) {
        let mut info = VeswPortInfo::decode(&old).unwrap();
        let mut bytes = VeswPortInfoBytes::from_info(&info);
        let mut req_info = VeswPortInfo::decode(&req).unwrap();
        if forwarding {
            req_info.vport.config_state = STATE_FORWARDING;
        }
        let req = VeswPortInfoBytes::from_info(&req_info);

        info.apply_set(&req_info);
        bytes.apply_set(&req);
        same_fields(&bytes, &info)?;
        // A request read where it arrived sets the same.
        let mut from_ref = VeswPortInfoBytes::from_info(&VeswPortInfo::decode(&old).unwrap());
        from_ref.apply_set(&VeswPortInfoRef::read(req.bytes()).unwrap());
        prop_assert_eq!(from_ref, bytes);

        info.vport.update_state(up);
        bytes.update_state(up);
        same_fields(&bytes, &info)?;

        info.vport.mac_tbl_digest = digest;
        bytes.set_mac_tbl_digest(digest);
        info.vport.uc_macs_gen_count = info.vport.uc_macs_gen_count.wrapping_add(1);
        bytes.bump_uc_macs_gen_count();
        info.vport.mc_macs_gen_count = info.vport.mc_macs_gen_count.wrapping_add(1);
        bytes.bump_mc_macs_gen_count();
        same_fields(&bytes, &info)?;

        let mut out = [0u8; SIZE + 1];

        bytes.encode(&mut out).unwrap();
        prop_assert_eq!(&out[..SIZE], &info.to_bytes()[..]);
        prop_assert_eq!(out[SIZE], 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5_000))]

    /// Any header (an active RMPP flag or not) and status: the response header made in place,
    /// and the fields read in place, are those of the decoded header.
    #[test]
    fn response_header_in_place_is_the_decoded_one(
        mut req in proptest::array::uniform32(any::<u8>()),
        tail in proptest::array::uniform8(any::<u8>()),
        rmpp_active in any::<bool>(),
        status in any::<u16>(),
    ) {
        if rmpp_active {
            req[26] |= 1;
        }
        let mut hdr = [0u8; IB_MGMT_VENDOR_HDR];
        hdr[..32].copy_from_slice(&req);
        hdr[32..].copy_from_slice(&tail);
        let decoded = VemaMadHdr::decode(&hdr).unwrap();
        let mut want = decoded.response();
        want.mad_hdr.status = status;
        let mut got = [0xa5u8; IB_MGMT_VENDOR_HDR];
        VemaMadHdr::write_response(&hdr, status, &mut got);
        prop_assert_eq!(&got[..], &want.to_bytes()[..]);
        let h = &decoded.mad_hdr;
        prop_assert_eq!(VemaMadHdr::read_op(&hdr), (h.method, h.attr_id, h.attr_mod));
    }
}

#[test]
fn short_buffers_are_refused() {
    assert_eq!(
        VeswPortInfoRef::read(&[0u8; SIZE - 1]),
        Err(WireError::Truncated)
    );
    let b = VeswPortInfoBytes::from_info(&VeswPortInfo::vema_pod());
    assert_eq!(b.encode(&mut [0u8; SIZE - 1]), Err(WireError::NoSpace));
}

/// The generation counts wrap, as the C driver's `u16` increments do.
#[test]
fn generation_counts_wrap() {
    let mut info = VeswPortInfo::vema_pod();
    info.vport.uc_macs_gen_count = u16::MAX;
    info.vport.mc_macs_gen_count = u16::MAX;
    let mut b = VeswPortInfoBytes::from_info(&info);
    b.bump_uc_macs_gen_count();
    b.bump_mc_macs_gen_count();
    assert_eq!((b.uc_macs_gen_count(), b.mc_macs_gen_count()), (0, 0));
}
