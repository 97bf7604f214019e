// SPDX-License-Identifier: GPL-2.0

//! McMemberRecord joins, as opa-fm answers them.

use super::*;

/// A join (McMemberRecord Set) of port `guid` to `mgid` as a full member.
fn join_record(mgid: [u8; 16], guid: u64, join: u8) -> Vec<u8> {
    let mut gid = [0u8; 16];
    gid[..8].copy_from_slice(&0xfe80_0000_0000_0000u64.to_be_bytes());
    gid[8..].copy_from_slice(&guid.to_be_bytes());
    let t = McMemberRecord {
        mgid,
        port_gid: gid,
        scope_join: join,
        ..Default::default()
    };
    let mut b = zero(McMemberRecord::SIZE);
    t.encode(&mut b).unwrap();
    b
}

/// A join to a group the SA has is answered with the group's record (its MLID and P_Key,
/// the member's PortGID); a join to no group, of no Active port, with join state 0 or
/// without the join components is refused with opa-fm's statuses.
#[test]
fn joins_to_groups_as_opa_fm_answers_them() {
    let v = view();
    let g = McGroup::DEFAULT_BROADCAST.mgid;
    let host_a = v.ports[1].port_guid;
    let ok = McMemberRecord::COMP_OK_JOIN;
    let (st, recs, a) = ask_ib(
        METHOD_SET,
        ATTR_MCMEMBER_RECORD,
        ok,
        &join_record(g, host_a, 1),
    );
    assert_eq!((st, recs.len()), (0, 1), "{}", a.summary);
    let r = McMemberRecord::decode(&recs[0]).unwrap();
    assert_eq!((r.mgid, r.mlid, r.pkey), (g, 0xc001, 0x8001));
    assert_eq!(r.port_gid[8..], host_a.to_be_bytes());
    assert_eq!(r.scope_join & 0x0f, 1);
    let m = SaMad::decode_ib(&a.mad).unwrap();
    assert_eq!(m.hdr.method, METHOD_GET_RESP);
    let (st, _, _) = ask(
        METHOD_SET,
        ATTR_MCMEMBER_RECORD,
        ok,
        &join_record(g, host_a, 1),
    );
    assert_eq!(st, MAD_STATUS_UNSUPPORTED_METHOD, "a Set at OPA's versions");

    let mut other = g;
    other[15] = 1;
    let refused = [
        (ok, join_record(other, host_a, 1), SA_STATUS_REQ_INVALID),
        (
            ok,
            join_record(g, v.ports[3].port_guid, 1),
            SA_STATUS_REQ_INVALID,
        ),
        (ok, join_record(g, 0x1234, 1), SA_STATUS_REQ_INVALID),
        (ok, join_record(g, host_a, 0), SA_STATUS_REQ_INVALID),
        (
            ok,
            join_record(g, 0, 1),
            mcmember::SA_STATUS_REQ_INVALID_GID,
        ),
        (
            McMemberRecord::COMP_MGID,
            join_record(g, host_a, 1),
            SA_STATUS_INSUFFICIENT_COMPONENTS,
        ),
    ];
    for (mask, rec, want) in refused {
        let (st, recs, a) = ask_ib(METHOD_SET, ATTR_MCMEMBER_RECORD, mask, &rec);
        assert_eq!((st, recs.len()), (want, 0), "{}", a.summary);
    }
    // Only McMemberRecords are Set.
    let (st, _, _) = ask(METHOD_SET, ATTR_NODE_RECORD, 0, &zero(NodeRecord::SIZE));
    assert_eq!(st, MAD_STATUS_UNSUPPORTED_METHOD);
}
