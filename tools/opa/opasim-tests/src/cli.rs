// SPDX-License-Identifier: GPL-2.0

//! What the programs' command lines share: numbers written in decimal or in hex with `0x`.

/// A number in decimal or, with `0x`, in hex, that fits a `T`; a value parser for clap.
pub fn num<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .ok()
    .and_then(|v| T::try_from(v).ok())
    .ok_or_else(|| format!("bad number '{s}'"))
}

/// A number as [`num`] takes it, but not 0 (a LID, an attribute id).
pub fn nonzero<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    match num::<u64>(s)? {
        0 => Err("0 is not allowed".into()),
        v => T::try_from(v).map_err(|_| format!("bad number '{s}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::{nonzero, num};

    #[test]
    fn numbers() {
        assert_eq!(num::<u16>("0x8001"), Ok(0x8001));
        assert_eq!(num::<u16>("12"), Ok(12));
        assert_eq!(num::<u8>("256"), Err("bad number '256'".into()));
        assert!(num::<u32>("0x").is_err());
        assert!(num::<u32>("-1").is_err());
        assert_eq!(nonzero::<u16>("0x1"), Ok(1));
        assert!(nonzero::<u16>("0").is_err());
        assert!(nonzero::<u16>("0x10000").is_err());
    }
}
