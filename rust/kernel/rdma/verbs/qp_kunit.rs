// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rust_rdma_qp` of the QP trampolines (`qp_ops.rs`): what they guarantee the
//! consumer whatever the provider does.
//!
//! - `modify_qp` to Reset drops the posted receives: once `ib_modify_qp(RESET)` returns, the
//!   consumer may free its receive buffers, so no later delivery may write into them.
//! - `post_send` reads each request's `next` before handing the request to the provider:
//!   once the provider completes it, its consumer may free it.
//!
//! Part of the kernel crate's tests (`CONFIG_RUST_KERNEL_DOCTESTS`), run at boot, on a QP made
//! without a device or CQs (only the core's `struct ib_qp` and the binding's part, which is all
//! the trampolines under test use) and a provider that never asks for them.

use super::{
    ah::{Ah, AhAttr},
    qp::{Qp, QpPriv},
    qp_attr::{QpInit, QpModify, QpQuery, QpState, QpType},
    recv::RecvWr,
    send_wr::SendWr,
    wc::{WcStatus, WcWriter, WorkCompletion},
    CqNotify, Refused,
};
use crate::{
    bindings, c_str, kunit_expect, kunit_expect_eq,
    prelude::*,
    rdma::provider::{DeviceAttr, PortAttr, PortImmutable, Provider, ProviderDevice},
    rdma::vnic::NoVnic,
    str::CStr,
    types::Opaque,
};
use core::{
    ffi::c_int,
    mem::MaybeUninit,
    ptr::{addr_of, addr_of_mut, null, null_mut},
    sync::atomic::{AtomicPtr, AtomicU64, Ordering},
};

/// The `wr_id`s of the sends the provider was given, as a bit each.
static SENT: AtomicU64 = AtomicU64::new(0);
/// A request the provider's next send completion lets its consumer reuse: the provider ends
/// the chain there, as a consumer that frees or reposts it would change it.
static RECYCLE: AtomicPtr<bindings::ib_send_wr> = AtomicPtr::new(null_mut());

/// The provider under test: it queues receives, completes sends at once, and leaves the
/// receive queue alone when its QP goes to Reset (so only the trampoline can clear it). A type
/// only: there are no values (nor devices) of it.
enum TestProvider {}

#[macros::vtable]
impl Provider for TestProvider {
    const NODE_DESC: &'static CStr = c_str!("rust_rdma_qp");
    type Data = ();
    type Cq = ();
    type Qp = ();
    type Vnic = NoVnic;

    fn query_device(_dev: &ProviderDevice<Self>) -> DeviceAttr {
        DeviceAttr::default()
    }

    fn query_port(_dev: &ProviderDevice<Self>, _port: u32) -> Result<PortAttr> {
        Err(EOPNOTSUPP)
    }

    fn port_immutable(_dev: &ProviderDevice<Self>, _port: u32) -> Result<PortImmutable> {
        Err(EOPNOTSUPP)
    }

    fn query_pkey(_dev: &ProviderDevice<Self>, _port: u32, _index: u16) -> Result<u16> {
        Err(EOPNOTSUPP)
    }

    fn query_gid(_dev: &ProviderDevice<Self>, _port: u32, _index: u32) -> Result<[u8; 16]> {
        Err(EOPNOTSUPP)
    }

    fn create_cq(_dev: &ProviderDevice<Self>, _entries: u32) -> Result<impl PinInit<(), Error>> {
        Err::<(), _>(EOPNOTSUPP)
    }

    fn poll_cq(_cq: &super::Cq<Self>, _out: &mut WcWriter<'_>) {}

    fn req_notify_cq(_cq: &super::Cq<Self>, _notify: &CqNotify) -> bool {
        false
    }

    fn create_qp(
        _dev: &ProviderDevice<Self>,
        _init: &QpInit,
    ) -> Result<(u32, impl PinInit<(), Error>)> {
        // The tests make their QPs themselves (`TestQp`).
        Err::<(u32, ()), _>(EOPNOTSUPP)
    }

    fn modify_qp(_qp: &Qp<Self>, _attr: &QpModify) -> Result {
        // A provider that forgets its posted receives on Reset.
        Ok(())
    }

    fn query_qp(_qp: &Qp<Self>) -> QpQuery {
        QpQuery {
            state: QpState::Reset,
            qkey: 0,
            pkey_index: 0,
            port: 1,
        }
    }

    fn post_recv<'a>(qp: &Qp<Self>, wr: RecvWr<'a>) -> Result<(), Refused<RecvWr<'a>>> {
        qp.post_recv(wr)
    }

    fn post_send<'a>(_qp: &Qp<Self>, wr: SendWr<'a>) -> Result<(), Refused<SendWr<'a>>> {
        SENT.fetch_or(1u64 << (wr.wr_id() % 64), Ordering::Relaxed);
        // Completed (and polled, and handed to the consumer, as far as the test goes).
        let _ = WorkCompletion::send(wr, WcStatus::Success, 1);
        let done = RECYCLE.swap(null_mut(), Ordering::Relaxed);
        if !done.is_null() {
            // SAFETY: `done` is a request of the test's chain, which lives until the test
            // ends; the test is the only thread using it, and nothing reads it through a
            // reference any more (its `SendWr` was consumed by the completion above; the
            // trampoline keeps only raw pointers).
            unsafe { (*done).next = null_mut() };
        }
        Ok(())
    }
}

