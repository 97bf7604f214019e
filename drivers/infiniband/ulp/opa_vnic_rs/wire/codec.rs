// SPDX-License-Identifier: GPL-2.0

//! Checked byte cursors and the big-endian field codec the MAD structures
//! are built from.
//!
//! Nothing here can panic: every access goes through `get`, every offset
//! through checked arithmetic.

use super::error::WireError;

/// A cursor over an input buffer; each read checks the bounds.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub(crate) const fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// The next `N` bytes, or [`WireError::Truncated`].
    #[inline]
    pub(crate) fn take<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let end = self.pos.checked_add(N).ok_or(WireError::Truncated)?;
        let bytes = self.buf.get(self.pos..end).ok_or(WireError::Truncated)?;
        let out: [u8; N] = bytes.try_into().map_err(|_| WireError::Truncated)?;
        self.pos = end;
        Ok(out)
    }

    /// The next `n` bytes, or [`WireError::Truncated`].
    #[inline]
    pub(crate) fn take_slice(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self.pos.checked_add(n).ok_or(WireError::Truncated)?;
        let bytes = self.buf.get(self.pos..end).ok_or(WireError::Truncated)?;
        self.pos = end;
        Ok(bytes)
    }
}

/// A cursor over an output buffer; each write checks the bounds.
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    /// A writer at the start of `buf`.
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    /// Writes `bytes` at the cursor, or fails with [`WireError::NoSpace`].
    #[inline]
    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), WireError> {
        let end = self
            .pos
            .checked_add(bytes.len())
            .ok_or(WireError::NoSpace)?;
        let dst = self.buf.get_mut(self.pos..end).ok_or(WireError::NoSpace)?;
        dst.copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }

    /// The next `n` bytes to write, or [`WireError::NoSpace`].
    #[inline]
    pub(crate) fn put_slice(&mut self, n: usize) -> Result<&mut [u8], WireError> {
        let end = self.pos.checked_add(n).ok_or(WireError::NoSpace)?;
        let dst = self.buf.get_mut(self.pos..end).ok_or(WireError::NoSpace)?;
        self.pos = end;
        Ok(dst)
    }
}

/// The `N` bytes at `AT` of a structure of `S` bytes kept in its wire form (constants: the
/// compiler drops the bounds check; zeros past the end, which no caller reaches).
#[inline(always)]
pub(crate) fn get_at<const AT: usize, const N: usize, const S: usize>(b: &[u8; S]) -> [u8; N] {
    match b.get(AT..).and_then(|s| s.first_chunk::<N>()) {
        Some(a) => *a,
        None => [0; N],
    }
}

/// Writes `v` at `AT` of a structure of `S` bytes kept in its wire form.
#[inline(always)]
pub(crate) fn put_at<const AT: usize, const N: usize, const S: usize>(b: &mut [u8; S], v: [u8; N]) {
    if let Some(d) = b.get_mut(AT..).and_then(|s| s.first_chunk_mut::<N>()) {
        *d = v;
    }
}

/// A value with a fixed-size big-endian wire form.
pub(crate) trait Field: Sized {
    /// Bytes on the wire.
    const SIZE: usize;
    /// The all-zero value.
    const ZERO: Self;
    /// Reads the value at the cursor.
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError>;
    /// Writes the value at the cursor.
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError>;
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            const ZERO: Self = 0;
            #[inline]
            fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
                Ok(<$t>::from_be_bytes(r.take()?))
            }
            #[inline]
            fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
                w.put(&self.to_be_bytes())
            }
        }
    )*};
}
int_field!(u8, u16, u32, u64);

macro_rules! array_field {
    ($($t:ty),*) => {$(
        /// One bounds check for the whole array, then each element from its own bytes.
        impl<const N: usize> Field for [$t; N] {
            const SIZE: usize = core::mem::size_of::<[$t; N]>();
            const ZERO: Self = [0; N];
            #[inline(always)]
            fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
                const W: usize = core::mem::size_of::<$t>();
                let bytes = r.take_slice(Self::SIZE)?;
                let mut out = [0; N];
                for (v, b) in out.iter_mut().zip(bytes.chunks_exact(W)) {
                    let mut a = [0u8; W];
                    a.copy_from_slice(b);
                    *v = <$t>::from_be_bytes(a);
                }
                Ok(out)
            }
            #[inline(always)]
            fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
                const W: usize = core::mem::size_of::<$t>();
                let dst = w.put_slice(Self::SIZE)?;
                for (v, d) in self.iter().zip(dst.chunks_exact_mut(W)) {
                    d.copy_from_slice(&v.to_be_bytes());
                }
                Ok(())
            }
        }
    )*};
}
array_field!(u32, u64);

/// Bytes go as they are, with one bounds check and one copy for the whole array (a VEMA Set
/// carries arrays of up to 56 reserved bytes, read and written back on every Set).
impl<const N: usize> Field for [u8; N] {
    const SIZE: usize = N;
    const ZERO: Self = [0; N];
    #[inline]
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.take()
    }
    #[inline]
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.put(self)
    }
}

/// Defines a fixed-size wire structure: a plain struct of public fields in
/// wire order, with `SIZE`, `ZERO`, `decode`, `encode` and `to_bytes`.
/// Multi-byte integers are big-endian on the wire, as in every MAD.
macro_rules! wire_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $name {
            /// Size of the structure on the wire, in bytes.
            pub const SIZE: usize = 0 $( + <$ty as Field>::SIZE )*;

            /// The structure with every field (reserved ones too) zero.
            pub const ZERO: Self = Self { $( $field: <$ty as Field>::ZERO, )* };

            /// Decodes the structure from the first [`Self::SIZE`] bytes of
            /// `buf`; bytes after them are ignored.
            // Inlined, so that the value is built where its caller keeps it, not built and
            // then moved (a VEMA Set decodes a 280-byte one).
            #[inline]
            pub fn decode(buf: &[u8]) -> Result<Self, WireError> {
                if buf.len() < Self::SIZE {
                    return Err(WireError::Truncated);
                }
                let mut r = Reader::new(buf);
                <Self as Field>::read(&mut r)
            }

            /// Encodes the structure into the first [`Self::SIZE`] bytes of
            /// `buf`; bytes after them are left alone.
            pub fn encode(&self, buf: &mut [u8]) -> Result<(), WireError> {
                if buf.len() < Self::SIZE {
                    return Err(WireError::NoSpace);
                }
                let mut w = Writer::new(buf);
                <Self as Field>::write(self, &mut w)
            }

            /// The wire form as an array.
            pub fn to_bytes(&self) -> [u8; Self::SIZE] {
                let mut out = [0u8; Self::SIZE];
                // Cannot fail: the array is exactly SIZE bytes.
                let _ = self.encode(&mut out);
                out
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::ZERO
            }
        }

        impl Field for $name {
            const SIZE: usize = $name::SIZE;
            const ZERO: Self = $name::ZERO;
            // The structure's bytes are taken with one bounds check, and its fields read from
            // them: at constant offsets into a slice of constant length, whose checks the
            // compiler removes (a VEMA Set decodes and encodes these on every request).
            // Always inlined, down to the integers: only then are the offsets constants.
            #[inline(always)]
            fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
                let mut r = Reader::new(r.take_slice(Self::SIZE)?);
                Ok(Self { $( $field: <$ty as Field>::read(&mut r)?, )* })
            }
            #[inline(always)]
            fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
                let mut w = Writer::new(w.put_slice(Self::SIZE)?);
                $( <$ty as Field>::write(&self.$field, &mut w)?; )*
                Ok(())
            }
        }
    };
}
