// SPDX-License-Identifier: GPL-2.0

//! VEMA MAC attributes: the MAC table entries (with the table digest) and
//! the interface unicast and multicast MAC lists.

use super::codec::{Field, Reader, Writer};
use super::error::WireError;
use super::mad::OPA_VNIC_EMA_DATA;
use super::vema_info::MAC_TBL_MAX_ENTRIES;

/// Ethernet address length.
pub const ETH_ALEN: usize = 6;

wire_struct! {
    /// One MAC table entry (`struct opa_veswport_mactable_entry`), 16 bytes.
    pub struct MacTableEntry {
        /// MAC address; all zero on Set removes the entry.
        mac_addr: [u8; ETH_ALEN],
        /// MAC address mask (stored and returned; lookups ignore it).
        mac_addr_mask: [u8; ETH_ALEN],
        /// DLID in bits 8-31, side data in bits 0-7 (bit 5: source MAC
        /// entry).
        dlid_sd: u32,
    }
}

wire_struct! {
    /// Header of the MAC table entries attribute (`struct
    /// opa_veswport_mactable` up to its entries), 8 bytes.
    pub struct MacTableHdr {
        /// Index of the first entry.
        offset: u16,
        /// Number of entries that follow (Set) or are asked for (Get).
        num_entries: u16,
        /// MAC table digest: an opaque value the EM sets with the entries
        /// and reads back; the driver stores it and returns it, and zeroes
        /// it when the table is released.
        mac_tbl_digest: u32,
    }
}

const _: () = assert!(MacTableEntry::SIZE == 16);
const _: () = assert!(MacTableHdr::SIZE == 8);

/// MAC table entries one MAD carries: (2008 - 8) / 16 = 125.
pub const MAC_TBL_ENTRIES_PER_MAD: u16 =
    ((OPA_VNIC_EMA_DATA - MacTableHdr::SIZE) / MacTableEntry::SIZE) as u16;
const _: () = assert!(MAC_TBL_ENTRIES_PER_MAD == 125);

/// Side data bit of a source MAC entry (`OPA_VNIC_DLID_SD_IS_SRC_MAC`).
pub const DLID_SD_SRC_MAC: u32 = 0x20;

impl MacTableEntry {
    /// Whether the entry is a source MAC entry (side data bit 5); such
    /// entries never give a destination.
    #[inline]
    pub const fn is_src_mac(&self) -> bool {
        self.dlid_sd & DLID_SD_SRC_MAC != 0
    }

    /// The DLID (`OPA_VNIC_DLID_SD_GET_DLID`, bits 8-31).
    #[inline]
    pub const fn dlid(&self) -> u32 {
        self.dlid_sd >> 8
    }

    /// Whether a Set with this entry removes the slot (all-zero MAC).
    pub const fn is_delete(&self) -> bool {
        let m = self.mac_addr;
        m[0] == 0 && m[1] == 0 && m[2] == 0 && m[3] == 0 && m[4] == 0 && m[5] == 0
    }

    /// The lookup of `opa_vnic_chk_mac_tbl()` for one entry: the DLID when
    /// the entry is not a source MAC entry and its address equals `dmac`
    /// exactly (the mask is not applied). A DLID of 0 means no match to
    /// the caller, as in C.
    #[inline]
    pub const fn lookup(&self, dmac: &[u8; ETH_ALEN]) -> Option<u32> {
        if self.is_src_mac() {
            return None;
        }
        let m = self.mac_addr;
        if m[0] == dmac[0]
            && m[1] == dmac[1]
            && m[2] == dmac[2]
            && m[3] == dmac[3]
            && m[4] == dmac[4]
            && m[5] == dmac[5]
        {
            Some(self.dlid())
        } else {
            None
        }
    }
}

