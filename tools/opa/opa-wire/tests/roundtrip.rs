// SPDX-License-Identifier: GPL-2.0

//! Round-trip property tests for every wire type: bytes -> value -> bytes
//! is the identity (reserved fields included), value -> bytes -> value is
//! the identity, and no decoder panics on any input.

use opa_wire::hdr16b::{decap, Encap, Hdr16b, HDR_LEN, L4_ETHR, MAX_ETH_FRAME};
use opa_wire::mad::*;
use opa_wire::trap::*;
use opa_wire::vema_counters::*;
use opa_wire::vema_info::*;
use opa_wire::vema_mac::*;
use opa_wire::WireError;
use proptest::prelude::*;

macro_rules! fixed_roundtrip {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        proptest! {
            #[test]
            fn $name(bytes in proptest::collection::vec(any::<u8>(), <$t>::SIZE..<$t>::SIZE + 8)) {
                let v = <$t>::decode(&bytes).unwrap();
                let mut out = vec![0u8; <$t>::SIZE];
                v.encode(&mut out).unwrap();
                prop_assert_eq!(&out[..], &bytes[..<$t>::SIZE]);
                prop_assert_eq!(<$t>::decode(&out).unwrap(), v);
                prop_assert_eq!(&v.to_bytes()[..], &out[..]);
                prop_assert_eq!(<$t>::decode(&bytes[..<$t>::SIZE - 1]), Err(WireError::Truncated));
                let mut short = vec![0u8; <$t>::SIZE - 1];
                prop_assert_eq!(v.encode(&mut short), Err(WireError::NoSpace));
            }
        }
    )*};
}

fixed_roundtrip! {
    rt_mad_hdr: MadHdr,
    rt_rmpp_hdr: RmppHdr,
    rt_vema_mad_hdr: VemaMadHdr,
    rt_class_port_info: ClassPortInfo,
    rt_vesw_info: VeswInfo,
    rt_per_veswport_info: PerVeswPortInfo,
    rt_veswport_info: VeswPortInfo,
    rt_mac_table_entry: MacTableEntry,
    rt_mac_table_hdr: MacTableHdr,
    rt_iface_macs_hdr: IfaceMacsHdr,
    rt_iface_mac_entry: IfaceMacEntry,
    rt_summary_counters: SummaryCounters,
    rt_error_counters: ErrorCounters,
    rt_veswport_trap: VeswPortTrap,
    rt_notice_attr: NoticeAttr,
    rt_vema_trap_mad: VemaTrapMad,
}

prop_compose! {
    fn any_hdr()(
        slid in 0u32..=0xff_ffff, dlid in 0u32..=0xff_ffff, len_qw in 0u16..=0x7ff,
        becn in any::<bool>(), fecn in any::<bool>(), sc in 0u8..=31, rc in 0u8..=7,
        pkey in any::<u16>(), entropy in any::<u16>(), l4_hdr in any::<u16>(),
        rsvd_qw1 in any::<u16>(), rsvd_qw2 in any::<u16>(),
    ) -> Hdr16b {
        Hdr16b {
            slid, dlid, len_qw, becn, fecn, sc, rc, pkey, entropy,
            l4_type: L4_ETHR, l4_hdr, rsvd_qw1, rsvd_qw2,
        }
    }
}

prop_compose! {
    fn any_encap()(
        slid in 0u32..=0xff_ffff, dlid in 0u32..=0xff_ffff, sc in 0u8..=31, rc in 0u8..=7,
        pkey in any::<u16>(), entropy in any::<u8>(), vesw_id in any::<u16>(),
    ) -> Encap {
        Encap { slid, dlid, sc, rc, pkey, entropy, vesw_id }
    }
}

