// SPDX-License-Identifier: GPL-2.0

//! `sa-query`: asks the fabric's subnet administrator one question and prints the records,
//! one a line, as opa-ff's `opasaquery` does; the guest tests ask opasim's SA with it.
//!
//! ```text
//! sa-query [--umad umadN] node|portinfo|path|mcmember [--get] [--lid L] [--guid G]
//!          [--desc D] [--port N] [--slid L] [--dlid L] [--cap-mask M] [--mgid HI:LO]
//!          [--data-len N]
//! ```
//!
//! The request goes to the SMLID of the port; a GetTable answer comes reassembled by the
//! kernel's MAD layer from its RMPP segments. Exit status: 0 with an answer of status 0, 1
//! with another status (printed), 2 when nothing answers or the request cannot be sent.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use opa_umad::{list_ports, select_port, Device, PortSelect, Registration, SendHdr};
use opa_wire::sa::{
    self, McMemberRecord, NodeRecord, PathRecord, PortInfoRecord, SaHdr, SaMad,
    ATTR_MCMEMBER_RECORD, ATTR_NODE_RECORD, ATTR_PATH_RECORD, ATTR_PORTINFO_RECORD, METHOD_GET,
    METHOD_GET_TABLE, RMPP_VERSION, SA_CLASS, SA_CLASS_VERSION,
};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Record {
    Node,
    Portinfo,
    Path,
    Mcmember,
}

/// Asks the subnet administrator.
#[derive(Parser, Debug)]
#[command(name = "sa-query", version, about)]
struct Args {
    /// The umad device to ask from (default: the first active port).
    #[arg(long)]
    umad: Option<String>,
    /// Root of the sysfs and /dev trees.
    #[arg(long, default_value = "/")]
    root: PathBuf,
    /// The record.
    record: Record,
    /// Get (one record) rather than GetTable.
    #[arg(long)]
    get: bool,
    /// Match the LID (NodeRecord, PortInfoRecord).
    #[arg(long, value_parser = num)]
    lid: Option<u64>,
    /// Match the port GUID (NodeRecord).
    #[arg(long, value_parser = num)]
    guid: Option<u64>,
    /// Match the node description (NodeRecord).
    #[arg(long)]
    desc: Option<String>,
    /// Match the port number (PortInfoRecord).
    #[arg(long, value_parser = num)]
    port: Option<u64>,
    /// Ports whose CapabilityMask has these bits (PortInfoRecord).
    #[arg(long, value_parser = num)]
    cap_mask: Option<u64>,
    /// Source LID (PathRecord).
    #[arg(long, value_parser = num)]
    slid: Option<u64>,
    /// Destination LID (PathRecord).
    #[arg(long, value_parser = num)]
    dlid: Option<u64>,
    /// Match the MGID, as opafm.xml writes it: `0xHI:0xLO` (McMemberRecord).
    #[arg(long, value_parser = mgid)]
    mgid: Option<[u8; 16]>,
    /// Ask a PathRecord or McMemberRecord at OPA's base and class versions (0x80) rather
    /// than InfiniBand's, which opa-fm refuses with BAD_CLASS (to see that it does).
    #[arg(long)]
    opa_versions: bool,
    /// Send only this many bytes of the template (to see what the SA does with less than
    /// the record).
    #[arg(long)]
    data_len: Option<usize>,
}

fn mgid(s: &str) -> Result<[u8; 16], String> {
    let (a, b) = s.split_once(':').ok_or(format!("{s}: not HI:LO"))?;
    let mut g = [0u8; 16];
    g[..8].copy_from_slice(&num(a)?.to_be_bytes());
    g[8..].copy_from_slice(&num(b)?.to_be_bytes());
    Ok(g)
}

fn num(s: &str) -> Result<u64, String> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|e| format!("{s}: {e}"))
}

fn main() -> ExitCode {
    let a = Args::parse();
    match run(&a) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("sa-query: {e}");
            ExitCode::from(2)
        }
    }
}

