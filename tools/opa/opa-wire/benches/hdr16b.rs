// SPDX-License-Identifier: GPL-2.0

//! Micro-benchmark of the 16B fast path: header encode plus decode per
//! packet, and a whole packet encap plus decap. Run by
//! scripts/opa/bench-wire (`make bench`).

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use opa_wire::hdr16b::{decap, Encap, Hdr16b, HDR_LEN};
use std::time::Duration;

fn encap() -> Encap {
    Encap {
        slid: 0xa1_2345,
        dlid: 0xb6_789a,
        sc: 0x15,
        rc: 5,
        pkey: 0x8001,
        entropy: 0xc3,
        vesw_id: 0x0abc,
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("hdr16b");
    g.throughput(Throughput::Elements(1));

    // What the driver does per transmitted packet (header into skb
    // headroom) and what the receive side does (header check).
    g.bench_function("encode_decode", |b| {
        let e = encap();
        let mut out = [0u8; HDR_LEN];
        let mut eth_len = 60usize;
        b.iter(|| {
            eth_len = if eth_len >= 1514 { 60 } else { eth_len + 1 };
            let h = e.header(black_box(eth_len)).unwrap();
            h.encode(black_box(&mut out)).unwrap();
            let d = Hdr16b::decode(black_box(&out)).unwrap();
            black_box(d.len_qw)
        })
    });

    for len in [60usize, 1500] {
        let eth: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let mut out = vec![0u8; len + 40];
        g.bench_function(format!("encap_decap_{len}"), |b| {
            let e = encap();
            b.iter(|| {
                let n = e.encap_frame(black_box(&eth), &mut out).unwrap();
                let d = decap(black_box(&out[..n])).unwrap();
                black_box(d.eth.len())
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    targets = bench
}
criterion_main!(benches);
