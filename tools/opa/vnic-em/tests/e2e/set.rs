// SPDX-License-Identifier: GPL-2.0

//! `set` and `raw`: one-off changes, trap settings, delete, usage errors, and raw MADs.

use super::*;

#[test]
fn set_one_off_changes() {
    let mut c = client(fabric());
    applied(&mut c);
    let before = sets(&c);
    let o = SetOpts {
        lid: 2,
        vport: Some(0),
        eth_mtu: Some(1500),
        disable: true,
        ..Default::default()
    };
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert!(r.out.contains("eth_mtu 9000 -> 1500"), "{}", r.out);
    assert!(
        r.out.contains("enabled forwarding -> drop-all"),
        "{}",
        r.out
    );
    assert_eq!(sets(&c), before + 1);
    assert_eq!(c.fabric().vport(2, 0).unwrap().info.vesw.eth_mtu, 1500);
    // The same again sends nothing.
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert!(r.out.contains("vesw port info unchanged"), "{}", r.out);
    assert_eq!(sets(&c), before + 1);

    // MAC table entries: add one, clear one; the digest changes, so apply
    // notices and repairs.
    let o = SetOpts {
        lid: 2,
        vport: Some(0),
        entries: vec![
            EntryArg {
                index: 7,
                mac: "02:00:00:00:00:07".parse().unwrap(),
                dlid: 0x7,
                source: false,
            },
            EntryArg {
                index: 100,
                mac: Mac::default(),
                dlid: 0,
                source: false,
            },
        ],
        json: true,
        ..Default::default()
    };
    let old_digest = c.fabric().vport(2, 0).unwrap().info.vport.mac_tbl_digest;
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    let v = c.fabric().vport(2, 0).unwrap();
    let idx: Vec<u16> = v.mac_table.keys().copied().collect();
    assert_eq!(idx, vec![0, 1, 7]);
    assert_ne!(v.info.vport.mac_tbl_digest, old_digest);
    let json_start = r.out.find('{').unwrap();
    let j: serde_json::Value = serde_json::from_str(&r.out[json_start..]).unwrap();
    assert_eq!(j["mac_table"].as_array().unwrap().len(), 3);

    let r = common::check(&mut c, &cfg(FABRIC));
    assert_eq!(r.code, Exit::Differs, "{}", r.out);
    applied(&mut c);
    let v = c.fabric().vport(2, 0).unwrap();
    assert_eq!(v.info.vport.mac_tbl_digest, old_digest);
    assert_eq!(v.info.vesw.eth_mtu, 9000);
    let idx: Vec<u16> = v.mac_table.keys().copied().collect();
    assert_eq!(idx, vec![0, 1, 100]);
}

#[test]
fn set_trap_delete_and_usage() {
    let mut c = client(fabric());
    applied(&mut c);
    let o = SetOpts {
        lid: 3,
        trap_lid: Some(0x44),
        trap_sl: Some(2),
        ..Default::default()
    };
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert!(
        r.out.contains("LID 0x0003: trap LID 0x44 SL 2"),
        "{}",
        r.out
    );
    let cpi = c.fabric().agents[&3].class_port_info;
    assert_eq!((cpi.trap_lid, cpi.trap_sl()), (0x44, 2));

    let o = SetOpts {
        lid: 3,
        vport: Some(1),
        delete: true,
        ..Default::default()
    };
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    let v = c.fabric().vport(3, 1).unwrap();
    assert_eq!(v.info.vesw.vesw_id, 0);
    assert!(v.mac_table.is_empty());
    assert_eq!(v.info.vport.mac_tbl_digest, 0);
    // apply puts everything back, trap LID included.
    applied(&mut c);
    assert_eq!(c.fabric().vport(3, 1).unwrap().info.vesw.vesw_id, 20);
    assert_eq!(c.fabric().agents[&3].class_port_info.trap_lid, 1);

    let r = capture(|io| {
        commands::set(
            &mut c,
            &SetOpts {
                lid: 3,
                ..Default::default()
            },
            io,
        )
    });
    assert_eq!(r.code, Exit::Usage);
    let o = SetOpts {
        lid: 3,
        eth_mtu: Some(2000),
        ..Default::default()
    };
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Usage);
    assert!(r.err.contains("--vport is needed"), "{}", r.err);
    // Deleting a vport that does not exist: the agent's status.
    let o = SetOpts {
        lid: 3,
        vport: Some(9),
        delete: true,
        ..Default::default()
    };
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Fabric);
    assert!(
        r.err
            .contains("Set delete vesw of LID 0x0003 vport 9: MAD status 0x001c"),
        "{}",
        r.err
    );
}

#[test]
fn raw_prints_status_and_data() {
    let mut c = client(fabric());
    let raw = |attr_id, attr_mod, data: &[u8]| RawReq {
        lid: 2,
        attr_id,
        attr_mod,
        data: data.to_vec(),
        ..RawReq::default()
    };
    // Get ClassPortInfo: status 0, base and class version 0x80, cap_mask 0xff01, resp time 18.
    let r = capture(|io| commands::raw(&mut c, &raw(0x0001, 0, &[]), io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert_eq!(r.out, "status 0x0000\ndata 8080ff0100000012\n");
    // MAC entries of a vport that does not exist: the agent's status, no data.
    let r = capture(|io| commands::raw(&mut c, &raw(0x0012, 9, &[0; 8]), io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert_eq!(r.out, "status 0x001c\ndata \n");
    // No such node: a fabric error.
    let r = capture(|io| {
        commands::raw(
            &mut c,
            &RawReq {
                lid: 9,
                ..raw(0x0001, 0, &[])
            },
            io,
        )
    });
    assert_eq!(r.code, Exit::Fabric);
}
