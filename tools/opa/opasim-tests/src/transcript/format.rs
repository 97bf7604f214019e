// SPDX-License-Identifier: GPL-2.0

//! The binary format of a transcript: header, records, and what came of each request.

use std::io::{self, Read, Write};

/// The first bytes of a transcript (the last one is the format's version).
pub const MAGIC: [u8; 8] = *b"VEMAFUZ\x01";

/// What a run was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The generator's seed.
    pub seed: u64,
    /// Requests the run meant to send.
    pub count: u64,
    /// How long each request waited for its answer, in milliseconds.
    pub timeout_ms: u32,
}

/// What came of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// An answer: its length and its bytes (upper half of the TID zeroed, trailing zeros
    /// left out).
    Answered {
        /// Length of the answer.
        len: u32,
        /// The answer up to its last non-zero byte.
        bytes: Vec<u8>,
    },
    /// Nothing within the timeout (the MAD layer said so).
    Unanswered,
    /// umad's write refused the request, with this errno (the same for both drivers: the
    /// request never left).
    Refused(i32),
    /// Neither an answer nor umad's time-out notice arrived (a MAD lost on the way).
    Lost,
    /// Not sent: a skip rule of the run matched it.
    Skipped,
}

impl Outcome {
    /// An answer as read, with the upper half of the TID zeroed and trailing zeros dropped.
    pub fn answered(mad: &[u8]) -> Self {
        let mut bytes = mad.to_vec();
        if let Some(tid_hi) = bytes.get_mut(8..12) {
            tid_hi.fill(0);
        }
        let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        bytes.truncate(end);
        Outcome::Answered {
            len: mad.len() as u32,
            bytes,
        }
    }

    /// The MAD status of an answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            Outcome::Answered { len, bytes } if *len >= 6 => Some(u16::from_be_bytes([
                bytes.get(4).copied().unwrap_or(0),
                bytes.get(5).copied().unwrap_or(0),
            ])),
            _ => None,
        }
    }

    /// Byte `i` of an answer (zero past what is stored).
    pub(super) fn byte(&self, i: usize) -> u8 {
        match self {
            Outcome::Answered { bytes, .. } => bytes.get(i).copied().unwrap_or(0),
            _ => 0,
        }
    }

    /// The kind of outcome, as allow rules name it.
    pub const fn kind(&self) -> &'static str {
        match self {
            Outcome::Answered { .. } => "answered",
            Outcome::Unanswered => "unanswered",
            Outcome::Refused(_) => "refused",
            Outcome::Lost => "lost",
            Outcome::Skipped => "skipped",
        }
    }

    /// A short description: kind, length and status.
    pub fn summary(&self) -> String {
        match self {
            Outcome::Answered { len, .. } => match self.status() {
                Some(s) => format!("answered, {len} bytes, status {s:#06x}"),
                None => format!("answered, {len} bytes"),
            },
            Outcome::Unanswered => "no answer in time".into(),
            Outcome::Refused(e) => format!("refused by umad (errno {e})"),
            Outcome::Lost => "no answer and no time-out notice".into(),
            Outcome::Skipped => "not sent (skipped)".into(),
        }
    }
}

/// One request's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The request's index.
    pub index: u64,
    /// What came of it.
    pub outcome: Outcome,
}

/// Writes the header of a transcript.
pub fn write_header<W: Write>(w: &mut W, h: &Header) -> io::Result<()> {
    w.write_all(&MAGIC)?;
    w.write_all(&h.seed.to_le_bytes())?;
    w.write_all(&h.count.to_le_bytes())?;
    w.write_all(&h.timeout_ms.to_le_bytes())
}

/// Writes one record.
pub fn write_record<W: Write>(w: &mut W, r: &Record) -> io::Result<()> {
    let (kind, code, len, bytes): (u8, i32, u32, &[u8]) = match &r.outcome {
        Outcome::Answered { len, bytes } => (0, 0, *len, bytes),
        Outcome::Unanswered => (1, 0, 0, &[]),
        Outcome::Refused(e) => (2, *e, 0, &[]),
        Outcome::Lost => (3, 0, 0, &[]),
        Outcome::Skipped => (4, 0, 0, &[]),
    };
    w.write_all(&r.index.to_le_bytes())?;
    w.write_all(&[kind])?;
    w.write_all(&code.to_le_bytes())?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&(bytes.len() as u32).to_le_bytes())?;
    w.write_all(bytes)
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

fn read_array<const N: usize, R: Read>(r: &mut R) -> io::Result<[u8; N]> {
    let mut b = [0u8; N];
    r.read_exact(&mut b)?;
    Ok(b)
}

/// Reads a whole transcript. A run cut short (the guest died, the tool was killed) leaves
/// a truncated last record, which is dropped: the records before it still compare.
pub fn read<R: Read>(r: &mut R) -> io::Result<(Header, Vec<Record>)> {
    if read_array::<8, _>(r)? != MAGIC {
        return Err(bad("not a vema-fuzz transcript"));
    }
    let h = Header {
        seed: u64::from_le_bytes(read_array(r)?),
        count: u64::from_le_bytes(read_array(r)?),
        timeout_ms: u32::from_le_bytes(read_array(r)?),
    };
    let mut recs = Vec::new();
    loop {
        let mut idx = [0u8; 8];
        match r.read_exact(&mut idx) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e),
        }
        let rec = (|| -> io::Result<Record> {
            let [kind] = read_array::<1, _>(r)?;
            let code = i32::from_le_bytes(read_array(r)?);
            let len = u32::from_le_bytes(read_array(r)?);
            let stored = u32::from_le_bytes(read_array(r)?);
            if stored > len || stored > 1 << 16 {
                return Err(bad("corrupt record"));
            }
            let mut bytes = vec![0u8; stored as usize];
            r.read_exact(&mut bytes)?;
            let outcome = match kind {
                0 => Outcome::Answered { len, bytes },
                1 => Outcome::Unanswered,
                2 => Outcome::Refused(code),
                3 => Outcome::Lost,
                4 => Outcome::Skipped,
                _ => return Err(bad("corrupt record")),
            };
            Ok(Record {
                index: u64::from_le_bytes(idx),
                outcome,
            })
        })();
        match rec {
            Ok(rec) => recs.push(rec),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e),
        }
    }
    Ok((h, recs))
}
