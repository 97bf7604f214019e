// SPDX-License-Identifier: GPL-2.0

//! `apply --diff` against the in-memory fabric: it sends nothing, and the
//! Sets it lists are exactly those a real `apply` then sends, with the
//! values read from the fabric on the left of each `->`.

mod common;

use common::{apply, sets, Out, FABRIC};

use opa_wire::mad::{
    ATTR_CLASS_PORT_INFO, ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES, METHOD_SET,
};
use vnic_em::client::Client;
use vnic_em::commands::ApplyOpts;
use vnic_em::config::{parse, Config};
use vnic_em::error::Exit;
use vnic_em::fake::FakeFabric;

/// One Set: attribute, LID, vport, and for MAC entries the first slot and
/// the number of entries.
type SetId = (u16, u16, Option<u8>, Option<(u16, u16)>);

fn diff(c: &mut Client<FakeFabric>, cfg: &Config) -> Out {
    let opts = ApplyOpts {
        diff: true,
        ..Default::default()
    };
    apply(c, cfg, opts)
}

/// The Sets `apply --diff` lists, from its `Set ...` lines.
fn listed(out: &str) -> Vec<SetId> {
    out.lines()
        .filter_map(|l| l.strip_prefix("Set "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let attr = match w[0] {
                "ClassPortInfo" => ATTR_CLASS_PORT_INFO,
                "VESWPortInfo" => ATTR_VESWPORT_INFO,
                "VESWPortMacEntries" => ATTR_VESWPORT_MAC_ENTRIES,
                a => panic!("unknown attribute {a}"),
            };
            assert_eq!(w[1], "LID");
            let lid = u16::from_str_radix(w[2].trim_start_matches("0x"), 16).unwrap();
            let vport = (w.get(3) == Some(&"vport")).then(|| w[4].parse().unwrap());
            let window = w.iter().position(|x| *x == "offset").map(|i| {
                assert_eq!(w[i + 2], "count");
                (w[i + 1].parse().unwrap(), w[i + 3].parse().unwrap())
            });
            (attr, lid, vport, window)
        })
        .collect()
}

/// The Sets the fabric received from the `from`-th request on.
fn received(c: &Client<FakeFabric>, from: usize) -> Vec<SetId> {
    c.fabric().log[from..]
        .iter()
        .filter(|r| r.method == METHOD_SET)
        .map(|r| {
            let vport = (r.attr_id != ATTR_CLASS_PORT_INFO).then_some(r.attr_mod as u8);
            let window = (r.attr_id == ATTR_VESWPORT_MAC_ENTRIES).then(|| {
                let be = |i: usize| u16::from_be_bytes([r.data[i], r.data[i + 1]]);
                (be(0), be(2))
            });
            (r.attr_id, r.lid, vport, window)
        })
        .collect()
}

/// `apply --diff`, then `apply`: nothing sent by the first, and what it
/// lists is what the second sends. Returns the diff's output.
fn diff_then_apply(c: &mut Client<FakeFabric>, cfg: &Config) -> String {
    let before = sets(c);
    let d = diff(c, cfg);
    assert_eq!(d.code, Exit::Ok, "{}{}", d.out, d.err);
    assert_eq!(sets(c), before, "--diff sent a Set");
    let from = c.fabric().log.len();
    let r = apply(c, cfg, ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    // The same Sets, and each node port's and vport's in the same order: apply keeps many
    // in flight, so vports interleave on the wire.
    let by_vport = |mut v: Vec<SetId>| {
        v.sort_by_key(|s| (s.1, s.2));
        v
    };
    assert_eq!(
        by_vport(listed(&d.out)),
        by_vport(received(c, from)),
        "{}",
        d.out
    );
    d.out
}

#[test]
fn diff_lists_exactly_the_sets_apply_sends() {
    let mut c = common::client(50);
    let cfg = parse(FABRIC).unwrap();

    // From an empty fabric: everything is created.
    let out = diff_then_apply(&mut c, &cfg);
    assert!(out.contains("Set ClassPortInfo LID 0x0002\n    trap_lid             0x0 -> 0x1\n"));
    assert!(
        out.contains("Set VESWPortInfo LID 0x0003 vport 1 [vesw 20 blue] (create)\n"),
        "{out}"
    );
    assert!(
        out.contains("    pkey                 0x0000 -> 0x8020\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "Set VESWPortMacEntries LID 0x0002 vport 0 [vesw 10 red] offset 0 count 101\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("    slot 1               - -> 02:00:00:00:03:00 dlid 0x3\n"),
        "{out}"
    );
    assert!(
        out.ends_with("8 Set(s) to send (diff: none sent)\n"),
        "{out}"
    );
    assert!(diff(&mut c, &cfg).out.ends_with("nothing to do\n"));

    // Changed behind the EM's back, and a changed file: old values are
    // the fabric's.
    let v = c.fabric_mut().vport_mut(2, 0).unwrap();
    v.info.vesw.pkey = 0x8099;
    c.fabric_mut()
        .agents
        .get_mut(&3)
        .unwrap()
        .class_port_info
        .trap_lid = 7;
    let changed = FABRIC
        .replace("index = 100", "index = 1")
        .replace("enabled = false", "enabled = true");
    let cfg = parse(&changed).unwrap();
    let out = diff_then_apply(&mut c, &cfg);
    assert!(
        out.contains("    trap_lid             0x7 -> 0x1\n"),
        "{out}"
    );
    assert!(
        out.contains("    pkey                 0x8099 -> 0x8010\n"),
        "{out}"
    );
    assert!(
        out.contains("    enabled              drop-all -> forwarding\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "    slot 1               02:00:00:00:03:00 dlid 0x3 -> 02:11:00:00:00:01 dlid 0x20\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("    slot 100             02:11:00:00:00:01 dlid 0x20 -> -\n"),
        "{out}"
    );
    assert!(diff(&mut c, &cfg).out.ends_with("nothing to do\n"));
}
