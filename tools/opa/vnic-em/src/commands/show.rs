// SPDX-License-Identifier: GPL-2.0

//! `vnic-em show`: every attribute of each vport.

use crate::client::Client;
use crate::config::Config;
use crate::fabric::Fabric;
use crate::view::vport_text;

use super::{exit_for, read_vport, report_err, resolve, Io, Select, EXIT_OK};

/// `vnic-em show`.
pub fn show<F: Fabric>(
    client: &mut Client<F>,
    cfg: Option<&Config>,
    sel: &Select,
    json: bool,
    counters: bool,
    io: &mut Io<'_>,
) -> u8 {
    let targets = match resolve(client, cfg, sel, io) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let mut views = Vec::new();
    let mut code = EXIT_OK;
    for (lid, vport) in targets {
        match read_vport(client, lid, vport, counters) {
            Ok(v) => {
                if !json {
                    let _ = write!(io.out, "{}", vport_text(&v));
                }
                views.push(v);
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
            serde_json::to_string_pretty(&views).unwrap_or_default()
        );
    }
    code
}
