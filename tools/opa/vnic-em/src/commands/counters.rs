// SPDX-License-Identifier: GPL-2.0

//! `vnic-em counters`: the summary and error counters of each vport, as
//! text, JSON or the Prometheus text format, to stdout or (for a textfile
//! collector) to a file replaced at once.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::client::{Client, EmError};
use crate::config::Config;
use crate::error::{Error, Exit, Result};
use crate::fabric::Fabric;
use crate::mac::Mac;
use crate::view::prom::{prometheus_text, VportCounters};
use crate::view::{counters_json, counters_text_block};

use super::{report_err, resolve, Io, Select};

/// How `counters` prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CountersFormat {
    /// A block of two columns per vport.
    #[default]
    Text,
    /// A JSON array, one object per vport.
    Json,
    /// The Prometheus text exposition format 0.0.4.
    Prometheus,
}

/// Options of `counters`.
#[derive(Debug, Clone, Default)]
pub struct CountersOpts {
    /// The format.
    pub format: CountersFormat,
    /// Write to this file instead of stdout: to a temporary file in the
    /// same directory, renamed over it once whole, so that a reader (a
    /// node exporter's textfile collector) never sees half of it.
    pub output: Option<PathBuf>,
}

/// `vnic-em counters` to stdout, as text or (`json`) JSON.
pub fn counters<F: Fabric>(
    client: &mut Client<F>,
    cfg: Option<&Config>,
    sel: &Select,
    json: bool,
    io: &mut Io<'_>,
) -> Result {
    let format = if json {
        CountersFormat::Json
    } else {
        CountersFormat::Text
    };
    let opts = CountersOpts {
        format,
        output: None,
    };
    counters_with(client, cfg, sel, &opts, io)
}

/// Reads the counters of one vport, and its MAC when `mac` (the
/// Prometheus labels name it).
fn read<F: Fabric>(
    client: &mut Client<F>,
    lid: u16,
    vport: u8,
    mac: bool,
) -> std::result::Result<VportCounters, EmError> {
    let summary = client.get_summary_counters(lid, vport)?;
    let errors = client.get_error_counters(lid, vport)?;
    let mac = if mac {
        Mac(client.get_vport_info(lid, vport)?.vport.base_mac_addr)
    } else {
        Mac::default()
    };
    Ok(VportCounters {
        lid,
        vport,
        mac,
        summary,
        errors,
    })
}

/// `vnic-em counters` with every option.
pub fn counters_with<F: Fabric>(
    client: &mut Client<F>,
    cfg: Option<&Config>,
    sel: &Select,
    opts: &CountersOpts,
    io: &mut Io<'_>,
) -> Result {
    let targets = resolve(client, cfg, sel)?;
    let prom = opts.format == CountersFormat::Prometheus;
    let mut read_ok = Vec::new();
    let mut code = Exit::Ok;
    let mut failed = 0usize;
    for (lid, vport) in targets {
        match read(client, lid, vport, prom) {
            Ok(c) => read_ok.push(c),
            Err(e) => {
                report_err(io, &e)?;
                code = code.max(Exit::of(&e));
                failed += 1;
            }
        }
    }
    let text = match opts.format {
        CountersFormat::Text => read_ok
            .iter()
            .map(|c| counters_text_block(c.lid, c.vport, &c.summary, &c.errors))
            .collect(),
        CountersFormat::Json => {
            let all: Vec<serde_json::Value> = read_ok
                .iter()
                .map(|c| counters_json(c.lid, c.vport, &c.summary, &c.errors))
                .collect();
            serde_json::to_string_pretty(&all).unwrap_or_default() + "\n"
        }
        CountersFormat::Prometheus => prometheus_text(&read_ok, failed),
    };
    match &opts.output {
        None => write!(io.out, "{text}")?,
        Some(path) => write_atomically(path, &text)
            .map_err(|e| Error::Device(format!("counters: {}: {e}", path.display())))?,
    }
    Ok(code)
}

/// Writes `text` to a hidden temporary file beside `path` (a name a
/// textfile collector, which reads `*.prom`, passes over), then renames
/// it over `path`: readers see the old file or the new one, whole.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().map_or_else(
        || "counters".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let r = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}