impl MacTableHdr {
    /// The range check of `vema_mac_tbl_req_ok()`: at most
    /// [`MAC_TBL_ENTRIES_PER_MAD`] entries and `offset + num_entries <=`
    /// [`MAC_TBL_MAX_ENTRIES`]. Both errors answer
    /// `MAD_STATUS_INVALID_ATTRIB_VALUE` (for a Set too: the C Set handler
    /// first sets 0x000c, then its trailing Get overrides it with 0x001c).
    pub const fn check_req(&self) -> Result<(), WireError> {
        if self.num_entries > MAC_TBL_ENTRIES_PER_MAD {
            return Err(WireError::TooManyEntries(self.num_entries));
        }
        if (self.offset as u32).wrapping_add(self.num_entries as u32) > MAC_TBL_MAX_ENTRIES as u32 {
            return Err(WireError::OffsetOutOfRange {
                offset: self.offset,
                num_entries: self.num_entries,
            });
        }
        Ok(())
    }

    /// Whether table index `index` lies in this request's window.
    pub const fn covers(&self, index: u16) -> bool {
        index >= self.offset
            && (index as u32) < (self.offset as u32).wrapping_add(self.num_entries as u32)
    }
}

/// A MAC table entries attribute: the header and its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacTable<'a> {
    /// The header.
    pub hdr: MacTableHdr,
    entries: &'a [u8],
}

impl<'a> MacTable<'a> {
    /// Decodes the attribute data: the header, the range check
    /// ([`MacTableHdr::check_req`]) and `num_entries` entries, which must
    /// be present. For a Get request, whose entries are not read, decode
    /// only the [`MacTableHdr`].
    pub fn decode(data: &'a [u8]) -> Result<Self, WireError> {
        let hdr = MacTableHdr::decode(data)?;
        hdr.check_req()?;
        let len = usize::from(hdr.num_entries)
            .checked_mul(MacTableEntry::SIZE)
            .ok_or(WireError::Truncated)?;
        let end = MacTableHdr::SIZE
            .checked_add(len)
            .ok_or(WireError::Truncated)?;
        let entries = data
            .get(MacTableHdr::SIZE..end)
            .ok_or(WireError::Truncated)?;
        Ok(MacTable { hdr, entries })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len() / MacTableEntry::SIZE
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entry `i` (table index `offset + i`), if present.
    pub fn entry(&self, i: usize) -> Option<MacTableEntry> {
        let start = i.checked_mul(MacTableEntry::SIZE)?;
        MacTableEntry::decode(self.entries.get(start..)?).ok()
    }

    /// The entries in order.
    pub fn entries(&self) -> impl Iterator<Item = MacTableEntry> + 'a {
        self.entries
            .chunks_exact(MacTableEntry::SIZE)
            .filter_map(|c| MacTableEntry::decode(c).ok())
    }

    /// Encodes a header and its entries into `out`; `hdr.num_entries` must
    /// equal `entries.len()` and pass the range check. Returns the bytes
    /// written.
    pub fn encode(
        hdr: &MacTableHdr,
        entries: &[MacTableEntry],
        out: &mut [u8],
    ) -> Result<usize, WireError> {
        hdr.check_req()?;
        if usize::from(hdr.num_entries) != entries.len() {
            return Err(WireError::TooManyEntries(hdr.num_entries));
        }
        let mut w = Writer::new(out);
        hdr.write(&mut w)?;
        for e in entries {
            e.write(&mut w)?;
        }
        Ok(MacTableHdr::SIZE.wrapping_add(entries.len().wrapping_mul(MacTableEntry::SIZE)))
    }
}

wire_struct! {
    /// Header of the interface MAC list attributes (`struct
    /// opa_veswport_iface_macs` up to its entries), 8 bytes.
    pub struct IfaceMacsHdr {
        /// Position of the first entry (0 based).
        start_idx: u16,
        /// Number of MACs in this message (Get: asked for, 0 for as many
        /// as fit).
        num_macs_in_msg: u16,
        /// Number of MACs the interface has.
        tot_macs_in_lst: u16,
        /// Generation count of the list.
        gen_count: u16,
    }
}

wire_struct! {
    /// One interface MAC list entry (`struct opa_vnic_iface_mac_entry`),
    /// 6 bytes.
    pub struct IfaceMacEntry {
        /// MAC address.
        mac_addr: [u8; ETH_ALEN],
    }
}

const _: () = assert!(IfaceMacsHdr::SIZE == 8);
const _: () = assert!(IfaceMacEntry::SIZE == 6);

