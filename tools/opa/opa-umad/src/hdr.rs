// SPDX-License-Identifier: GPL-2.0

//! `struct ib_user_mad_hdr` (`include/uapi/rdma/ib_user_mad.h`): the
//! 64-byte header before each MAD written to or read from a umad device,
//! in the layout with `pkey_index` that a file uses once an agent was
//! registered on it with `IB_USER_MAD_REGISTER_AGENT2`.
//!
//! ```text
//!  0 id          4 status      8 timeout_ms  12 retries   16 length
//! 20 qpn (BE)   24 qkey (BE)  28 lid (BE)    30 sl        31 path_bits
//! 32 grh_present 33 gid_index 34 hop_limit   35 traffic_class
//! 36 gid[16]    52 flow_label (BE)           56 pkey_index 58 reserved[6]
//! ```
//!
//! The host-order fields are in native byte order (the kernel copies the
//! struct as it is), the network ones big-endian.

/// Size of `struct ib_user_mad_hdr`.
pub const UMAD_HDR_SIZE: usize = 64;

/// The Q_Key of QP1, the GSI.
pub const QP1_QKEY: u32 = 0x8001_0000;

/// The header of a send: what agent sends, where to, and how long the
/// MAD layer waits for the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendHdr {
    /// The agent that sends (and gets the response or the time-out), as
    /// [`crate::Device::register`] returned it.
    pub agent: crate::AgentId,
    /// How long the MAD layer waits for the response, in ms; 0 for a
    /// MAD that takes no response (a response itself, a trap repress).
    /// A request unanswered in that time comes back as a read with
    /// status `ETIMEDOUT`.
    pub timeout_ms: u32,
    /// How often the MAD layer sends the request again when it times out.
    pub retries: u32,
    /// Destination QP.
    pub qpn: u32,
    /// Q_Key of the destination QP.
    pub qkey: u32,
    /// Destination LID (16 bits: the header carries no more).
    pub lid: u16,
    /// Service level.
    pub sl: u8,
    /// Index of the P_Key to send with, in the port's P_Key table.
    pub pkey_index: u16,
}

impl SendHdr {
    /// A send of `agent` to the GSI (QP1, its Q_Key) of `lid`, with the
    /// P_Key at `pkey_index`, SL 0, no time-out and no retries.
    pub const fn gsi(agent: crate::AgentId, lid: u16, pkey_index: u16) -> Self {
        SendHdr {
            agent,
            timeout_ms: 0,
            retries: 0,
            qpn: 1,
            qkey: QP1_QKEY,
            lid,
            sl: 0,
            pkey_index,
        }
    }

    /// The 64 bytes of the header (no GRH).
    pub fn encode(&self) -> [u8; UMAD_HDR_SIZE] {
        let mut h = [0u8; UMAD_HDR_SIZE];
        h[0..4].copy_from_slice(&self.agent.0.to_ne_bytes());
        // 4..8 status, 16..20 length: the kernel's.
        h[8..12].copy_from_slice(&self.timeout_ms.to_ne_bytes());
        h[12..16].copy_from_slice(&self.retries.to_ne_bytes());
        h[20..24].copy_from_slice(&self.qpn.to_be_bytes());
        h[24..28].copy_from_slice(&self.qkey.to_be_bytes());
        h[28..30].copy_from_slice(&self.lid.to_be_bytes());
        h[30] = self.sl;
        // 31 path_bits, 32 grh_present, 33..56 the GRH: none.
        h[56..58].copy_from_slice(&self.pkey_index.to_ne_bytes());
        h
    }
}

/// The header of a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvHdr {
    /// Id of the agent the read is for.
    pub id: u32,
    /// 0 for a received MAD, or an errno (`libc::ETIMEDOUT`) for a send
    /// that got no response; the MAD is then the 24-byte common header
    /// of the request.
    pub status: i32,
    /// Header and MAD bytes of the read (of a whole RMPP transfer too).
    pub length: u32,
    /// Source QP.
    pub qpn: u32,
    /// Source LID.
    pub lid: u16,
    /// Service level it came on.
    pub sl: u8,
    /// Index of the P_Key it came with.
    pub pkey_index: u16,
}

impl RecvHdr {
    /// Decodes the header at the start of `buf`; `None` if `buf` is
    /// shorter than a header.
    pub fn decode(buf: &[u8]) -> Option<Self> {
        let h: &[u8; UMAD_HDR_SIZE] = buf.get(..UMAD_HDR_SIZE)?.try_into().ok()?;
        let ne32 = |o: usize| u32::from_ne_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
        Some(RecvHdr {
            id: ne32(0),
            status: ne32(4) as i32,
            length: ne32(16),
            qpn: u32::from_be_bytes([h[20], h[21], h[22], h[23]]),
            lid: u16::from_be_bytes([h[28], h[29]]),
            sl: h[30],
            pkey_index: u16::from_ne_bytes([h[56], h[57]]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AgentId;

    #[test]
    fn send_layout() {
        let h = SendHdr {
            timeout_ms: 1000,
            retries: 2,
            sl: 5,
            ..SendHdr::gsi(AgentId(7), 0x1234, 3)
        }
        .encode();
        assert_eq!(&h[0..4], &7u32.to_ne_bytes());
        assert_eq!(&h[4..8], &[0; 4], "status");
        assert_eq!(&h[8..12], &1000u32.to_ne_bytes());
        assert_eq!(&h[12..16], &2u32.to_ne_bytes());
        assert_eq!(&h[20..24], &[0, 0, 0, 1]);
        assert_eq!(&h[24..28], &[0x80, 0x01, 0x00, 0x00]);
        assert_eq!(&h[28..30], &[0x12, 0x34]);
        assert_eq!(h[30], 5);
        assert_eq!(&h[56..58], &3u16.to_ne_bytes());
        assert!(h[31..56].iter().all(|&b| b == 0), "no GRH");
        assert!(h[58..].iter().all(|&b| b == 0));
    }

    #[test]
    fn recv_layout() {
        let mut rd = [0u8; UMAD_HDR_SIZE + 24];
        rd[0..4].copy_from_slice(&3u32.to_ne_bytes());
        rd[4..8].copy_from_slice(&(libc::ETIMEDOUT as u32).to_ne_bytes());
        rd[16..20].copy_from_slice(&88u32.to_ne_bytes());
        rd[20..24].copy_from_slice(&[0, 0, 0, 1]);
        rd[28..30].copy_from_slice(&[0x00, 0x05]);
        rd[30] = 2;
        rd[56..58].copy_from_slice(&4u16.to_ne_bytes());
        assert_eq!(
            RecvHdr::decode(&rd),
            Some(RecvHdr {
                id: 3,
                status: libc::ETIMEDOUT,
                length: 88,
                qpn: 1,
                lid: 5,
                sl: 2,
                pkey_index: 4,
            })
        );
        assert_eq!(RecvHdr::decode(&rd[..UMAD_HDR_SIZE - 1]), None);
    }
}
