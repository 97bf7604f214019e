// SPDX-License-Identifier: GPL-2.0

//! `vnic-send`: sends crafted Ethernet frames through a network interface (a packet socket),
//! so that a test covers every traffic class a VNIC driver tells apart, with frames that are
//! the same byte for byte under each driver.
//!
//! ```text
//! vnic-send --dev IF --kind K [--count N | --secs S] [--flows N] [--len L] [--dmac MAC]
//!           [--vlan PCP] [--raw]
//! vnic-send --udp-more IPV4:PORT [--count N] [--len L]
//! ```
//!
//! Kinds, one per routing control class and beyond: `ipv4-tcp`, `ipv4-udp`, `ipv4-icmp`,
//! `ipv4-gre` (IPv4, neither TCP nor UDP), `ipv6-tcp`, `ipv6-udp`, `ipv6-icmp`, `arp`, `other`
//! (ethertype 0x88b5, the default class). `--count` frames (default 1) are spread over
//! `--flows` flows (default 1: the source port, or the last octet of the source address,
//! differs per flow, so the flow hash and the entropy do). `--len` is the frame length without
//! FCS (default: 60, or the headers if longer; up to 16000 for jumbo frames). `--dmac` is the destination MAC (default
//! broadcast); `--vlan PCP` inserts an 802.1Q tag, VLAN 10, with that priority. The source MAC
//! is the interface's. `--secs S` sends for `S` seconds instead of `--count` frames, as fast as
//! the interface takes them: a full queue (`ENOBUFS`) is waited out, not an error (the
//! benchmark of the stack's own transmit path).
//!
//! Frames go through a `SOCK_DGRAM` packet socket, which has the kernel write the Ethernet
//! header with the headroom the interface asks for; `--raw` sends the whole frame through a
//! `SOCK_RAW` one instead, which leaves only `hard_header_len` in front of the frame (the C
//! `opa_vnic` then pushes its header past the start of the buffer: see opa_vnic_rs_wire.rst).

use std::ffi::CString;
use std::process::ExitCode;

use clap::Parser;

struct Args {
    dev: String,
    kind: String,
    count: u32,
    flows: u32,
    len: Option<usize>,
    dmac: [u8; 6],
    vlan: Option<u8>,
    raw: bool,
    /// `--secs`: send for this long rather than `count` frames.
    secs: Option<u64>,
    /// `--udp-more`: where UDP datagrams built from two writes go.
    udp_more: Option<std::net::SocketAddrV4>,
}

fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let v: Option<Vec<u8>> = s
        .split(':')
        .map(|p| u8::from_str_radix(p, 16).ok())
        .collect();
    v.and_then(|v| v.try_into().ok())
        .ok_or_else(|| format!("bad MAC '{s}'"))
}

fn parse_len(s: &str) -> Result<usize, String> {
    s.parse()
        .ok()
        .filter(|l| (60..=16000).contains(l))
        .ok_or_else(|| "--len is 60 to 16000".to_string())
}

/// Sends crafted Ethernet frames through a network interface (a packet socket).
#[derive(Parser)]
#[command(name = "vnic-send")]
struct Cli {
    /// The interface to send through
    #[arg(long, value_name = "IF", required_unless_present = "udp_more")]
    dev: Option<String>,
    /// ipv4-tcp, ipv4-udp, ipv4-icmp, ipv4-gre, ipv6-tcp, ipv6-udp, ipv6-icmp, arp or other
    #[arg(long, value_name = "K", required_unless_present = "udp_more")]
    kind: Option<String>,
    /// Frames to send
    #[arg(long, value_name = "N", default_value_t = 1)]
    count: u32,
    /// Send for S seconds, as fast as the interface takes them, rather than N frames
    #[arg(long, value_name = "S")]
    secs: Option<u64>,
    /// Flows the frames are spread over
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    flows: u32,
    /// Frame length without FCS, 60 to 16000 (default: 60, or the headers if longer)
    #[arg(long, value_name = "L", value_parser = parse_len)]
    len: Option<usize>,
    /// Destination MAC (default: broadcast)
    #[arg(long, value_name = "MAC", value_parser = parse_mac)]
    dmac: Option<[u8; 6]>,
    /// Insert an 802.1Q tag, VLAN 10, with this priority (0-7)
    #[arg(long, value_name = "PCP", value_parser = clap::value_parser!(u8).range(0..8))]
    vlan: Option<u8>,
    /// Send the whole frame through a SOCK_RAW packet socket
    #[arg(long)]
    raw: bool,
    /// Send UDP datagrams built from two writes each to IPV4:PORT instead
    #[arg(long, value_name = "IPV4:PORT")]
    udp_more: Option<std::net::SocketAddrV4>,
}