/// MAC list entries one MAD carries: (2008 - 8) / 6 = 333.
pub const IFACE_MACS_PER_MAD: u16 = ((OPA_VNIC_EMA_DATA - IfaceMacsHdr::SIZE) / ETH_ALEN) as u16;
const _: () = assert!(IFACE_MACS_PER_MAD == 333);

impl IfaceMacsHdr {
    /// How many MACs a Get answers at most: `num_macs_in_msg`, or
    /// [`IFACE_MACS_PER_MAD`] when it is 0 (`vema_get_mac_list()`).
    /// Unlike C, a count above [`IFACE_MACS_PER_MAD`] is capped: C would
    /// write past the MAD when the interface has that many addresses.
    pub const fn req_count(&self) -> u16 {
        if self.num_macs_in_msg == 0 || self.num_macs_in_msg > IFACE_MACS_PER_MAD {
            IFACE_MACS_PER_MAD
        } else {
            self.num_macs_in_msg
        }
    }
}

/// An interface MAC list attribute: the header and its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IfaceMacs<'a> {
    /// The header.
    pub hdr: IfaceMacsHdr,
    entries: &'a [u8],
}

impl<'a> IfaceMacs<'a> {
    /// Decodes the attribute data (as in a Get response): the header and
    /// `num_macs_in_msg` entries, at most [`IFACE_MACS_PER_MAD`], which must
    /// be present.
    pub fn decode(data: &'a [u8]) -> Result<Self, WireError> {
        let hdr = IfaceMacsHdr::decode(data)?;
        if hdr.num_macs_in_msg > IFACE_MACS_PER_MAD {
            return Err(WireError::TooManyEntries(hdr.num_macs_in_msg));
        }
        let len = usize::from(hdr.num_macs_in_msg)
            .checked_mul(ETH_ALEN)
            .ok_or(WireError::Truncated)?;
        let end = IfaceMacsHdr::SIZE
            .checked_add(len)
            .ok_or(WireError::Truncated)?;
        let entries = data
            .get(IfaceMacsHdr::SIZE..end)
            .ok_or(WireError::Truncated)?;
        Ok(IfaceMacs { hdr, entries })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len() / ETH_ALEN
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entry `i`, if present.
    pub fn entry(&self, i: usize) -> Option<[u8; ETH_ALEN]> {
        let start = i.checked_mul(ETH_ALEN)?;
        let end = start.checked_add(ETH_ALEN)?;
        self.entries.get(start..end)?.try_into().ok()
    }

    /// The entries in order.
    pub fn entries(&self) -> impl Iterator<Item = [u8; ETH_ALEN]> + 'a {
        self.entries
            .chunks_exact(ETH_ALEN)
            .filter_map(|c| c.try_into().ok())
    }

    /// Builds a Get response into `out`, as the C query functions do: the
    /// addresses of `addrs` from position `req.start_idx` on, at most
    /// [`IfaceMacsHdr::req_count`] of them; `tot_macs_in_lst` counts all of
    /// `addrs`. Pass the unicast list without the EM-set base MAC (C skips
    /// it before counting positions). Returns the header written; the
    /// bytes written are `8 + 6 * num_macs_in_msg`.
    pub fn encode_response<I>(
        req: &IfaceMacsHdr,
        addrs: I,
        gen_count: u16,
        out: &mut [u8],
    ) -> Result<IfaceMacsHdr, WireError>
    where
        I: IntoIterator<Item = [u8; ETH_ALEN]>,
    {
        let want = req.req_count();
        let mut count: u16 = 0;
        let mut total: u16 = 0;
        let mut w = Writer::new(
            out.get_mut(IfaceMacsHdr::SIZE..)
                .ok_or(WireError::NoSpace)?,
        );
        for (idx, mac) in addrs.into_iter().enumerate() {
            total = total.wrapping_add(1);
            if idx < usize::from(req.start_idx) || count >= want {
                continue;
            }
            w.put(&mac)?;
            count = count.wrapping_add(1);
        }
        let hdr = IfaceMacsHdr {
            start_idx: req.start_idx,
            num_macs_in_msg: count,
            tot_macs_in_lst: total,
            gen_count,
        };
        hdr.encode(out)?;
        Ok(hdr)
    }
}
