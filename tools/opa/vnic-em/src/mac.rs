// SPDX-License-Identifier: GPL-2.0

//! Ethernet MAC addresses as the EM reads and prints them.

use core::fmt;
use core::str::FromStr;

use opa_wire::vema_mac::ETH_ALEN;

/// An Ethernet MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Mac(pub [u8; ETH_ALEN]);

impl Mac {
    /// The all-ones mask (`ff:ff:ff:ff:ff:ff`).
    pub const ALL_ONES: Mac = Mac([0xff; ETH_ALEN]);

    /// Whether every byte is zero (a MAC table Set with it removes the
    /// slot; it is never a valid address).
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&b| b == 0)
    }

    /// Whether the group bit (bit 0 of the first byte) is set.
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 1 != 0
    }

    /// Why this address cannot be a vport's base MAC nor the address of a
    /// MAC table entry, or `None` if it can: the one check of the config
    /// file and of `set --mac`/`--mac-entry`. The driver sends every
    /// multicast frame (broadcast too) to the vesw's multicast DLID and
    /// never looks one up in the MAC table, and a netdev cannot have one
    /// as its own address.
    pub fn unicast_problem(&self) -> Option<String> {
        if self.is_zero() {
            Some(format!("{self} is all zeros, not an address"))
        } else if *self == Mac::ALL_ONES {
            Some(format!(
                "{self} is the broadcast address: give a unicast address \
                 (broadcast goes to the vesw's unknown_mcast_dlid)"
            ))
        } else if self.is_multicast() {
            Some(format!(
                "{self} is a multicast address (the low bit of its first byte is set): \
                 give a unicast address (multicast goes to the vesw's unknown_mcast_dlid)"
            ))
        } else {
            None
        }
    }
}

/// A unicast MAC given on the command line (`set --mac`): parsed, then
/// checked by [`Mac::unicast_problem`], as the config file's are.
pub fn parse_unicast(s: &str) -> Result<Mac, String> {
    let m: Mac = s.parse().map_err(|e: MacParseError| e.to_string())?;
    match m.unicast_problem() {
        Some(p) => Err(p),
        None => Ok(m),
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

/// Why a string is not a MAC address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacParseError(pub String);

impl fmt::Display for MacParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid MAC address {:?}: expected six hex bytes like 02:00:5e:10:00:01",
            self.0
        )
    }
}

impl std::error::Error for MacParseError {}

impl FromStr for Mac {
    type Err = MacParseError;

    /// Six hex bytes separated by `:` or `-` (one or two digits each).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || MacParseError(s.to_string());
        let sep = if s.contains('-') { '-' } else { ':' };
        let mut out = [0u8; ETH_ALEN];
        let mut n = 0usize;
        for part in s.split(sep) {
            if part.is_empty() || part.len() > 2 || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(err());
            }
            let slot = out.get_mut(n).ok_or_else(err)?;
            *slot = u8::from_str_radix(part, 16).map_err(|_| err())?;
            n += 1;
        }
        if n != ETH_ALEN {
            return Err(err());
        }
        Ok(Mac(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        let m: Mac = "02:00:5E:10:00:01".parse().unwrap();
        assert_eq!(m.0, [0x02, 0x00, 0x5e, 0x10, 0x00, 0x01]);
        assert_eq!(m.to_string(), "02:00:5e:10:00:01");
        let d: Mac = "2-0-5e-10-0-1".parse().unwrap();
        assert_eq!(d, m);
        assert!(!m.is_multicast());
        assert!("01:00:5e:00:00:01".parse::<Mac>().unwrap().is_multicast());
        assert!(Mac::default().is_zero());
    }

    #[test]
    fn only_unicast_is_an_address() {
        assert_eq!(parse_unicast("02:00:5e:10:00:01").map(|m| m.0[5]), Ok(1));
        for bad in [
            "ff:ff:ff:ff:ff:ff",
            "01:00:5e:00:00:01",
            "33:33:00:00:00:01",
            "0:0:0:0:0:0",
        ] {
            assert!(parse_unicast(bad).is_err(), "{bad}");
        }
        assert!(parse_unicast("ff:ff:ff:ff:ff:ff")
            .unwrap_err()
            .contains("broadcast"));
    }

    #[test]
    fn parse_rejects() {
        for bad in [
            "",
            "02:00:5e:10:00",
            "02:00:5e:10:00:01:02",
            "02:00:5e:10:00:zz",
            "020:00:5e:10:00:01",
            "02::5e:10:00:01",
            "02:00-5e:10:00:01",
            "02:00:5e:10:00:+1",
        ] {
            assert!(bad.parse::<Mac>().is_err(), "{bad:?} accepted");
        }
    }
}