proptest! {
    #[test]
    fn rt_hdr16b_value(h in any_hdr()) {
        let b = h.to_bytes().unwrap();
        prop_assert_eq!(Hdr16b::decode(&b).unwrap(), h);
    }

    #[test]
    fn rt_hdr16b_bytes(mut b in any::<[u8; HDR_LEN]>()) {
        // Force the checked bits valid: LT 1, L2 0b10, L4 type 0x78.
        b[7] = (b[7] & 0x9f) | 0xc0;
        b[8] = L4_ETHR;
        let h = Hdr16b::decode(&b).unwrap();
        prop_assert_eq!(h.to_bytes().unwrap(), b);
    }

    #[test]
    fn rt_frame(e in any_encap(), eth in proptest::collection::vec(any::<u8>(), 0..2100)) {
        let mut out = vec![0u8; eth.len() + 40];
        let n = e.encap_frame(&eth, &mut out).unwrap();
        prop_assert_eq!(n % 8, 0);
        prop_assert!(n >= HDR_LEN + eth.len() + 5 && n < HDR_LEN + eth.len() + 13);
        let d = decap(&out[..n]).unwrap();
        prop_assert_eq!(d.eth, &eth[..]);
        prop_assert_eq!(d.hdr, e.header(eth.len()).unwrap());
        prop_assert_eq!(d.hdr.entropy, u16::from(e.entropy));
        prop_assert_eq!(d.hdr.vesw_id(), e.vesw_id & 0xfff);
    }

    #[test]
    fn rt_frame_lengths(len in 0usize..=MAX_ETH_FRAME) {
        let wl = opa_wire::hdr16b::wire_len(len).unwrap();
        prop_assert_eq!(wl.total, usize::from(wl.len_qw) * 8);
        prop_assert_eq!(wl.total, HDR_LEN + len + usize::from(wl.pad) + 5);
        prop_assert!(wl.pad < 8);
    }

    #[test]
    fn decoders_never_panic(buf in proptest::collection::vec(any::<u8>(), 0..2200)) {
        let _ = decap(&buf);
        let _ = Hdr16b::decode(&buf);
        let _ = VemaMad::decode(&buf);
        let _ = VemaTrapMad::decode_trap(&buf);
        let _ = MacTable::decode(&buf);
        let _ = IfaceMacs::decode(&buf);
    }

    #[test]
    fn rt_vema_mad(hdr in any::<[u8; 40]>(), data in proptest::collection::vec(any::<u8>(), 0..=2008)) {
        let mut h = VemaMadHdr::decode(&hdr).unwrap();
        h.mad_hdr.base_version = OPA_MGMT_BASE_VERSION;
        h.mad_hdr.mgmt_class = OPA_MGMT_CLASS_INTEL_EMA;
        h.mad_hdr.class_version = OPA_EMA_CLASS_VERSION;
        h.oui = INTEL_OUI;
        let m = VemaMad { hdr: h, data: &data };
        let mut out = vec![0u8; 2048];
        let n = m.encode(&mut out).unwrap();
        prop_assert_eq!(n, 40 + data.len());
        prop_assert_eq!(VemaMad::decode(&out[..n]).unwrap(), m);
    }

    #[test]
    fn rt_mac_table(
        offset in 0u16..=2048,
        digest in any::<u32>(),
        raw in proptest::collection::vec(any::<[u8; 16]>(), 0..=125),
    ) {
        let entries: Vec<MacTableEntry> =
            raw.iter().map(|r| MacTableEntry::decode(r).unwrap()).collect();
        let hdr = MacTableHdr {
            offset,
            num_entries: entries.len() as u16,
            mac_tbl_digest: digest,
        };
        let mut out = vec![0u8; 2008];
        let r = MacTable::encode(&hdr, &entries, &mut out);
        if usize::from(offset) + entries.len() > 2048 {
            prop_assert!(r.is_err());
        } else {
            let n = r.unwrap();
            prop_assert_eq!(n, 8 + 16 * entries.len());
            let t = MacTable::decode(&out[..n]).unwrap();
            prop_assert_eq!(t.hdr, hdr);
            prop_assert_eq!(t.entries().collect::<Vec<_>>(), entries.clone());
            for (i, e) in entries.iter().enumerate() {
                prop_assert_eq!(t.entry(i), Some(*e));
            }
            let flat: Vec<u8> = raw.concat();
            prop_assert_eq!(&out[8..n], &flat[..]);
        }
    }

    #[test]
    fn rt_iface_macs(
        start in 0u16..40,
        ask in 0u16..400,
        list in proptest::collection::vec(any::<[u8; 6]>(), 0..400),
        gen in any::<u16>(),
    ) {
        let req = IfaceMacsHdr { start_idx: start, num_macs_in_msg: ask, tot_macs_in_lst: 0, gen_count: 0 };
        let mut out = vec![0u8; 2008];
        let h = IfaceMacs::encode_response(&req, list.iter().copied(), gen, &mut out).unwrap();
        let want: Vec<[u8; 6]> = list
            .iter()
            .skip(usize::from(start))
            .take(usize::from(req.req_count()))
            .copied()
            .collect();
        prop_assert_eq!(usize::from(h.num_macs_in_msg), want.len());
        prop_assert_eq!(usize::from(h.tot_macs_in_lst), list.len());
        let m = IfaceMacs::decode(&out).unwrap();
        prop_assert_eq!(m.hdr, h);
        prop_assert_eq!(m.entries().collect::<Vec<_>>(), want);
    }

    #[test]
    fn rt_trap(tid in any::<u64>(), lid in any::<u32>(), raw in any::<[u8; 16]>()) {
        let mut p = VeswPortTrap::decode(&raw).unwrap();
        p.reserved = 0;
        let t = VemaTrapMad::new(tid, lid, &p);
        let mut out = [0u8; TRAP_MAD_LEN];
        prop_assert_eq!(t.encode_mad(&mut out), Ok(TRAP_MAD_LEN));
        let d = VemaTrapMad::decode_trap(&out).unwrap();
        prop_assert_eq!(d, t);
        prop_assert_eq!(d.trap().unwrap(), p);
        prop_assert_eq!(d.hdr.mad_hdr.tid, tid);
        prop_assert_eq!(d.notice.issuer_lid, lid);
    }
}
