// SPDX-License-Identifier: GPL-2.0

//! End-to-end tests of every command against the in-memory VEMA fabric:
//! apply (idempotence, minimal diffs, dry run, check), show, counters,
//! traps and set, with dropped responses, MAD status codes, stale
//! responses and traps in the middle of transactions.

#[path = "../common/mod.rs"]
mod common;

mod apply;
mod set;
mod show;
mod traps;

use std::time::Duration;

use common::{apply, apply_ok, capture, sets, FABRIC};

use opa_wire::mad::{
    ATTR_CLASS_PORT_INFO, ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES, METHOD_GET, METHOD_SET,
};
use opa_wire::vema_info::{VeswPortInfo, ETH_LINK_UP, STATE_DROP_ALL, STATE_FORWARDING};
use vnic_em::client::{Client, EmError};
use vnic_em::commands::{self, ApplyOpts, EntryArg, RawReq, Select, SetOpts, TrapOpts};
use vnic_em::config::{parse, Config};
use vnic_em::error::Exit;
use vnic_em::fake::FakeFabric;
use vnic_em::mac::Mac;
use vnic_em::mad::{Method, Target};

const EM_LID: u16 = 1;

fn fabric() -> FakeFabric {
    common::fabric(EM_LID)
}

fn client(f: FakeFabric) -> Client<FakeFabric> {
    Client::new(f, common::policy(50))
}

fn cfg(src: &str) -> Config {
    parse(src).unwrap()
}

fn applied(c: &mut Client<FakeFabric>) {
    apply_ok(c, &cfg(FABRIC));
}

/// `show --json` (with its config, if any): the exit code, the JSON and standard error.
fn show_json(
    c: &mut Client<FakeFabric>,
    cfg: Option<&Config>,
    sel: &Select,
) -> (Exit, serde_json::Value, String) {
    let r = capture(|io| commands::show(c, cfg, sel, true, true, io));
    let j = serde_json::from_str(&r.out).unwrap_or(serde_json::Value::Null);
    (r.code, j, r.err)
}
