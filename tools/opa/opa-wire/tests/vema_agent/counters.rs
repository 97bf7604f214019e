// SPDX-License-Identifier: GPL-2.0

//! The summary and error counters.

use super::*;

#[test]
fn counters() {
    let mut port = port_with_vport(1);
    let rsp = run(
        &mut port,
        &request(METHOD_GET, ATTR_VESWPORT_SUMMARY_COUNTERS, 1, &[]),
    );
    assert_eq!(status(&rsp), 0);
    let expect = port.summary_counters(1).to_bytes();
    assert_eq!(rsp[40..40 + expect.len()], expect[..]);
    let rsp = run(
        &mut port,
        &request(METHOD_GET, ATTR_VESWPORT_ERROR_COUNTERS, 1, &[]),
    );
    let expect = port.error_counters(1).to_bytes();
    assert_eq!(rsp[40..40 + expect.len()], expect[..]);
}

proptest! {
    /// Any request is answered (or refused as too short) without a panic, and an answer is
    /// always a whole GetResp MAD.
    #[test]
    fn any_request_gets_a_whole_answer(
        method in prop_oneof![Just(1u8), Just(2u8), any::<u8>()],
        attr in prop_oneof![Just(0x11u16), Just(0x12u16), Just(0x13u16), any::<u16>()],
        attr_mod in any::<u32>(),
        data in proptest::collection::vec(any::<u8>(), 0..2008),
        len in 0usize..2100,
    ) {
        let mut port = port_with_vport(0);
        let mut req = request(method, attr, attr_mod, &data);
        req.resize(len.max(40), 0);
        let mut rsp = vec![0u8; RESPONSE_LEN];
        prop_assert_eq!(process(&mut port, &req, &mut rsp), Ok(RESPONSE_LEN));
        prop_assert_eq!(rsp[3], 0x81);
    }
}