/// A QP of [`TestProvider`] without a device or CQs, in memory the test owns.
///
/// # Invariants
///
/// The core's part is zeroed but for its type and number, and the binding's part (`p`) is
/// initialised until the drop.
struct TestQp(KBox<MaybeUninit<Qp<TestProvider>>>);

impl TestQp {
    /// A QP with room for `depth` receives, as `create_qp` would make it.
    fn new(depth: u32) -> Result<Self> {
        let mut b = KBox::<Qp<TestProvider>>::new_uninit(GFP_KERNEL | __GFP_ZERO)?;
        let this = b.as_mut_ptr();
        let init = QpInit {
            qp_type: QpType::Ud,
            port: 0,
            max_send_wr: depth,
            max_recv_wr: depth,
            sig_all: true,
        };
        let p = QpPriv::<TestProvider>::new(init, ())?;
        // SAFETY: `this` is the box's memory, zeroed and of the size of `Qp`, so `p` is valid
        // for writing a `QpPriv`, not yet initialised; the box never moves its contents, and
        // on error `__pinned_init` leaves it uninitialised, for the box to free as such.
        unsafe { p.__pinned_init(addr_of_mut!((*this).p)) }?;
        // SAFETY: The core's part is in the box, zeroed, and not shared yet.
        unsafe {
            let ib = Opaque::raw_get(addr_of_mut!((*this).ib));
            (*ib).qp_type = bindings::ib_qp_type_IB_QPT_UD;
            (*ib).qp_num = 2;
        }
        // INVARIANT: `p` is initialised now; the core's part is zeroed but for its type and
        // number.
        Ok(Self(b))
    }

    /// The QP.
    fn qp(&self) -> &Qp<TestProvider> {
        // SAFETY: `p` is initialised (type invariant) and the zeroed core's part is a valid
        // `struct ib_qp` (in an `Opaque`); the QP is never moved.
        unsafe { self.0.assume_init_ref() }
    }
}

impl Drop for TestQp {
    fn drop(&mut self) {
        // SAFETY: `p` is initialised (type invariant) and dropped once, here; the box then
        // frees the memory without dropping anything (`MaybeUninit`).
        unsafe { core::ptr::drop_in_place(addr_of_mut!((*self.0.as_mut_ptr()).p)) };
    }
}

/// Bytes of each receive buffer.
const BUF: usize = 8;

/// What the late delivery of `reset_drops_posted_receives` reports.
const INFO: super::RecvInfo = super::RecvInfo {
    slid: 1,
    src_qp: 1,
    sl: 0,
    pkey_index: 0,
    imm: None,
    solicited: false,
};

