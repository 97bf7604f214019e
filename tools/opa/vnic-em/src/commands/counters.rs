// SPDX-License-Identifier: GPL-2.0

//! `vnic-em counters`: the summary and error counters of each vport.

use crate::client::Client;
use crate::config::Config;
use crate::error::{Exit, Result};
use crate::fabric::Fabric;
use crate::view::{counters_json, counters_text_block};

use super::{report_err, resolve, Io, Select};

/// `vnic-em counters`.
pub fn counters<F: Fabric>(
    client: &mut Client<F>,
    cfg: Option<&Config>,
    sel: &Select,
    json: bool,
    io: &mut Io<'_>,
) -> Result {
    let targets = resolve(client, cfg, sel)?;
    let mut all = Vec::new();
    let mut code = Exit::Ok;
    for (lid, vport) in targets {
        let r = client
            .get_summary_counters(lid, vport)
            .and_then(|s| Ok((s, client.get_error_counters(lid, vport)?)));
        match r {
            Ok((s, e)) => {
                if json {
                    all.push(counters_json(lid, vport, &s, &e));
                } else {
                    write!(io.out, "{}", counters_text_block(lid, vport, &s, &e))?;
                }
            }
            Err(e) => {
                report_err(io, &e)?;
                code = code.max(Exit::of(&e));
            }
        }
    }
    if json {
        writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(&all).unwrap_or_default()
        )?;
    }
    Ok(code)
}
