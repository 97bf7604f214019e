// SPDX-License-Identifier: GPL-2.0

//! Whole and trimmed request MADs against the in-memory fabric: every
//! command works and prints the same in both sizes, trimmed requests have
//! the sizes opa-fm sends (header and attribute), and answers of any size,
//! from the MAD header to a whole MAD, are read as if zero-filled.

mod common;

use common::{capture, FABRIC};

use opa_wire::mad::{
    ATTR_CLASS_PORT_INFO, ATTR_DELETE_VESW, ATTR_IFACE_MCAST_MACS, ATTR_IFACE_UCAST_MACS,
    ATTR_VESWPORT_ERROR_COUNTERS, ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES,
    ATTR_VESWPORT_SUMMARY_COUNTERS, METHOD_GET, METHOD_SET,
};
use opa_wire::vema_info::VeswPortInfo;
use opa_wire::vema_mac::MacTableHdr;
use vnic_em::client::{Client, EmError, Policy};
use vnic_em::commands::{self, ApplyOpts, EntryArg, Io, RawReq, Select, SetOpts};
use vnic_em::config::{parse, Config};
use vnic_em::error::Exit;
use vnic_em::fake::{AnswerSize, FakeFabric, LoggedRequest};
use vnic_em::mac::Mac;
use vnic_em::mad::MadSize;

const EM_LID: u16 = 1;

fn fabric() -> FakeFabric {
    common::fabric(EM_LID)
}

fn client(f: FakeFabric, mad_size: MadSize) -> Client<FakeFabric> {
    Client::new(
        f,
        Policy {
            retries: 1,
            mad_size,
            ..common::policy(50)
        },
    )
}

/// The tests' config with a second MAC entry in red's table, at its last slot: MAC table
/// windows at both ends of the table.
fn cfg() -> Config {
    let last = "index = 100\n\n\
                [[vesw.mac_table]]\n\
                mac = \"02:11:00:00:00:02\"\n\
                dlid = 0x21\n\
                index = 1999\n";
    parse(&FABRIC.replace("index = 100\n", last)).unwrap()
}

