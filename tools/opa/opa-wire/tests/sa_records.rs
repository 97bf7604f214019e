// SPDX-License-Identifier: GPL-2.0

//! The SA records and MAD headers against the layouts of the headers they come from.

use opa_wire::sa::{records, *};
use opa_wire::WireError;

#[test]
fn layouts_match_the_headers() {
    assert_eq!(NodeRecord::SIZE, 4 + 4 + 44 + 64);
    assert_eq!(attr_offset(NodeRecord::SIZE), 15);
    assert_eq!(PortInfoRecord::SIZE, 378);
    assert_eq!(attr_offset(PortInfoRecord::SIZE), 48);
    assert_eq!(attr_offset(PathRecord::SIZE), 8);

    let mut b = [0u8; NodeRecord::SIZE];
    let n = NodeRecord {
        lid: 0x0102_0304,
        node_type: records::NODE_TYPE_CA,
        num_ports: 1,
        sys_image_guid: 0x1111,
        node_guid: 0x0011_7501_0100_0001,
        port_guid: 0x0011_7501_0100_0002,
        local_port_num: 1,
        vendor_id: 0x1175,
        node_desc: NodeRecord::desc_bytes("hostA hfi1_0"),
        ..NodeRecord::ZERO
    };
    n.encode(&mut b).unwrap();
    assert_eq!(&b[0..4], &[1, 2, 3, 4]);
    assert_eq!(&b[8..12], &[0x80, 0x80, 1, 1]);
    assert_eq!(&b[24..32], &0x0011_7501_0100_0001u64.to_be_bytes());
    assert_eq!(&b[48..52], &[1, 0, 0x11, 0x75]);
    assert_eq!(&b[52..64], b"hostA hfi1_0");
    assert_eq!(NodeRecord::decode(&b).unwrap(), n);
    assert_eq!(n.desc(), "hostA hfi1_0");

    let mut b = [0u8; PortInfoRecord::SIZE];
    let p = PortInfoRecord {
        lid: 5,
        port_num: 1,
        port_state: 4,
        sm_lid: 1,
        cap_mask: 0x0001_0000,
        cap_mask3: records::CAP_MASK3_IS_ETH_ON_FABRIC,
    };
    p.encode(&mut b).unwrap();
    // CapabilityMask3 at PortInfo offset 222 (`opa_cap_mask`), after the 8-byte RID.
    assert_eq!(&b[230..232], &[0x20, 0x00]);
    assert_eq!(&b[8 + 108..8 + 112], &[0, 0, 0, 1]);
    assert_eq!(PortInfoRecord::decode(&b).unwrap(), p);
    assert!(p.is_eth_on_fabric());
    assert_eq!(PortInfoRecord::decode(&b[..377]), Err(WireError::Truncated));

    let mut b = [0u8; PathRecord::SIZE];
    let r = PathRecord {
        dgid: PathRecord::guid_gid(7),
        sgid: PathRecord::guid_gid(9),
        dlid: 0x10,
        slid: 0x20,
        reversible: true,
        numb_path: 1,
        pkey: 0xffff,
        sl: 3,
        mtu: 7,
        rate: 16,
        pkt_life: 18,
        ..Default::default()
    };
    r.encode(&mut b).unwrap();
    // IBA 15.2.5.16, as opa-fm serves it: 16-bit DLID and SLID at byte 40, Reversible and
    // NumbPath at 49, P_Key at 50, QosClass:12 SL:4 at 52, MTU, Rate, PacketLifeTime at 54.
    assert_eq!(&b[40..44], &[0, 0x10, 0, 0x20]);
    assert_eq!(&b[48..57], &[0, 0x81, 0xff, 0xff, 0, 3, 7, 16, 18]);
    assert_eq!(&b[8..10], &[0xfe, 0x80]);
    assert_eq!(PathRecord::gid_guid(&r.dgid), 7);
    assert_eq!(PathRecord::decode(&b).unwrap(), r);
}

