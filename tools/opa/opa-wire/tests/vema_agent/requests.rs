// SPDX-License-Identifier: GPL-2.0

//! What the agent answers whatever the attribute: unsupported methods and attributes, the
//! versions and OUI it does not check, and the RMPP header of its answers.

use super::*;

#[test]
fn unsupported_methods_and_attributes() {
    let mut port = TestPort::default();
    for (method, attr) in [
        (METHOD_GET, 0x0099),
        (METHOD_SET, ATTR_VESWPORT_SUMMARY_COUNTERS),
        (METHOD_GET, ATTR_DELETE_VESW),
        (METHOD_SEND, ATTR_CLASS_PORT_INFO),
        (METHOD_TRAP, ATTR_VESWPORT_INFO),
    ] {
        let rsp = run(&mut port, &request(method, attr, 0, &[]));
        assert_eq!(status(&rsp), 0x000c, "method {method:#x} attr {attr:#x}");
        assert_eq!(rsp[3], 0x81);
    }
}

#[test]
fn versions_and_oui_are_not_checked_as_in_c() {
    // The MAD layer filters class, class version and OUI before an agent sees a MAD; the C
    // agent checks none of them, and answers a base version 1 MAD like any other, the
    // request's header copied into the answer.
    let mut port = TestPort::default();
    for (at, value) in [(0, 0x01), (2, 0x01), (39, 0x6b)] {
        let mut req = request(METHOD_GET, ATTR_CLASS_PORT_INFO, 0, &[]);
        req[at] = value;
        let rsp = run(&mut port, &req);
        assert_eq!(status(&rsp), 0x0000, "byte {at} = {value:#x}");
        assert_eq!(rsp[at], value, "byte {at} copied into the answer");
        assert_eq!(rsp.len(), RESPONSE_LEN);
    }
    // Too short for a vendor header: nothing to answer.
    let req = request(METHOD_GET, ATTR_CLASS_PORT_INFO, 0, &[]);
    let mut rsp = vec![0u8; RESPONSE_LEN];
    assert!(process(&mut port, &req[..39], &mut rsp).is_err());
    assert!(process(&mut port, &req, &mut rsp[..100]).is_err());
}

/// A request with RMPP active (a segment of an RMPP transfer, which the
/// driver's agent gets as a plain MAD since it does not register for RMPP)
/// is answered as one MAD: the answer's RMPP header is all zero. A request
/// without RMPP keeps its RMPP bytes in the answer, as the C agent copies them.
#[test]
fn rmpp_header_is_cleared_only_for_an_active_request() {
    let mut port = TestPort::default();
    let mut req = request(METHOD_GET, 0x0001, 0, &[]);
    // Version 1, type DATA, flags Active|First|Last, segment 1, length 2008.
    req[24..36].copy_from_slice(&[1, 1, 0x07, 0, 0, 0, 0, 1, 0, 0, 0x07, 0xd8]);
    let rsp = run(&mut port, &req);
    assert_eq!(status(&rsp), 0);
    assert_eq!(rsp[24..36], [0u8; 12]);
    assert_eq!(rsp[36..40], req[36..40]);

    // Inactive: the bytes are copied, whatever they hold.
    req[26] = 0x06;
    let rsp = run(&mut port, &req);
    assert_eq!(rsp[24..36], req[24..36]);
}