impl From<Cli> for Args {
    fn from(c: Cli) -> Self {
        Args {
            dev: c.dev.unwrap_or_default(),
            kind: c.kind.unwrap_or_default(),
            count: c.count,
            flows: c.flows,
            len: c.len,
            dmac: c.dmac.unwrap_or([0xff; 6]),
            vlan: c.vlan,
            raw: c.raw,
            secs: c.secs,
            udp_more: c.udp_more,
        }
    }
}

/// The frame of flow `flow`: Ethernet header (and tag), then the kind's headers, zero-filled
/// to `len` bytes.
fn frame(a: &Args, smac: &[u8; 6], flow: u32) -> Result<Vec<u8>, String> {
    let mut f = Vec::with_capacity(a.len.unwrap_or(60));
    f.extend_from_slice(&a.dmac);
    f.extend_from_slice(smac);
    if let Some(pcp) = a.vlan {
        f.extend_from_slice(&0x8100u16.to_be_bytes());
        f.extend_from_slice(&((u16::from(pcp) << 13) | 10).to_be_bytes());
    }
    let low = (flow & 0xff) as u8;
    let port = 10000u16.wrapping_add(flow as u16);
    let l4 = |f: &mut Vec<u8>, proto: u8| {
        if proto == 6 || proto == 17 {
            f.extend_from_slice(&port.to_be_bytes());
            f.extend_from_slice(&5201u16.to_be_bytes());
        }
    };
    let ipv4 = |f: &mut Vec<u8>, proto: u8| {
        f.extend_from_slice(&0x0800u16.to_be_bytes());
        // The total length is set once the frame has its length (fix_ip_len).
        f.extend_from_slice(&[0x45, 0, 0, 0]);
        f.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
        f.extend_from_slice(&[10, 13, 0, low, 10, 13, 1, 1]);
        l4(f, proto);
    };
    let ipv6 = |f: &mut Vec<u8>, proto: u8| {
        f.extend_from_slice(&0x86ddu16.to_be_bytes());
        // The payload length is set once the frame has its length (fix_ip_len).
        f.extend_from_slice(&[0x60, 0, 0, 0, 0, 0]);
        f.extend_from_slice(&[proto, 64]);
        f.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, low]);
        f.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
        l4(f, proto);
    };
    match a.kind.as_str() {
        "ipv4-tcp" => ipv4(&mut f, 6),
        "ipv4-udp" => ipv4(&mut f, 17),
        "ipv4-icmp" => ipv4(&mut f, 1),
        "ipv4-gre" => ipv4(&mut f, 47),
        "ipv6-tcp" => ipv6(&mut f, 6),
        "ipv6-udp" => ipv6(&mut f, 17),
        "ipv6-icmp" => ipv6(&mut f, 58),
        "arp" => {
            f.extend_from_slice(&0x0806u16.to_be_bytes());
            f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
            f.extend_from_slice(smac);
            f.extend_from_slice(&[10, 13, 0, low, 0, 0, 0, 0, 0, 0, 10, 13, 1, 1]);
        }
        "other" => {
            f.extend_from_slice(&0x88b5u16.to_be_bytes());
            f.extend_from_slice(&flow.to_be_bytes());
        }
        k => return Err(format!("unknown kind '{k}'")),
    }
    let len = match a.len {
        Some(l) if f.len() > l => return Err(format!("--len {l} is too short for {}", a.kind)),
        Some(l) => l,
        None => f.len().max(60),
    };
    f.resize(len, 0);
    fix_ip_len(&mut f);
    Ok(f)
}

/// Sets the IPv4 total length or the IPv6 payload length of `f` to the bytes that follow.
fn fix_ip_len(f: &mut [u8]) {
    let at = if f.get(12..14) == Some(&[0x81, 0x00]) {
        16
    } else {
        12
    };
    let n = f.len();
    match f.get(at..at + 2) {
        Some([0x08, 0x00]) => {
            let total = (n - at - 2) as u16;
            f[at + 4..at + 6].copy_from_slice(&total.to_be_bytes());
        }
        Some([0x86, 0xdd]) => {
            let payload = (n - at - 2 - 40) as u16;
            f[at + 6..at + 8].copy_from_slice(&payload.to_be_bytes());
        }
        _ => {}
    }
}