/// Runs `f`, checks its exit code, returns what it printed.
fn ok(code: Exit, what: &str, f: impl FnOnce(&mut Io<'_>) -> vnic_em::error::Result) -> String {
    let r = capture(f);
    assert_eq!(r.code, code, "{what}: {}{}", r.out, r.err);
    r.out
}

fn raw(lid: u16, set: bool, attr_id: u16, attr_mod: u32, data: &[u8]) -> RawReq {
    RawReq {
        lid,
        set,
        attr_id,
        attr_mod,
        data: data.to_vec(),
        len: None,
    }
}

/// The size opa-fm sends a request at: the 40-byte vendor header and the
/// attribute.
fn opa_fm_len(r: &LoggedRequest) -> usize {
    40 + match r.attr_id {
        ATTR_CLASS_PORT_INFO => 80,
        ATTR_VESWPORT_INFO | ATTR_DELETE_VESW => 280,
        ATTR_VESWPORT_SUMMARY_COUNTERS => 360,
        ATTR_VESWPORT_ERROR_COUNTERS => 304,
        ATTR_VESWPORT_MAC_ENTRIES => {
            let n = MacTableHdr::decode(&r.data).unwrap().num_entries;
            8 + 16 * usize::from(n)
        }
        ATTR_IFACE_UCAST_MACS | ATTR_IFACE_MCAST_MACS => {
            assert_eq!(r.method, METHOD_GET);
            8
        }
        // Anything else: what it carries.
        _ => r.data.len(),
    }
}

/// Every command of a session, in order; what each printed.
fn session(c: &mut Client<FakeFabric>) -> Vec<String> {
    let config = cfg();
    let mut outs = Vec::new();
    let check = ApplyOpts {
        check: true,
        ..Default::default()
    };
    outs.push(ok(Exit::Differs, "apply --check", |io| {
        commands::apply(c, &config, check, io)
    }));
    outs.push(ok(Exit::Ok, "apply", |io| {
        commands::apply(c, &config, ApplyOpts::default(), io)
    }));
    outs.push(ok(Exit::Ok, "apply again", |io| {
        commands::apply(c, &config, ApplyOpts::default(), io)
    }));
    outs.push(ok(Exit::Ok, "apply --check", |io| {
        commands::apply(c, &config, check, io)
    }));
    assert!(outs[2].contains("nothing to do"), "{}", outs[2]);
    c.fabric_mut().ip_maddr_add(3, 1, [0x01, 0, 0x5e, 0, 0, 1]);
    c.fabric_mut()
        .vport_mut(2, 0)
        .unwrap()
        .uc
        .push([2, 0, 0, 0, 2, 0x55]);
    c.fabric_mut().vport_mut(2, 0).unwrap().summary.tx_packets = 1234;
    c.fabric_mut().vport_mut(3, 1).unwrap().errors.rx_runt = 5;
    let all = Select {
        lids: vec![2, 3],
        scan: 4,
        ..Select::default()
    };
    let show = ok(Exit::Ok, "show", |io| {
        commands::show(c, Some(&config), &Select::default(), true, true, io)
    });
    let v: serde_json::Value = serde_json::from_str(&show).unwrap();
    assert_eq!(v[0]["vesw"]["eth_mtu"], 9000, "{show}");
    assert_eq!(v[0]["mac_table"].as_array().unwrap().len(), 4, "{show}");
    assert_eq!(v[0]["mac_table"][3]["index"], 1999, "{show}");
    assert_eq!(v[0]["iface_ucast_macs"][0], "02:00:00:00:02:55", "{show}");
    assert_eq!(v[0]["summary_counters"]["tx_packets"], 1234, "{show}");
    assert_eq!(v[2]["iface_mcast_macs"][0], "01:00:5e:00:00:01", "{show}");
    assert_eq!(v[2]["error_counters"]["rx_runt"], 5, "{show}");
    outs.push(show);
    outs.push(ok(Exit::Ok, "counters", |io| {
        commands::counters(c, None, &all, false, io)
    }));
    let set = SetOpts {
        lid: 3,
        vport: Some(1),
        trap_lid: Some(EM_LID),
        eth_mtu: Some(1500),
        entries: vec![EntryArg {
            index: 7,
            mac: "02:00:00:00:00:77".parse::<Mac>().unwrap(),
            dlid: 0x77,
            source: false,
        }],
        ..SetOpts::default()
    };
    outs.push(ok(Exit::Ok, "set", |io| commands::set(c, &set, io)));
    outs.push(ok(Exit::Differs, "apply --check after set", |io| {
        commands::apply(c, &config, check, io)
    }));
    let delete = SetOpts {
        lid: 2,
        vport: Some(0),
        delete: true,
        ..SetOpts::default()
    };
    outs.push(ok(Exit::Ok, "set --delete", |io| {
        commands::set(c, &delete, io)
    }));
    for req in [
        raw(3, false, ATTR_CLASS_PORT_INFO, 0, &[]),
        raw(3, false, ATTR_VESWPORT_INFO, 1, &[]),
        raw(3, false, ATTR_VESWPORT_MAC_ENTRIES, 1, &[0, 0, 0, 10]),
        raw(3, false, ATTR_IFACE_MCAST_MACS, 1, &[]),
        raw(3, false, ATTR_VESWPORT_SUMMARY_COUNTERS, 1, &[]),
        raw(2, false, ATTR_VESWPORT_ERROR_COUNTERS, 0, &[]),
        raw(2, false, ATTR_VESWPORT_ERROR_COUNTERS, 9, &[]),
        raw(2, true, ATTR_VESWPORT_SUMMARY_COUNTERS, 0, &[]),
        raw(2, false, 0x0099, 0, &[]),
    ] {
        outs.push(ok(Exit::Ok, "raw", |io| commands::raw(c, &req, io)));
    }
    outs
}

#[test]
fn every_command_works_and_prints_the_same_in_both_sizes() {
    let mut full = client(fabric(), MadSize::Full);
    let want = session(&mut full);
    assert!(full.fabric().log.iter().all(|r| r.len == 2048));

    let mut trimmed = client(fabric(), MadSize::Trimmed);
    let got = session(&mut trimmed);
    assert_eq!(got, want);
    let log = &trimmed.fabric().log;
    assert_eq!(log.len(), full.fabric().log.len());
    for r in log {
        assert_eq!(r.len, opa_fm_len(r), "{r:?}");
    }
    // The sizes of the examples, each seen.
    let sizes = |method, attr| -> Vec<usize> {
        let mut v: Vec<usize> = log
            .iter()
            .filter(|r| r.method == method && r.attr_id == attr)
            .map(|r| r.len)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    assert_eq!(sizes(METHOD_GET, ATTR_CLASS_PORT_INFO), [120]);
    assert_eq!(sizes(METHOD_SET, ATTR_CLASS_PORT_INFO), [120]);
    assert_eq!(sizes(METHOD_GET, ATTR_VESWPORT_INFO), [320]);
    assert_eq!(sizes(METHOD_SET, ATTR_VESWPORT_INFO), [320]);
    assert_eq!(sizes(METHOD_SET, ATTR_DELETE_VESW), [320]);
    assert_eq!(sizes(METHOD_GET, ATTR_VESWPORT_SUMMARY_COUNTERS), [400]);
    assert_eq!(sizes(METHOD_SET, ATTR_VESWPORT_SUMMARY_COUNTERS), [400]);
    assert_eq!(sizes(METHOD_GET, ATTR_VESWPORT_ERROR_COUNTERS), [344]);
    assert_eq!(sizes(METHOD_GET, ATTR_IFACE_UCAST_MACS), [48]);
    assert_eq!(sizes(METHOD_GET, ATTR_IFACE_MCAST_MACS), [48]);
    // MAC table Gets: 125 entries, the last 48 of the table, and the raw 10.
    assert_eq!(
        sizes(METHOD_GET, ATTR_VESWPORT_MAC_ENTRIES),
        [48 + 10 * 16, 48 + 48 * 16, 2048]
    );
    // MAC table Sets: apply writes slots 0..=100 and slot 1999, set one
    // slot.
    assert_eq!(
        sizes(METHOD_SET, ATTR_VESWPORT_MAC_ENTRIES),
        [48 + 16, 48 + 101 * 16]
    );
    // The unknown attribute: the header alone.
    assert_eq!(sizes(METHOD_GET, 0x0099), [40]);
}

#[test]
fn answers_of_any_size_are_read() {
    // What the same requests print with whole answers.
    let mut base = client(fabric(), MadSize::Full);
    let want = session(&mut base);
    for size in [MadSize::Full, MadSize::Trimmed] {
        // Answers trimmed to the attribute: everything reads the same.
        let mut f = fabric();
        f.answer_size = AnswerSize::Trimmed;
        let mut c = client(f, size);
        assert_eq!(session(&mut c), want, "{size:?}");

        // A 256-byte IB answer: the data past byte 216 reads as zeros, and
        // the config's fields all come before. An answer cut at 100 bytes
        // loses most of VESW port info.
        for (answer, keep, applies) in [
            (AnswerSize::Ib, 216, true),
            (AnswerSize::Cut(100), 60, false),
        ] {
            let mut f = fabric();
            f.add_node(4, 1);
            f.answer_size = answer;
            let mut c = client(f, size);
            let mut info = VeswPortInfo::vema_pod();
            info.vesw.vesw_id = 7;
            info.vport.encap_slid = 4;
            info.vport.port_num = 3;
            // Byte 223 of the data: past the 216 bytes of an IB answer.
            info.vport.non_vlan_vl_mc = 5;
            let set = raw(4, true, ATTR_VESWPORT_INFO, 0, &info.to_bytes());
            let out = ok(Exit::Ok, "raw set", |io| commands::raw(&mut c, &set, io));
            let mut want = info.to_bytes();
            c.fabric()
                .vport(4, 0)
                .unwrap()
                .info
                .encode(&mut want)
                .unwrap();
            want[keep..].fill(0);
            let end = want.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            let hex: String = want[..end].iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(out, format!("status 0x0000\ndata {hex}\n"), "{answer:?}");
            // Decoded as zero-filled: the vport part is gone.
            let got = c.get_vport_info(4, 0).unwrap();
            assert_eq!(got.vesw.vesw_id, 7);
            assert_eq!(got.vport.non_vlan_vl_mc, 0, "{answer:?}");
            let r = common::apply(&mut c, &cfg(), ApplyOpts::default());
            if applies {
                assert_eq!(r.code, Exit::Ok, "{}", r.err);
            } else {
                // A Set whose answer lost the values is reported.
                assert_eq!(r.code, Exit::Partial, "{}", r.err);
                assert!(r.err.contains("did not take the values"), "{}", r.err);
            }
        }

        // The common MAD header alone: the status is read, the data is
        // all zero.
        let mut f = fabric();
        f.answer_size = AnswerSize::Cut(24);
        let mut c = client(f, size);
        let r = ok(Exit::Ok, "raw", |io| {
            commands::raw(&mut c, &raw(2, false, ATTR_CLASS_PORT_INFO, 0, &[]), io)
        });
        assert_eq!(r, "status 0x0000\ndata \n");
        let r = ok(Exit::Ok, "raw", |io| {
            commands::raw(
                &mut c,
                &raw(2, false, ATTR_VESWPORT_ERROR_COUNTERS, 3, &[]),
                io,
            )
        });
        assert_eq!(r, "status 0x001c\ndata \n");
        let e = c.get_mac_entries(2, 0, 0, 125).unwrap_err();
        assert!(matches!(e, EmError::Status { status: 0x001c, .. }), "{e}");
        assert_eq!(c.get_class_port_info(2).unwrap().base_version, 0);
        let r =
            capture(|io| commands::show(&mut c, Some(&cfg()), &Select::default(), false, true, io));
        assert_eq!(r.code, Exit::Fabric, "{}", r.err);

        // Less than the MAD header: a clear fabric error, at once.
        let mut f = fabric();
        f.answer_size = AnswerSize::Cut(10);
        let mut c = client(f, size);
        let e = c.get_class_port_info(2).unwrap_err();
        assert!(
            e.to_string()
                .contains("an answer of 10 bytes, shorter than the 24-byte MAD header"),
            "{e}"
        );
        assert_eq!(c.stats().sent, 1, "no retry");
        let r =
            capture(|io| commands::raw(&mut c, &raw(2, false, ATTR_CLASS_PORT_INFO, 0, &[]), io));
        assert_eq!(r.code, Exit::Fabric);
        assert!(r.err.contains("bad response"), "{}", r.err);
    }
}

#[test]
fn raw_len_sends_exactly_that() {
    for size in [MadSize::Full, MadSize::Trimmed] {
        let mut c = client(fabric(), size);
        let mut info = VeswPortInfo::vema_pod();
        info.vesw.vesw_id = 0x123;
        info.vport.port_num = 9;
        let data = info.to_bytes();
        // Cut inside the per-port part: what came is read zero-filled.
        let req = RawReq {
            len: Some(40 + 152),
            ..raw(2, true, ATTR_VESWPORT_INFO, 0, &data)
        };
        ok(Exit::Ok, "raw --len 192", |io| {
            commands::raw(&mut c, &req, io)
        });
        assert_eq!(c.fabric().log.last().unwrap().len, 192);
        let v = c.fabric().vport(2, 0).unwrap();
        assert_eq!(v.info.vesw.vesw_id, 0x123);
        assert_eq!(v.info.vport.port_num, 0, "cut off");
        // A whole MAD, and the header alone.
        for len in [2048, 40] {
            let req = RawReq {
                len: Some(len),
                ..raw(2, false, ATTR_CLASS_PORT_INFO, 0, &[])
            };
            let r = ok(Exit::Ok, "raw --len", |io| commands::raw(&mut c, &req, io));
            assert!(r.starts_with("status 0x0000\ndata 8080ff01"), "{r}");
            assert_eq!(c.fabric().log.last().unwrap().len, len);
        }
        // Less than the vendor header: umad refuses the write.
        let req = RawReq {
            len: Some(24),
            ..raw(2, false, ATTR_CLASS_PORT_INFO, 0, &[])
        };
        let r = capture(|io| commands::raw(&mut c, &req, io));
        assert_eq!(r.code, Exit::Fabric);
        assert!(r.err.contains("write of 24 bytes rejected"), "{}", r.err);
        // Out of range: refused before anything is sent.
        let sent = c.stats().sent;
        for len in [23, 2049] {
            let req = RawReq {
                len: Some(len),
                ..raw(2, false, ATTR_CLASS_PORT_INFO, 0, &[])
            };
            let r = capture(|io| commands::raw(&mut c, &req, io));
            assert_eq!(r.code, Exit::Fabric);
            assert!(r.err.contains("cannot build the request"), "{}", r.err);
        }
        assert_eq!(c.stats().sent, sent);
    }
}
