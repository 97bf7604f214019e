// SPDX-License-Identifier: GPL-2.0

//! `vnic-em counters`: the summary and error counters of each vport.

use crate::client::Client;
use crate::config::Config;
use crate::fabric::Fabric;
use crate::view::{counters_json, counters_text_block};

use super::{exit_for, report_err, resolve, Io, Select, EXIT_OK};

/// `vnic-em counters`.
pub fn counters<F: Fabric>(
    client: &mut Client<F>,
    cfg: Option<&Config>,
    sel: &Select,
    json: bool,
    io: &mut Io<'_>,
) -> u8 {
    let targets = match resolve(client, cfg, sel, io) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let mut all = Vec::new();
    let mut code = EXIT_OK;
    for (lid, vport) in targets {
        let r = client
            .get_summary_counters(lid, vport)
            .and_then(|s| Ok((s, client.get_error_counters(lid, vport)?)));
        match r {
            Ok((s, e)) => {
                if json {
                    all.push(counters_json(lid, vport, &s, &e));
                } else {
                    let _ = write!(io.out, "{}", counters_text_block(lid, vport, &s, &e));
                }
            }
            Err(e) => {
                report_err(io, &e);
                code = code.max(exit_for(&e));
            }
        }
    }
    if json {
        let _ = writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(&all).unwrap_or_default()
        );
    }
    code
}
