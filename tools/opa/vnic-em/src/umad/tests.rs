// SPDX-License-Identifier: GPL-2.0

//! Tests of the umad transport: its errors as the EM reports them, the P_Key index and SL
//! opamgt would choose, and the umad header's layout. Apart from the code so that
//! `umad.rs` holds the transport alone.

use std::fs;

use opa_umad::fake_sysfs::{add_port, tmp_root, write_abi_version};

use super::*;

/// Discovery itself, and each of its messages, is tested in opa-umad;
/// here, that its errors reach the EM as device errors with those
/// messages, and opening a port.
#[test]
fn discovery() {
    let root = tmp_root("disc");
    let e = list_ports(&root).unwrap_err();
    assert!(matches!(e, FabricError::Device(_)));
    assert_eq!(
        e.to_string(),
        "no umad device: the ib_umad module is not loaded (load it: modprobe ib_umad)"
    );
    write_abi_version(&root, "5");
    let none = select_port(&list_ports(&root).unwrap(), &PortSelect::default());
    assert!(
        matches!(&none, Err(FabricError::Device(m)) if m.contains("modprobe hfi1")),
        "{none:?}"
    );
    add_port(&root, "umad0", "hfi1_0", 1, "0x0", "1: DOWN");
    add_port(&root, "umad2", "hfi1_0", 2, "0x2", "4: ACTIVE");
    let ports = list_ports(&root).unwrap();
    assert_eq!(select_port(&ports, &PortSelect::default()).unwrap().lid, 2);
    let sel = PortSelect {
        hca: Some("mlx5_0".into()),
        ..Default::default()
    };
    assert!(matches!(
        select_port(&ports, &sel),
        Err(FabricError::Device(m)) if m == "no umad device for mlx5_0: the umad devices are \
            umad0 (hfi1_0 port 1), umad2 (hfi1_0 port 2) (pick a port with -h/-C and -p/-P, or -d)"
    ));
    // No device node.
    let e = Umad::open(&root, &PortSelect::default(), false)
        .err()
        .unwrap();
    assert!(e.to_string().starts_with("cannot open "), "{e}");
    // The node is a plain file here: open works, the ioctl does not.
    fs::create_dir_all(root.join("dev/infiniband")).unwrap();
    fs::write(root.join("dev/infiniband/umad2"), b"").unwrap();
    let e = Umad::open(&root, &PortSelect::default(), false)
        .err()
        .unwrap();
    assert!(
        e.to_string().starts_with(&format!(
            "cannot register the EMA agent on {} (hfi1_0 port 2): ",
            root.join("dev/infiniband/umad2").display()
        )),
        "{e}"
    );
    let sel = PortSelect {
        umad: Some("umad0".into()),
        ..Default::default()
    };
    let e = Umad::open(&root, &sel, false).err().unwrap();
    assert_eq!(
        e.to_string(),
        "hfi1_0 port 1 has no LID (is the port ACTIVE and the SM running?)"
    );
    let _ = fs::remove_dir_all(&root);
}

/// opamgt's choices: the P_Key index of 0xffff when the port has it (else 0x7fff), the
/// port's SM SL; a port without 0xffff is a limited member.
#[test]
fn pkey_and_sl_as_opamgt_chooses_them() {
    let root = tmp_root("pkey-sl");
    write_abi_version(&root, "5");
    let p = add_port(&root, "umad0", "hfi1_0", 1, "0x2", "4: ACTIVE");
    assert_eq!(port_sm_sl(&p), 0, "no sm_sl file");
    fs::write(p.join("sm_sl"), "3\n").unwrap();
    assert_eq!(port_sm_sl(&p), 3);
    assert!(!has_pkeys(&p));
    let pk = p.join("pkeys");
    fs::create_dir_all(&pk).unwrap();
    fs::write(pk.join("0"), "0x8001\n").unwrap();
    fs::write(pk.join("1"), "0x7fff\n").unwrap();
    assert!(
        has_pkeys(&p) && !has_full_mgmt_pkey(&p),
        "hfi1's table before an SM"
    );
    assert_eq!(mgmt_pkey_index(&p), 1);
    fs::write(pk.join("2"), "0xffff\n").unwrap();
    assert!(has_full_mgmt_pkey(&p));
    assert_eq!(mgmt_pkey_index(&p), 2);
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn header_layout() {
    let d = Dest::gsi(0x1234, 3, 5);
    let h = encode_send_hdr(7, &d, 1000);
    assert_eq!(&h[0..4], &7u32.to_ne_bytes());
    assert_eq!(&h[8..12], &1000u32.to_ne_bytes());
    assert_eq!(&h[12..16], &[0; 4], "no retries");
    assert_eq!(&h[20..24], &[0, 0, 0, 1]);
    assert_eq!(&h[24..28], &[0x80, 0x01, 0x00, 0x00]);
    assert_eq!(&h[28..30], &[0x12, 0x34]);
    assert_eq!(h[30], 5);
    assert_eq!(&h[56..58], &3u16.to_ne_bytes());
    assert_eq!(h[32], 0, "no GRH");

    let mut rd = vec![0u8; UMAD_HDR_SIZE + IB_MGMT_MAD_HDR];
    rd[4..8].copy_from_slice(&(libc::ETIMEDOUT as u32).to_ne_bytes());
    rd[UMAD_HDR_SIZE + 8..UMAD_HDR_SIZE + 16]
        .copy_from_slice(&0x0000_0007_0000_0042u64.to_be_bytes());
    assert_eq!(decode_recv_hdr(&rd).unwrap().status, libc::ETIMEDOUT);
    assert_eq!(
        decode_read(&rd),
        Some(Event::SendTimeout {
            tid: 0x0000_0007_0000_0042
        })
    );
    rd[4..8].copy_from_slice(&[0; 4]);
    rd[28..30].copy_from_slice(&[0x00, 0x05]);
    assert_eq!(
        decode_read(&rd),
        Some(Event::Mad {
            src_lid: 5,
            data: rd[UMAD_HDR_SIZE..].to_vec()
        })
    );
    assert_eq!(decode_read(&rd[..10]), None);
    assert_eq!(parse_sysfs_lid("0x1f"), Some(0x1f));
}