/// The attribute, attribute modifier, component mask and template of the query.
fn template(a: &Args) -> (u16, u32, u64, Vec<u8>) {
    let n32 = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    match a.record {
        Record::Node => {
            let mut t = NodeRecord::ZERO;
            let mut m = 0;
            if let Some(l) = a.lid {
                t.lid = n32(l);
                m |= NodeRecord::COMP_LID;
            }
            if let Some(g) = a.guid {
                t.port_guid = g;
                m |= NodeRecord::COMP_PORTGUID;
            }
            if let Some(d) = &a.desc {
                t.node_desc = NodeRecord::desc_bytes(d);
                m |= NodeRecord::COMP_NODEDESC;
            }
            let mut b = vec![0u8; NodeRecord::SIZE];
            let _ = t.encode(&mut b);
            (ATTR_NODE_RECORD, 0, m, b)
        }
        Record::Portinfo => {
            let mut t = PortInfoRecord::default();
            let (mut m, mut amod) = (0, 0);
            if let Some(l) = a.lid {
                t.lid = n32(l);
                m |= PortInfoRecord::COMP_ENDPORTLID;
            }
            if let Some(p) = a.port {
                t.port_num = u8::try_from(p).unwrap_or(u8::MAX);
                m |= PortInfoRecord::COMP_PORTNUM;
            }
            if let Some(c) = a.cap_mask {
                t.cap_mask = n32(c);
                m |= PortInfoRecord::COMP_CAPABILITYMASK;
                amod = 1 << 31;
            }
            let mut b = vec![0u8; PortInfoRecord::SIZE];
            let _ = t.encode(&mut b);
            (ATTR_PORTINFO_RECORD, amod, m, b)
        }
        Record::Path => {
            let mut t = PathRecord::default();
            let mut m = 0;
            let n16 = |v: u64| u16::try_from(v).unwrap_or(u16::MAX);
            if let Some(l) = a.slid {
                t.slid = n16(l);
                m |= PathRecord::COMP_SLID;
            }
            if let Some(l) = a.dlid {
                t.dlid = n16(l);
                m |= PathRecord::COMP_DLID;
            }
            let mut b = vec![0u8; PathRecord::SIZE];
            let _ = t.encode(&mut b);
            (ATTR_PATH_RECORD, 0, m, b)
        }
        Record::Mcmember => {
            let mut t = McMemberRecord::default();
            let mut m = 0;
            if let Some(g) = a.mgid {
                t.mgid = g;
                m |= McMemberRecord::COMP_MGID;
            }
            let mut b = vec![0u8; McMemberRecord::SIZE];
            let _ = t.encode(&mut b);
            (ATTR_MCMEMBER_RECORD, 0, m, b)
        }
    }
}