fn run(a: &Args) -> Result<(), String> {
    let name = CString::new(a.dev.as_str()).map_err(|_| "bad interface name")?;
    // SAFETY: `name` is a valid C string.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        return Err(format!("{}: no such interface", a.dev));
    }
    let smac = std::fs::read_to_string(format!("/sys/class/net/{}/address", a.dev))
        .ok()
        .and_then(|s| parse_mac(s.trim()).ok())
        .ok_or_else(|| format!("{}: cannot read its MAC", a.dev))?;
    let kind = if a.raw {
        libc::SOCK_RAW
    } else {
        libc::SOCK_DGRAM
    };
    // SAFETY: plain socket call; protocol 0: the socket only sends.
    let fd = unsafe { libc::socket(libc::AF_PACKET, kind, 0) };
    if fd < 0 {
        return Err(format!(
            "packet socket: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: all-zero is a valid `sockaddr_ll`.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_ifindex = ifindex as i32;
    sll.sll_halen = 6;
    sll.sll_addr[..6].copy_from_slice(&a.dmac);
    let mut sent = 0u64;
    let mut full = 0u64;
    let deadline = a
        .secs
        .map(|s| std::time::Instant::now() + std::time::Duration::from_secs(s));
    let frames = (0..a.flows)
        .map(|flow| frame(a, &smac, flow))
        .collect::<Result<Vec<_>, _>>()?;
    let mut i = 0u64;
    loop {
        match deadline {
            Some(d) if i % 256 == 0 && std::time::Instant::now() >= d => break,
            None if i >= u64::from(a.count) => break,
            _ => {}
        }
        let frame = &frames[(i % u64::from(a.flows)) as usize];
        i += 1;
        // A datagram socket is given the frame after its Ethernet header, and the ethertype
        // (802.1Q for a tagged frame: the tag then starts the payload).
        let f = if a.raw {
            &frame[..]
        } else {
            sll.sll_protocol = u16::from_be_bytes([frame[12], frame[13]]).to_be();
            &frame[14..]
        };
        // SAFETY: `f` and `sll` are valid for the call, with their lengths.
        let n = unsafe {
            libc::sendto(
                fd,
                f.as_ptr().cast(),
                f.len(),
                0,
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if n != f.len() as isize {
            let e = std::io::Error::last_os_error();
            if deadline.is_some() && e.raw_os_error() == Some(libc::ENOBUFS) {
                // The queue is full: let the device drain it.
                full += 1;
                std::thread::yield_now();
                continue;
            }
            // SAFETY: `fd` is ours.
            unsafe { libc::close(fd) };
            return Err(format!("{}: frame {}: {e}", a.dev, i - 1));
        }
        sent += 1;
    }
    if deadline.is_some() {
        println!("vnic-send: queue full {full} time(s)");
    }
    // SAFETY: `fd` is ours.
    unsafe { libc::close(fd) };
    println!("vnic-send: {sent} {} frame(s) on {}", a.kind, a.dev);
    Ok(())
}

/// `--udp-more`: `count` UDP datagrams of `len` bytes of payload (default 1000), each written
/// in two parts, the first with `MSG_MORE`: the kernel appends the second to the first's
/// buffer, in page fragments when the interface offers scatter-gather, so the frame reaches
/// the driver with only its headers and the first part in the linear area.
fn run_udp_more(a: &Args, to: std::net::SocketAddrV4) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    // Not connected: an ICMP port unreachable from the peer (nothing listens) must not fail
    // the next write.
    let sock = std::net::UdpSocket::bind("0.0.0.0:0").map_err(|e| format!("UDP socket: {e}"))?;
    // SAFETY: all-zero is a valid `sockaddr_in`.
    let mut sin: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    sin.sin_family = libc::AF_INET as u16;
    sin.sin_port = to.port().to_be();
    sin.sin_addr.s_addr = u32::from(*to.ip()).to_be();
    let len = a.len.unwrap_or(1000);
    let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
    let (first, rest) = payload.split_at(8.min(len));
    for i in 0..a.count {
        for (part, flags) in [(first, libc::MSG_MORE), (rest, 0)] {
            // SAFETY: `part` and `sin` are valid for the call, with their lengths.
            let n = unsafe {
                libc::sendto(
                    sock.as_raw_fd(),
                    part.as_ptr().cast(),
                    part.len(),
                    flags,
                    (&sin as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as u32,
                )
            };
            if n != part.len() as isize {
                let e = std::io::Error::last_os_error();
                return Err(format!("datagram {i} to {to}: {e}"));
            }
        }
    }
    println!(
        "vnic-send: {} UDP datagram(s) of {len} bytes in two writes to {to}",
        a.count
    );
    Ok(())
}

fn main() -> ExitCode {
    let a = Args::from(Cli::parse());
    match match a.udp_more {
        Some(to) => run_udp_more(&a, to),
        None => run(&a),
    } {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vnic-send: {e}");
            ExitCode::FAILURE
        }
    }
}