/// Posts two receives, moves the QP to Reset through a provider that leaves them queued, and
/// delivers a message as a provider would: nothing may be found to write into.
fn reset_drops_posted_receives() {
    // Declared before the QP, so that they outlive it (the `post_recv` contract).
    let mut bufs = [[0u8; BUF]; 2];
    // SAFETY: All-zero `ib_sge`s and `ib_recv_wr`s are valid (integers, null pointers).
    let mut sges: [bindings::ib_sge; 2] = unsafe { MaybeUninit::zeroed().assume_init() };
    // SAFETY: As above.
    let mut wrs: [bindings::ib_recv_wr; 2] = unsafe { MaybeUninit::zeroed().assume_init() };
    let Ok(t) = TestQp::new(4) else {
        kunit_expect!(false);
        return;
    };
    let qp = t.qp();
    let wr = wrs.as_mut_ptr();
    for (i, (sge, buf)) in sges.iter_mut().zip(bufs.iter_mut()).enumerate() {
        sge.addr = buf.as_mut_ptr() as u64;
        sge.length = BUF as u32;
        // SAFETY: `i` is an index of `wrs`; `sge` stays in place until the QP is gone.
        unsafe {
            (*wr.add(i)).__bindgen_anon_1.wr_id = i as u64;
            (*wr.add(i)).sg_list = sge;
            (*wr.add(i)).num_sge = 1;
        }
    }
    // SAFETY: 0 and 1 are indices of `wrs`.
    unsafe { (*wr).next = wr.add(1) };
    let mut bad = null();
    // SAFETY: The test stands in for the core: the QP is initialised (its device and CQs,
    // null, are used neither by the trampolines called here nor by `TestProvider`), and the
    // chain is valid, with buffers that outlive the QP.
    let ret = unsafe { Qp::<TestProvider>::post_recv_callback(qp.raw(), wr, &mut bad) };
    kunit_expect_eq!(ret, 0);
    kunit_expect!(!qp.recv_queue().is_empty());

    // SAFETY: An all-zero `ib_qp_attr` is valid (integers, arrays and unions of them).
    let mut attr: bindings::ib_qp_attr = unsafe { MaybeUninit::zeroed().assume_init() };
    attr.qp_state = QpState::Reset.raw();
    let mask = bindings::ib_qp_attr_mask_IB_QP_STATE as c_int;
    // SAFETY: As above; `attr` is valid during the call.
    let ret =
        unsafe { Qp::<TestProvider>::modify_qp_callback(qp.raw(), &mut attr, mask, null_mut()) };
    kunit_expect_eq!(ret, 0);

    // Here the consumer may free `bufs`. A delivery that comes now, as the provider makes
    // one, must find nothing to write into.
    let delivered = {
        let mut q = qp.recv_queue();
        match q.pop() {
            Some(mut r) => {
                let _ = r.write(0, &[&b"late"[..]]);
                let _ = WorkCompletion::recv(qp, r.finish(), WcStatus::Success, 4, &INFO, 1);
                true
            }
            None => false,
        }
    };
    kunit_expect!(!delivered);
    kunit_expect!(bufs.iter().flatten().all(|&b| b == 0));
}

/// Posts a chain of three sends to a provider that completes each at once and then, as the
/// consumer of a completed request may, changes the first one (ending the chain there): all
/// three must still be posted.
fn post_send_reads_next_first() {
    let Ok(t) = TestQp::new(4) else {
        kunit_expect!(false);
        return;
    };
    let qp = t.qp();
    let ah = Ah {
        // SAFETY: An all-zero `ib_ah` is valid (null pointers, integers): its null `device`
        // is the QP's, as `SendWr` checks.
        ib: Opaque::new(unsafe { MaybeUninit::zeroed().assume_init() }),
        attr: AhAttr {
            dlid: 1,
            sl: 0,
            src_path_bits: 0,
            static_rate: 0,
            port: 1,
            kind: bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_OPA,
        },
    };
    // SAFETY: All-zero `ib_ud_wr`s are valid (integers, null pointers, unions of them).
    let mut wrs: [bindings::ib_ud_wr; 3] = unsafe { MaybeUninit::zeroed().assume_init() };
    let n = wrs.len();
    let wr = wrs.as_mut_ptr();
    for i in 0..n {
        // SAFETY: `i` and, below `n - 1`, `i + 1` are indices of `wrs`, which stays in place
        // until the test ends.
        unsafe {
            let w = addr_of_mut!((*wr.add(i)).wr);
            (*w).__bindgen_anon_1.wr_id = i as u64;
            (*w).opcode = bindings::ib_wr_opcode_IB_WR_SEND;
            (*wr.add(i)).ah = ah.ib.get();
            if i + 1 < n {
                (*w).next = addr_of_mut!((*wr.add(i + 1)).wr);
            }
        }
    }
    SENT.store(0, Ordering::Relaxed);
    // SAFETY: `wr` is the first request of `wrs`.
    RECYCLE.store(unsafe { addr_of_mut!((*wr).wr) }, Ordering::Relaxed);
    let mut bad = null();
    // SAFETY: The test stands in for the core: the QP is initialised, of type UD (its device
    // and CQs, null, are used neither by the trampoline nor by `TestProvider`), and the chain
    // is of valid `ib_ud_wr` sends, with no scatter list and an `Ah` of the QP's (null)
    // device, alive during the call.
    let ret =
        unsafe { Qp::<TestProvider>::post_send_callback(qp.raw(), addr_of!((*wr).wr), &mut bad) };
    kunit_expect_eq!(ret, 0);
    kunit_expect!(RECYCLE.load(Ordering::Relaxed).is_null());
    // Every request of the chain was posted, though the first one's `next` changed once it
    // was completed.
    kunit_expect_eq!(SENT.load(Ordering::Relaxed), (1u64 << n) - 1);
}

crate::kunit_suite!(
    rust_rdma_qp,
    [reset_drops_posted_receives, post_send_reads_next_first]
);