fn run(a: &Args) -> Result<u8, String> {
    let ports = list_ports(&a.root).map_err(|e| e.to_string())?;
    let sel = PortSelect {
        umad: a.umad.clone(),
        ..PortSelect::default()
    };
    let port = select_port(&ports, &sel).map_err(|e| e.to_string())?;
    if port.sm_lid == 0 {
        return Err(format!(
            "{} port {}: SMLID 0, no subnet manager",
            port.ibdev, port.port
        ));
    }
    let mut dev = Device::open(&port.dev_path).map_err(|e| e.to_string())?;
    // opa-fm serves PathRecords and McMemberRecords only at InfiniBand's versions
    // (`sa_PathRecord()`, `sa_McMemberRecord()`).
    let ib = matches!(a.record, Record::Path | Record::Mcmember) && !a.opa_versions;
    let version = if ib {
        sa::IB_SA_CLASS_VERSION
    } else {
        SA_CLASS_VERSION
    };
    let agent = dev
        .register(&Registration::class(SA_CLASS, version).with_rmpp(RMPP_VERSION))
        .map_err(|e| format!("register: {e}"))?;
    let (attr, amod, mask, mut t) = template(a);
    if let Some(n) = a.data_len {
        t.truncate(n);
    }
    let method = if a.get { METHOD_GET } else { METHOD_GET_TABLE };
    let tid = u64::from(std::process::id());
    let mut mad = vec![0u8; sa::SA_DATA_OFFSET + t.len()];
    let hdr = SaHdr {
        comp_mask: mask,
        ..SaHdr::default()
    };
    let encode = if ib { sa::encode_ib } else { sa::encode };
    let n = encode(&mut mad, method, 0, tid, attr, amod, &hdr, &t).map_err(|e| format!("{e:?}"))?;
    mad.truncate(n);
    // Four tries of 2 s: opa-fm's SA answers in milliseconds, but under an emulated CPU and
    // a debug kernel (KASAN, lockdep) with builds beside it, one attempt of 1 s and two
    // retries were seen to run out.
    let send = SendHdr {
        timeout_ms: 2000,
        retries: 3,
        ..SendHdr::gsi(agent, port.sm_lid, port.mgmt_pkey_index)
    };
    dev.send(&send, &mad).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(12);
    let r = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err("no answer in 12 s".into());
        }
        match dev.recv(left).map_err(|e| e.to_string())? {
            Some(r) if r.agent == agent && r.tid() & 0xffff_ffff == tid & 0xffff_ffff => break r,
            _ => continue,
        }
    };
    if r.timed_out() {
        return Err(format!("the SA at LID {:#x} did not answer", port.sm_lid));
    }
    let m = if ib {
        SaMad::decode_ib(&r.mad)
    } else {
        SaMad::decode(&r.mad)
    }
    .map_err(|e| format!("{e:?}"))?;
    println!(
        "status {:#06x} records {} bytes {}",
        m.hdr.status,
        if a.get {
            usize::from(m.hdr.status == 0)
        } else {
            m.records().count()
        },
        r.mad.len()
    );
    if m.hdr.status != 0 {
        return Ok(1);
    }
    let recs: Vec<&[u8]> = if a.get {
        vec![m.data]
    } else {
        m.records().collect()
    };
    for b in recs {
        match a.record {
            Record::Node => {
                if let Ok(n) = NodeRecord::decode(b) {
                    println!(
                        "node lid {:#x} port {} guid {:#018x} node_guid {:#018x} desc \"{}\"",
                        n.lid,
                        n.local_port_num,
                        n.port_guid,
                        n.node_guid,
                        n.desc()
                    );
                }
            }
            Record::Portinfo => {
                if let Ok(p) = PortInfoRecord::decode(b) {
                    println!(
                        "portinfo lid {:#x} port {} state {} sm_lid {:#x} cap_mask {:#010x} cap_mask3 {:#06x}",
                        p.lid, p.port_num, p.port_state, p.sm_lid, p.cap_mask, p.cap_mask3
                    );
                }
            }
            Record::Mcmember => {
                if let Ok(r) = McMemberRecord::decode(b) {
                    let (hi, lo) = r.mgid.split_at(8);
                    println!(
                        "mcmember mgid {:#018x}:{:#018x} mlid {:#x} pkey {:#06x} qkey {:#x} mtu {} rate {} sl {}",
                        u64::from_be_bytes(hi.try_into().unwrap_or_default()),
                        u64::from_be_bytes(lo.try_into().unwrap_or_default()),
                        r.mlid, r.pkey, r.qkey, r.mtu, r.rate, r.sl
                    );
                }
            }
            Record::Path => {
                if let Ok(p) = PathRecord::decode(b) {
                    println!(
                        "path slid {:#x} dlid {:#x} pkey {:#06x} sl {} mtu {} rate {}",
                        p.slid, p.dlid, p.pkey, p.sl, p.mtu, p.rate
                    );
                }
            }
        }
    }
    Ok(0)
}