#[test]
fn table_answer_roundtrip() {
    let mut data = [0u8; 3 * 120];
    for (i, chunk) in data.chunks_exact_mut(120).enumerate() {
        NodeRecord {
            lid: i as u32 + 1,
            ..NodeRecord::ZERO
        }
        .encode(chunk)
        .unwrap();
    }
    let sa = SaHdr {
        attr_offset: attr_offset(NodeRecord::SIZE),
        comp_mask: NodeRecord::COMP_LID,
        ..Default::default()
    };
    let mut mad = [0u8; 1024];
    let len = encode(
        &mut mad,
        METHOD_GET_TABLE_RESP,
        0,
        0x42,
        ATTR_NODE_RECORD,
        0,
        &sa,
        &data,
    )
    .unwrap();
    assert_eq!(len, SA_DATA_OFFSET + 360);
    // RMPP version 1, type DATA, Active: the kernel cuts it into segments.
    assert_eq!(&mad[24..27], &[1, 1, 1]);
    let m = SaMad::decode(&mad[..len]).unwrap();
    assert_eq!(m.sa, sa);
    assert_eq!(m.hdr.tid, 0x42);
    let lids: Vec<u32> = m
        .records()
        .map(|r| NodeRecord::decode(r).unwrap().lid)
        .collect();
    assert_eq!(lids, [1, 2, 3]);
    assert_eq!(m.status(), (0, 0));

    // A Get carries no RMPP; a short or foreign MAD is refused.
    let len = encode(&mut mad, METHOD_GET, 0, 1, ATTR_NODE_RECORD, 0, &sa, &[]).unwrap();
    assert_eq!(len, SA_DATA_OFFSET);
    assert_eq!(&mad[24..28], &[0; 4]);
    assert!(SaMad::decode(&mad[..SA_DATA_OFFSET - 1]).is_err());
    mad[1] = 0x34;
    assert_eq!(
        SaMad::decode(&mad[..len]),
        Err(WireError::BadMgmtClass(0x34))
    );
    assert_eq!(
        encode(&mut mad[..60], METHOD_GET, 0, 1, 0, 0, &sa, &[0; 8]),
        Err(WireError::NoSpace)
    );
}

#[test]
fn short_records_and_zero_stride() {
    let mad = {
        let mut m = [0u8; SA_DATA_OFFSET + 10];
        encode(
            &mut m,
            METHOD_GET_TABLE_RESP,
            0,
            0,
            ATTR_NODE_RECORD,
            0,
            &SaHdr::default(),
            &[0; 10],
        )
        .unwrap();
        m
    };
    let m = SaMad::decode(&mad).unwrap();
    assert_eq!(m.records().count(), 0, "attr_offset 0: no records");
    assert!(NodeRecord::decode(&[0; 50]).is_err());
    assert!(PathRecord::decode(&[0; 63]).is_err());
}

#[test]
fn mcmember_record_layout() {
    // IB_MCMEMBER_RECORD of opa-ff's ib_sa_records.h (what opa-fm serves): 52 bytes, the
    // 16-bit MLID after the Q_Key.
    assert_eq!(McMemberRecord::SIZE, 52);
    assert_eq!(attr_offset(McMemberRecord::SIZE), 7);
    assert_eq!(ATTR_MCMEMBER_RECORD, 0x0038);
    let mut mgid = [0u8; 16];
    mgid[..8].copy_from_slice(&0xff12_401b_8001_0000u64.to_be_bytes());
    mgid[8..].copy_from_slice(&0x0000_0000_ffff_ffffu64.to_be_bytes());
    let r = McMemberRecord {
        mgid,
        qkey: 0x1234,
        mtu: 4,
        pkey: 0x8001,
        rate: 16,
        sl: 0xf,
        scope_join: 0x21,
        mlid: 0xc001,
        ..McMemberRecord::default()
    };
    let mut b = [0u8; McMemberRecord::SIZE];
    r.encode(&mut b).unwrap();
    assert_eq!(&b[0..4], &[0xff, 0x12, 0x40, 0x1b]);
    assert_eq!(&b[32..36], &[0, 0, 0x12, 0x34]);
    assert_eq!(b[38], 4);
    assert_eq!(&b[40..42], &[0x80, 0x01]);
    assert_eq!(b[42], 16);
    assert_eq!(&b[36..38], &[0xc0, 0x01]);
    assert_eq!(b[44], 0xf0, "SL in the top 4 bits");
    assert_eq!(b[48], 0x21);
    assert_eq!(McMemberRecord::decode(&b).unwrap(), r);
    assert_eq!(McMemberRecord::decode(&b[..51]), Err(WireError::Truncated));
}

#[test]
fn mlids_in_the_16b_lid_space() {
    // opa-ff's MCAST16_TO_MCAST24(): 0xc000 + n is 0xf00000 + n in a 16B header, and opa-fm's
    // 32-bit 0xf0000000 + n is 0xc000 + n at IB's versions (MCAST32_TO_MCAST16()).
    assert_eq!(records::mlid16_to_16b(0xc000), Some(0xf0_0000));
    assert_eq!(records::mlid16_to_16b(0xc001), Some(0xf0_0001));
    assert_eq!(records::mlid16_to_16b(0xfffe), Some(0xf0_3ffe));
    assert_eq!(records::mlid16_to_16b(0xbfff), None, "a unicast LID");
    assert_eq!(records::mlid16_to_16b(0xffff), None, "permissive");
    assert_eq!(records::mlid32_to_16(0xf000_0000), 0xc000);
    assert_eq!(records::mlid32_to_16(0xf000_3ffe), 0xfffe);
}
