// SPDX-License-Identifier: GPL-2.0

//! `vnic-em raw`: one VEMA Get or Set, its answer printed as is.

use crate::client::{Client, EmError};
use crate::error::{Error, Exit, Result};
use crate::fabric::Fabric;
use crate::mad::{Method, Target};

use super::Io;

/// One request of `vnic-em raw`.
#[derive(Debug, Clone, Default)]
pub struct RawReq {
    /// Node port LID.
    pub lid: u16,
    /// A Set rather than a Get.
    pub set: bool,
    /// Attribute id.
    pub attr_id: u16,
    /// Attribute modifier.
    pub attr_mod: u32,
    /// The request's data.
    pub data: Vec<u8>,
    /// Send exactly this many bytes, header included (the data cut or
    /// zero-padded to fit), whatever the client's MAD size.
    pub len: Option<usize>,
}

/// `vnic-em raw`: one Get or Set, its answer printed as `status 0xSSSS` and `data HEX`, so
/// that two agents' answers compare line by line. The data is printed without its trailing zero
/// bytes: an answer reads as if zero-filled, so the same answer trimmed or in a whole MAD prints
/// alike. A MAD status is part of the answer, not an error.
pub fn raw<F: Fabric>(client: &mut Client<F>, req: &RawReq, io: &mut Io<'_>) -> Result {
    raw_as(client, req, false, io)
}

/// [`raw`], its answer as one JSON object (`status`, `data`: the same
/// hex) with `json`.
pub fn raw_as<F: Fabric>(
    client: &mut Client<F>,
    req: &RawReq,
    json: bool,
    io: &mut Io<'_>,
) -> Result {
    let target = Target {
        method: if req.set { Method::Set } else { Method::Get },
        attr_id: req.attr_id,
        lid: req.lid,
        vport: Some((req.attr_mod & 0xff) as u8),
    };
    let r = match req.len {
        Some(len) => client.transact_len(target, req.attr_mod, &req.data, len),
        None => client.transact(target, req.attr_mod, &req.data),
    };
    let (status, rsp) = match r {
        Ok(rsp) => (0, rsp),
        Err(EmError::Status { status, .. }) => (status, Vec::new()),
        // Even a transport failure: exit 2, as it always was.
        Err(e) => return Err(Error::Fabric(e.to_string())),
    };
    let end = rsp.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let hex: String = rsp[..end].iter().map(|b| format!("{b:02x}")).collect();
    if json {
        let j = serde_json::json!({ "status": format!("{status:#06x}"), "data": hex });
        writeln!(io.out, "{j}")?;
    } else {
        writeln!(io.out, "status {status:#06x}")?;
        writeln!(io.out, "data {hex}")?;
    }
    Ok(Exit::Ok)
}
