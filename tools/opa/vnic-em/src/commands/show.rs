// SPDX-License-Identifier: GPL-2.0

//! `vnic-em show`: every attribute of each vport.

use crate::client::Client;
use crate::config::Config;
use crate::error::{Exit, Result};
use crate::fabric::Fabric;
use crate::view::vport_text;

use super::{read_vport, report_err, resolve, Io, Select};

/// `vnic-em show`.
pub fn show<F: Fabric>(
    client: &mut Client<F>,
    cfg: Option<&Config>,
    sel: &Select,
    json: bool,
    counters: bool,
    io: &mut Io<'_>,
) -> Result {
    let targets = resolve(client, cfg, sel)?;
    let mut views = Vec::new();
    let mut code = Exit::Ok;
    for (lid, vport) in targets {
        match read_vport(client, lid, vport, counters) {
            Ok(v) => {
                if !json {
                    write!(io.out, "{}", vport_text(&v))?;
                }
                views.push(v);
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
            serde_json::to_string_pretty(&views).unwrap_or_default()
        )?;
    }
    Ok(code)
}
