// SPDX-License-Identifier: GPL-2.0

//! Multicast group IDs as opafm.xml writes them, and the group a vesw uses when its config
//! names none: text in and out, no request, so the config checks an MGID on its own.

/// The MGID of the multicast group whose MLID a vesw's broadcast and unknown multicast go to,
/// when the config names none: the IPv4 broadcast group of the Default vFabric (P_Key 0x8001),
/// `0xff12401b80010000:0x00000000ffffffff`, which opa-fm's default opafm.xml pre-creates
/// (`<MulticastGroup><Create>1</Create><PKey>0x0001</PKey>` without MGIDs: the implicit IPoIB
/// groups of its `fm_xml.c`, broadcast first).
pub const DEFAULT_MCAST_MGID: [u8; 16] = [
    0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
];

/// An MGID as opafm.xml writes it: two 64-bit hexadecimal numbers and a colon.
pub fn mgid_text(g: &[u8; 16]) -> String {
    let mut hi = [0u8; 8];
    let mut lo = [0u8; 8];
    hi.copy_from_slice(&g[..8]);
    lo.copy_from_slice(&g[8..]);
    format!(
        "{:#018x}:{:#018x}",
        u64::from_be_bytes(hi),
        u64::from_be_bytes(lo)
    )
}

/// Reads an MGID written as opafm.xml writes it (`0xff12401b80010000:0x00000000ffffffff`).
pub fn parse_mgid(s: &str) -> Option<[u8; 16]> {
    let (a, b) = s.split_once(':')?;
    let num = |x: &str| {
        let h = x
            .trim()
            .strip_prefix("0x")
            .or_else(|| x.trim().strip_prefix("0X"))?;
        (!h.is_empty() && h.len() <= 16)
            .then(|| u64::from_str_radix(h, 16).ok())
            .flatten()
    };
    let mut g = [0u8; 16];
    g[..8].copy_from_slice(&num(a)?.to_be_bytes());
    g[8..].copy_from_slice(&num(b)?.to_be_bytes());
    Some(g)
}
