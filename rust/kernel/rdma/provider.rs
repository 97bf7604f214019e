// SPDX-License-Identifier: GPL-2.0

//! Software RDMA devices: the provider side of the IB core.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! A [`Provider`] is a driver of software RDMA devices that speak UD only: the management
//! QPs (QP0 as SMI, QP1 as GSI) and, optionally, ordinary UD QPs, with virtual addressing
//! instead of DMA (the device is registered without a DMA device, so the IB core hands it
//! kernel virtual addresses in its scatter/gather entries). The abstraction implements the
//! generic parts of the verbs (PDs, CQs, AHs, receive queues, QP state) in
//! [`verbs`](super::verbs); the provider supplies the port attributes and the "wire": what
//! happens to a UD send ([`Provider::post_send`]).
//!
//! Every other verb (memory registration, connected QPs, user verbs) is absent from the ops
//! table or answers `EOPNOTSUPP`.

pub use super::device::PortCapMask;
use super::verbs::{Ah, Cq, Qp, QpInit, SendWr};
use super::vnic::{SkbMetadata, VnicNetdev};
use crate::{
    bindings,
    error::{code::*, to_result, Result},
    net::skbuff::SkBuff,
    str::CStr,
    types::Opaque,
    ThisModule,
};
use core::{
    ffi::c_int,
    marker::PhantomData,
    mem::size_of,
    ptr::{addr_of_mut, NonNull},
};

/// The attributes a provider reports for its devices (`struct ib_device_attr`).
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceAttr {
    /// The system image GUID (host order).
    pub sys_image_guid: u64,
    /// The IEEE vendor id.
    pub vendor_id: u32,
    /// The vendor's part id.
    pub vendor_part_id: u32,
    /// Maximum number of QPs.
    pub max_qp: u32,
    /// Maximum number of outstanding work requests on a queue.
    pub max_qp_wr: u32,
    /// Maximum scatter/gather entries of a work request.
    pub max_sge: u32,
    /// Maximum number of CQs.
    pub max_cq: u32,
    /// Maximum entries of a CQ.
    pub max_cqe: u32,
    /// Maximum number of PDs.
    pub max_pd: u32,
    /// Maximum number of address handles.
    pub max_ah: u32,
    /// Size of the P_Key tables.
    pub max_pkeys: u16,
    /// Whether the device can allocate OPA VNIC netdevs (`IBK_RDMA_NETDEV_OPA`).
    pub opa_vnic: bool,
}

/// The logical state of a port (`enum ib_port_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortState {
    /// Down: no link.
    Down,
    /// Link up, not configured by a subnet manager.
    Init,
    /// Configured, not yet active.
    Armed,
    /// Active: passes data.
    Active,
}

/// The attributes of a port (`struct ib_port_attr`).
#[derive(Clone, Copy, Debug)]
pub struct PortAttr {
    /// The logical state; the physical state follows (LinkUp unless down).
    pub state: PortState,
    /// The port's LID.
    pub lid: u32,
    /// The LID of the subnet manager.
    pub sm_lid: u32,
    /// The LID mask control.
    pub lmc: u8,
    /// Number of GIDs.
    pub gid_tbl_len: u32,
    /// Number of P_Keys.
    pub pkey_tbl_len: u16,
    /// `IB_PORT_*` capability mask bits.
    pub port_cap_flags: u32,
    /// Largest message, in bytes.
    pub max_msg_sz: u32,
    /// Packets dropped for a bad P_Key.
    pub bad_pkey_cntr: u32,
    /// Packets dropped for a bad Q_Key.
    pub qkey_viol_cntr: u32,
}

/// A change of a port's settings (`ib_modify_port()`): capability bits to set, then to
/// clear, in the mask [`PortCapMask`] names, and the requests of `IB_PORT_SHUTDOWN` and
/// `IB_PORT_RESET_QKEY_CNTR`.
#[derive(Clone, Copy, Debug)]
pub struct PortModify {
    /// Which capability mask `set` and `clear` apply to.
    pub mask: PortCapMask,
    /// The bits to set.
    pub set: u32,
    /// The bits to clear (after setting).
    pub clear: u32,
    /// Take the port down (`IB_PORT_SHUTDOWN`).
    pub shutdown: bool,
    /// Zero the Q_Key violation counter (`IB_PORT_RESET_QKEY_CNTR`).
    pub reset_qkey_cntr: bool,
}

/// What never changes about a port (`struct ib_port_immutable`).
#[derive(Clone, Copy, Debug)]
pub struct PortImmutable {
    /// An Omni-Path port (OPA MADs of 2048 bytes) rather than an InfiniBand one.
    pub opa: bool,
    /// Number of P_Keys.
    pub pkey_tbl_len: u16,
    /// Number of GIDs.
    pub gid_tbl_len: u32,
}

/// The name of a per-port counter (`struct rdma_stat_desc`), for
/// [`Provider::port_counter_descs`]: the IB core shows the counters in
/// `/sys/class/infiniband/<dev>/ports/<n>/hw_counters/` and `rdma statistic`.
///
/// # Invariants
///
/// `name` is a static C string, `priv` is null.
#[repr(transparent)]
pub struct StatDesc(bindings::rdma_stat_desc);

// SAFETY: The descriptor is immutable, and points only to static data.
unsafe impl Sync for StatDesc {}

impl StatDesc {
    /// A counter named `name`.
    pub const fn new(name: &'static CStr) -> Self {
        Self(bindings::rdma_stat_desc {
            name: name.as_char_ptr(),
            flags: 0,
            priv_: core::ptr::null(),
        })
    }
}

/// A driver of software RDMA devices.
#[macros::vtable]
pub trait Provider: Sized + 'static {
    /// What the driver keeps for each of its devices.
    type Data: Send + Sync;

    /// What the driver keeps for each QP.
    type Qp: Send + Sync;

    /// What the driver keeps for each OPA VNIC netdev (`()` without VNIC support).
    type Vnic: Send + Sync;

    /// The device attributes (`query_device`).
    fn query_device(dev: &Device<Self>) -> DeviceAttr;

    /// The attributes of `port` (`query_port`).
    fn query_port(dev: &Device<Self>, port: u32) -> Result<PortAttr>;

    /// The immutable attributes of `port` (`get_port_immutable`).
    fn port_immutable(dev: &Device<Self>, port: u32) -> Result<PortImmutable>;

    /// Changes the settings of `port` (checked to exist) as `change` says
    /// (`modify_port`). Without this op the IB core answers `EOPNOTSUPP`.
    fn modify_port(_dev: &Device<Self>, _port: u32, _change: &PortModify) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The P_Key at `index` in the table of `port`.
    fn query_pkey(dev: &Device<Self>, port: u32, index: u16) -> Result<u16>;

    /// The GID at `index` in the table of `port`.
    fn query_gid(dev: &Device<Self>, port: u32, index: u32) -> Result<[u8; 16]>;

    /// Accepts a new QP: returns its number and the driver's data for it.
    ///
    /// Types the driver does not handle get `EOPNOTSUPP`.
    fn create_qp(dev: &Device<Self>, init: &QpInit) -> Result<(u32, Self::Qp)>;

    /// Called once the QP is complete, before it is handed to its creator: the place to
    /// publish it (keep an [`ARef`](crate::types::ARef) to it) for receives. An error
    /// destroys the QP again, without calling [`Provider::destroy_qp`]: a failing `qp_ready`
    /// must not keep a reference (the destruction would wait for it forever).
    fn qp_ready(_qp: &Qp<Self>) -> Result {
        Ok(())
    }

    /// Called when the QP's creator destroys it: the driver must drop every reference it
    /// keeps to it (the abstraction then waits for the last one before freeing).
    fn destroy_qp(_qp: &Qp<Self>) {}

    /// The names of the per-port counters, in the order of [`Provider::port_counters`].
    fn port_counter_descs() -> &'static [StatDesc] {
        &[]
    }

    /// Reads the counters of `port` into `out` (one value per
    /// [`Provider::port_counter_descs`] entry).
    fn port_counters(_dev: &Device<Self>, _port: u32, _out: &mut [u64]) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Accepts a new OPA VNIC netdev on `port` (checked to exist): returns the driver's data
    /// for it. Providing this makes the devices able to allocate `RDMA_NETDEV_OPA_VNIC`
    /// netdevs (see [`vnic`](super::vnic)).
    fn alloc_vnic(_dev: &Device<Self>, _port: u32) -> Result<Self::Vnic> {
        Err(EOPNOTSUPP)
    }

    /// The transmit queues of a new OPA VNIC netdev on `port` (hfi1 gives one per SDMA
    /// engine); taken between 1 and [`vnic::MAX_TX_QUEUES`](super::vnic::MAX_TX_QUEUES).
    fn vnic_tx_queues(_dev: &Device<Self>, _port: u32) -> u32 {
        1
    }

    /// `rn.set_id`: binds the netdev to a virtual Ethernet switch id, for receive.
    fn vnic_set_id(_nd: &VnicNetdev<Self>, _id: i32) {}

    /// `ndo_open` of a VNIC netdev.
    fn vnic_open(_nd: &VnicNetdev<Self>) -> Result {
        Err(EOPNOTSUPP)
    }

    /// `ndo_stop` of a VNIC netdev.
    fn vnic_stop(_nd: &VnicNetdev<Self>) {}

    /// `ndo_start_xmit` of a VNIC netdev: `skb` starts with the metadata, then the 16B
    /// header and the frame. The driver owns the buffer (frees or passes it on).
    fn vnic_xmit(_nd: &VnicNetdev<Self>, _skb: SkBuff) {}

    /// `ndo_select_queue` of a VNIC netdev, from the frame's metadata: a queue below
    /// [`Provider::vnic_tx_queues`] (the stack caps a larger one, with a warning).
    fn vnic_select_queue(_nd: &VnicNetdev<Self>, _meta: &SkbMetadata) -> u16 {
        0
    }

    /// `ndo_get_stats64` of a VNIC netdev: fills the whole `struct opa_vnic_stats`.
    fn vnic_stats(_nd: &VnicNetdev<Self>, _stats: &mut bindings::opa_vnic_stats) {}

    /// Sends one UD work request from `qp`, which is in the RTS state.
    ///
    /// The driver delivers the message (or drops it) and reports the send's completion with
    /// [`Qp::complete_send`].
    fn post_send(qp: &Qp<Self>, wr: &SendWr<'_>) -> Result;
}

/// A software RDMA device of the provider `T`: a `struct ib_device` and the driver's data.
///
/// # Invariants
///
/// `ib` is a `struct ib_device` allocated by `_ib_alloc_device` with the size of `Self`, its
/// ops are the ones of `T` (see [`Adapter`]), and `data` is initialised, for as long as a
/// reference to `Self` exists.
#[repr(C)]
pub struct Device<T: Provider> {
    ib: Opaque<bindings::ib_device>,
    data: T::Data,
}

// SAFETY: The `ib_device` is used from any thread by the IB core, under its own locking; the
// driver's data is `Send`.
unsafe impl<T: Provider> Send for Device<T> {}
// SAFETY: Shared references only give `&T::Data`, which is `Sync`, and read the `ib_device`
// fields the core does not change after registration.
unsafe impl<T: Provider> Sync for Device<T> {}

impl<T: Provider> Device<T> {
    /// Creates a reference to the device from the `struct ib_device` the core passes.
    ///
    /// # Safety
    ///
    /// `ptr` must be a device of `T` (allocated by [`Registration::new`]) that stays
    /// allocated, with its data initialised, for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // SAFETY: `ib` is the first field of the `repr(C)` `Self`, and the caller guarantees
        // that the memory is a complete `Self` for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The raw `struct ib_device`.
    pub fn as_raw(&self) -> *mut bindings::ib_device {
        self.ib.get()
    }

    /// The driver's data of the device.
    pub fn data(&self) -> &T::Data {
        &self.data
    }

    /// The device's name (for example `opasim0`).
    pub fn name(&self) -> &CStr {
        // SAFETY: By the type invariant the device is valid; its `name` is NUL-terminated
        // (zeroed at allocation, then written by `ib_register_device` with `strscpy`).
        unsafe { CStr::from_char_ptr((*self.as_raw()).name.as_ptr()) }
    }

    /// The number of ports.
    pub fn port_count(&self) -> u32 {
        // SAFETY: By the type invariant the device is valid; `phys_port_cnt` is set before
        // registration and never changes.
        unsafe { (*self.as_raw()).phys_port_cnt }
    }

    /// Tells the IB core's clients that `port` became active (`true`) or went down (`false`)
    /// (`ib_dispatch_event` with `IB_EVENT_PORT_ACTIVE` / `IB_EVENT_PORT_ERR`), so that they
    /// and the core's caches read the port again.
    pub fn port_event(&self, port: u32, active: bool) {
        if port == 0 || port > self.port_count() {
            return;
        }
        let mut event = bindings::ib_event {
            device: self.as_raw(),
            event: if active {
                bindings::ib_event_type_IB_EVENT_PORT_ACTIVE
            } else {
                bindings::ib_event_type_IB_EVENT_PORT_ERR
            },
            // SAFETY: The rest of `struct ib_event` (the element union) is valid zeroed.
            ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
        };
        event.element.port_num = port;
        // SAFETY: `event` is a valid port event of this registered device (`port` checked).
        unsafe { bindings::ib_dispatch_event(&event) };
    }

    /// Tells the clients that the P_Key table of `port` changed (`IB_EVENT_PKEY_CHANGE`).
    pub fn pkey_event(&self, port: u32) {
        if port == 0 || port > self.port_count() {
            return;
        }
        let mut event = bindings::ib_event {
            device: self.as_raw(),
            event: bindings::ib_event_type_IB_EVENT_PKEY_CHANGE,
            // SAFETY: The rest of `struct ib_event` (the element union) is valid zeroed.
            ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
        };
        event.element.port_num = port;
        // SAFETY: `event` is a valid port event of this registered device (`port` checked).
        unsafe { bindings::ib_dispatch_event(&event) };
    }

    /// Tells the clients that the LID of `port` changed (`IB_EVENT_LID_CHANGE`).
    pub fn lid_event(&self, port: u32) {
        if port == 0 || port > self.port_count() {
            return;
        }
        let mut event = bindings::ib_event {
            device: self.as_raw(),
            event: bindings::ib_event_type_IB_EVENT_LID_CHANGE,
            // SAFETY: The rest of `struct ib_event` (the element union) is valid zeroed.
            ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
        };
        event.element.port_num = port;
        // SAFETY: `event` is a valid port event of this registered device (`port` checked).
        unsafe { bindings::ib_dispatch_event(&event) };
    }
}

/// A registered software RDMA device; unregisters and frees it when dropped.
///
/// Unregistering removes every client from the device first (the MAD stack, umad, the VNIC
/// drivers), which destroy their QPs, CQs and PDs on it; the device's data is dropped after
/// that.
///
/// # Invariants
///
/// `dev` points to a registered device of `T` whose data is initialised.
pub struct Registration<T: Provider> {
    dev: NonNull<Device<T>>,
}

// SAFETY: The registration only owns the device, which is `Send` and `Sync`.
unsafe impl<T: Provider> Send for Registration<T> {}
// SAFETY: See above.
unsafe impl<T: Provider> Sync for Registration<T> {}

impl<T: Provider> Registration<T> {
    /// Allocates and registers a device of `ports` ports named after `name` (a `printf`
    /// pattern such as `c"opasim%d"`), whose GUID is `node_guid` and whose data is `data`.
    ///
    /// The IB core's clients are told about the device before this returns.
    pub fn new(
        module: &'static ThisModule,
        name: &CStr,
        ports: u32,
        node_guid: u64,
        data: T::Data,
    ) -> Result<Self> {
        crate::build_assert!(core::mem::align_of::<Device<T>>() <= 8);
        if ports == 0 || ports > 254 {
            return Err(EINVAL);
        }
        // SAFETY: The size is at least that of a `struct ib_device`, the first field.
        let ib = unsafe { bindings::_ib_alloc_device(size_of::<Device<T>>()) };
        let dev = NonNull::new(ib.cast::<Device<T>>()).ok_or(ENOMEM)?;
        let raw = dev.as_ptr();
        // SAFETY: `raw` is a fresh, zeroed allocation of the size of `Device<T>`, aligned to at
        // least 8 bytes (kmalloc), which is enough (checked above); `data` is not initialised
        // yet, so writing it does not drop anything.
        unsafe { addr_of_mut!((*raw).data).write(data) };
        let mut ops = Adapter::<T>::OPS;
        ops.owner = module.as_ptr();
        // SAFETY: `ib` is a valid, unregistered device that only this function uses.
        unsafe {
            (*ib).node_type = bindings::RDMA_NODE_IB_CA as _;
            (*ib).phys_port_cnt = ports;
            (*ib).num_comp_vectors = 1;
            (*ib).node_guid = node_guid.to_be();
            (*ib).local_dma_lkey = 0;
            for (d, s) in (*ib)
                .node_desc
                .iter_mut()
                .zip(b"opasim software OPA HFI".iter())
            {
                *d = *s as _;
            }
            bindings::ib_set_device_ops(ib, &ops);
        }
        // SAFETY: The device is complete: its ops and data are set. A null DMA device makes
        // the core use virtual addressing, which the verbs of `Adapter` expect.
        let ret =
            unsafe { bindings::ib_register_device(ib, name.as_char_ptr(), core::ptr::null_mut()) };
        if let Err(e) = to_result(ret) {
            // SAFETY: The registration failed, so only this function knows the device: drop
            // its data and free it.
            unsafe {
                core::ptr::drop_in_place(addr_of_mut!((*raw).data));
                bindings::ib_dealloc_device(ib);
            }
            return Err(e);
        }
        Ok(Self { dev })
    }

    /// The registered device.
    pub fn device(&self) -> &Device<T> {
        // SAFETY: By the type invariant the device is registered and initialised while
        // `self` lives.
        unsafe { self.dev.as_ref() }
    }
}

impl<T: Provider> Drop for Registration<T> {
    fn drop(&mut self) {
        let raw = self.dev.as_ptr();
        let ib = raw.cast::<bindings::ib_device>();
        // SAFETY: By the type invariant the device is registered. Unregistering removes all
        // clients (which destroy their objects on it) and waits until nobody uses the device,
        // so afterwards no op of `Adapter` runs any more and the data can be dropped before
        // the device is freed.
        unsafe {
            bindings::ib_unregister_device(ib);
            core::ptr::drop_in_place(addr_of_mut!((*raw).data));
            bindings::ib_dealloc_device(ib);
        }
    }
}

/// Returns the errno of a result, for the C ops.
pub(crate) fn errno(r: Result) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// The `struct ib_device_ops` of a provider `T` and the device-level trampolines.
pub(crate) struct Adapter<T: Provider>(PhantomData<T>);

impl<T: Provider> Adapter<T> {
    const OPS: bindings::ib_device_ops = bindings::ib_device_ops {
        driver_id: bindings::rdma_driver_id_RDMA_DRIVER_UNKNOWN,
        query_device: Some(Self::query_device),
        query_port: Some(Self::query_port),
        get_port_immutable: Some(Self::get_port_immutable),
        query_pkey: Some(Self::query_pkey),
        modify_port: if T::HAS_MODIFY_PORT {
            Some(Self::modify_port)
        } else {
            None
        },
        query_gid: Some(Self::query_gid),
        alloc_pd: Some(Self::alloc_pd),
        dealloc_pd: Some(Self::dealloc_pd),
        get_dma_mr: Some(Self::get_dma_mr),
        reg_user_mr: Some(Self::reg_user_mr),
        dereg_mr: Some(Self::dereg_mr),
        create_cq: Some(Cq::create_cq_callback),
        destroy_cq: Some(Cq::destroy_cq_callback),
        poll_cq: Some(Cq::poll_cq_callback),
        req_notify_cq: Some(Cq::req_notify_cq_callback),
        create_qp: Some(Qp::<T>::create_qp_callback),
        modify_qp: Some(Qp::<T>::modify_qp_callback),
        query_qp: Some(Qp::<T>::query_qp_callback),
        destroy_qp: Some(Qp::<T>::destroy_qp_callback),
        post_send: Some(Qp::<T>::post_send_callback),
        post_recv: Some(Qp::<T>::post_recv_callback),
        create_ah: Some(Ah::create_ah_callback),
        query_ah: Some(Ah::query_ah_callback),
        destroy_ah: Some(Ah::destroy_ah_callback),
        alloc_hw_port_stats: if T::HAS_PORT_COUNTERS {
            Some(Self::alloc_hw_port_stats)
        } else {
            None
        },
        get_hw_stats: if T::HAS_PORT_COUNTERS {
            Some(Self::get_hw_stats)
        } else {
            None
        },
        alloc_rdma_netdev: if T::HAS_ALLOC_VNIC {
            Some(super::vnic::Adapter::<T>::alloc_rdma_netdev)
        } else {
            None
        },
        size_ib_pd: size_of::<bindings::ib_pd>(),
        size_ib_cq: size_of::<Cq>(),
        size_ib_qp: size_of::<Qp<T>>(),
        size_ib_ah: size_of::<Ah>(),
        // SAFETY: All other ops are absent (null) and all other sizes zero, which is how the
        // IB core knows they are not supported.
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    /// # Safety
    ///
    /// Called by the IB core only, with a device of `T`.
    unsafe extern "C" fn query_device(
        ibdev: *mut bindings::ib_device,
        attr: *mut bindings::ib_device_attr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: The core passes a device of this driver, allocated and initialised by
        // `Registration::new` and alive during the call.
        let dev = unsafe { Device::<T>::from_raw(ibdev) };
        let a = T::query_device(dev);
        let clamp = |v: u32| v.min(i32::MAX as u32) as c_int;
        let mut kcap = bindings::ib_kernel_cap_flags_IBK_LOCAL_DMA_LKEY as u64;
        if a.opa_vnic {
            kcap |= bindings::ib_kernel_cap_flags_IBK_RDMA_NETDEV_OPA as u64;
        }
        // SAFETY: `attr` is a valid, zeroed `ib_device_attr` the core passes for filling.
        let attr = unsafe { &mut *attr };
        attr.sys_image_guid = a.sys_image_guid.to_be();
        attr.vendor_id = a.vendor_id;
        attr.vendor_part_id = a.vendor_part_id;
        attr.max_mr_size = 0;
        attr.page_size_cap = 4096;
        attr.max_qp = clamp(a.max_qp);
        attr.max_qp_wr = clamp(a.max_qp_wr);
        attr.max_send_sge = clamp(a.max_sge);
        attr.max_recv_sge = clamp(a.max_sge);
        attr.max_cq = clamp(a.max_cq);
        attr.max_cqe = clamp(a.max_cqe);
        attr.max_pd = clamp(a.max_pd);
        attr.max_ah = clamp(a.max_ah);
        attr.max_pkeys = a.max_pkeys;
        attr.kernel_cap_flags = kcap;
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a device of `T` and a port attribute to fill.
    unsafe extern "C" fn query_port(
        ibdev: *mut bindings::ib_device,
        port: u32,
        attr: *mut bindings::ib_port_attr,
    ) -> c_int {
        // SAFETY: As in `query_device`.
        let dev = unsafe { Device::<T>::from_raw(ibdev) };
        let a = match T::query_port(dev, port) {
            Ok(a) => a,
            Err(e) => return e.to_errno(),
        };
        // SAFETY: `attr` is a valid `ib_port_attr` the core passes for filling (it zeroes it
        // first).
        let attr = unsafe { &mut *attr };
        attr.state = match a.state {
            PortState::Down => bindings::ib_port_state_IB_PORT_DOWN,
            PortState::Init => bindings::ib_port_state_IB_PORT_INIT,
            PortState::Armed => bindings::ib_port_state_IB_PORT_ARMED,
            PortState::Active => bindings::ib_port_state_IB_PORT_ACTIVE,
        };
        attr.phys_state = if a.state == PortState::Down {
            bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_POLLING as u8
        } else {
            bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP as u8
        };
        attr.max_mtu = bindings::ib_mtu_IB_MTU_4096;
        attr.active_mtu = bindings::ib_mtu_IB_MTU_4096;
        attr.phys_mtu = 8192;
        attr.lid = a.lid;
        attr.sm_lid = a.sm_lid;
        attr.lmc = a.lmc;
        attr.gid_tbl_len = a.gid_tbl_len as c_int;
        attr.pkey_tbl_len = a.pkey_tbl_len;
        attr.port_cap_flags = a.port_cap_flags;
        attr.max_msg_sz = a.max_msg_sz;
        attr.bad_pkey_cntr = a.bad_pkey_cntr;
        attr.qkey_viol_cntr = a.qkey_viol_cntr;
        attr.max_vl_num = 4;
        attr.subnet_timeout = 18;
        attr.active_width = bindings::ib_port_width_IB_WIDTH_4X as u8;
        attr.active_speed = bindings::ib_port_speed_IB_SPEED_EDR as u16;
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only (`ib_modify_port()`, which checked the port), with a device
    /// of `T` and a valid `ib_port_modify`.
    unsafe extern "C" fn modify_port(
        ibdev: *mut bindings::ib_device,
        port: u32,
        flags: c_int,
        modify: *mut bindings::ib_port_modify,
    ) -> c_int {
        // SAFETY: As in `query_device`.
        let dev = unsafe { Device::<T>::from_raw(ibdev) };
        // SAFETY: The core passes a valid `ib_port_modify` for reading.
        let m = unsafe { &*modify };
        let flag = |f: bindings::ib_port_modify_flags| flags & f as c_int != 0;
        let change = PortModify {
            mask: if flag(bindings::ib_port_modify_flags_IB_PORT_OPA_MASK_CHG) {
                PortCapMask::Opa3
            } else {
                PortCapMask::Ib
            },
            set: m.set_port_cap_mask,
            clear: m.clr_port_cap_mask,
            shutdown: flag(bindings::ib_port_modify_flags_IB_PORT_SHUTDOWN),
            reset_qkey_cntr: flag(bindings::ib_port_modify_flags_IB_PORT_RESET_QKEY_CNTR),
        };
        errno(T::modify_port(dev, port, &change))
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a device of `T`.
    unsafe extern "C" fn get_port_immutable(
        ibdev: *mut bindings::ib_device,
        port: u32,
        imm: *mut bindings::ib_port_immutable,
    ) -> c_int {
        // SAFETY: As in `query_device`.
        let dev = unsafe { Device::<T>::from_raw(ibdev) };
        let a = match T::port_immutable(dev, port) {
            Ok(a) => a,
            Err(e) => return e.to_errno(),
        };
        // SAFETY: `imm` is a valid `ib_port_immutable` the core passes for filling.
        let imm = unsafe { &mut *imm };
        imm.pkey_tbl_len = a.pkey_tbl_len.into();
        imm.gid_tbl_len = a.gid_tbl_len as c_int;
        if a.opa {
            imm.core_cap_flags = bindings::RDMA_CORE_PORT_INTEL_OPA;
            imm.max_mad_size = bindings::OPA_MGMT_MAD_SIZE;
        } else {
            imm.core_cap_flags = bindings::RDMA_CORE_PORT_IBA_IB;
            imm.max_mad_size = bindings::IB_MGMT_MAD_SIZE;
        }
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a device of `T`.
    unsafe extern "C" fn query_pkey(
        ibdev: *mut bindings::ib_device,
        port: u32,
        index: u16,
        pkey: *mut u16,
    ) -> c_int {
        // SAFETY: As in `query_device`.
        let dev = unsafe { Device::<T>::from_raw(ibdev) };
        match T::query_pkey(dev, port, index) {
            Ok(p) => {
                // SAFETY: `pkey` is valid for writing, by the op's contract.
                unsafe { *pkey = p };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a device of `T`.
    unsafe extern "C" fn query_gid(
        ibdev: *mut bindings::ib_device,
        port: u32,
        index: c_int,
        gid: *mut bindings::ib_gid,
    ) -> c_int {
        // SAFETY: As in `query_device`.
        let dev = unsafe { Device::<T>::from_raw(ibdev) };
        let Ok(index) = u32::try_from(index) else {
            return EINVAL.to_errno();
        };
        match T::query_gid(dev, port, index) {
            Ok(g) => {
                // SAFETY: `gid` is valid for writing, by the op's contract; `raw` is the byte
                // view of the union.
                unsafe { (*gid).raw = g };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a device of `T`.
    unsafe extern "C" fn alloc_hw_port_stats(
        _ibdev: *mut bindings::ib_device,
        _port: u32,
    ) -> *mut bindings::rdma_hw_stats {
        let descs = T::port_counter_descs();
        let Ok(n) = c_int::try_from(descs.len()) else {
            return core::ptr::null_mut();
        };
        // SAFETY: `descs` is a static array of `n` valid descriptors (`StatDesc` is a
        // transparent `rdma_stat_desc`), which outlives the statistics.
        unsafe { bindings::rdma_alloc_hw_stats_struct(descs.as_ptr().cast(), n, 10) }
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a device of `T` and statistics `alloc_hw_port_stats`
    /// allocated.
    unsafe extern "C" fn get_hw_stats(
        ibdev: *mut bindings::ib_device,
        stats: *mut bindings::rdma_hw_stats,
        port: u32,
        _index: c_int,
    ) -> c_int {
        // SAFETY: As in `query_device`.
        let dev = unsafe { Device::<T>::from_raw(ibdev) };
        // SAFETY: `stats` was allocated by `alloc_hw_port_stats` with `num_counters` values;
        // the core holds its lock during the call.
        let vals = unsafe {
            let n = usize::try_from((*stats).num_counters).unwrap_or(0);
            (*stats).value.as_mut_slice(n)
        };
        let n = vals.len() as c_int;
        match T::port_counters(dev, port, vals) {
            Ok(()) => n,
            Err(e) => e.to_errno(),
        }
    }

    /// PDs carry nothing: the core allocates and tracks them.
    ///
    /// # Safety
    ///
    /// Called by the IB core only, as the `ib_device_ops` member of the same name, with valid
    /// arguments.
    unsafe extern "C" fn alloc_pd(
        _pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, as the `ib_device_ops` member of the same name, with valid
    /// arguments.
    unsafe extern "C" fn dealloc_pd(
        _pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        0
    }

    /// No memory registration: the device uses virtual addresses and `local_dma_lkey`.
    ///
    /// # Safety
    ///
    /// Called by the IB core only, as the `ib_device_ops` member of the same name, with valid
    /// arguments.
    unsafe extern "C" fn get_dma_mr(
        _pd: *mut bindings::ib_pd,
        _flags: c_int,
    ) -> *mut bindings::ib_mr {
        EOPNOTSUPP.to_ptr()
    }

    /// # Safety
    ///
    /// Called by the IB core only, as the `ib_device_ops` member of the same name, with valid
    /// arguments.
    unsafe extern "C" fn reg_user_mr(
        _pd: *mut bindings::ib_pd,
        _start: u64,
        _length: u64,
        _virt: u64,
        _flags: c_int,
        _udata: *mut bindings::ib_udata,
    ) -> *mut bindings::ib_mr {
        EOPNOTSUPP.to_ptr()
    }

    /// # Safety
    ///
    /// Called by the IB core only, as the `ib_device_ops` member of the same name, with valid
    /// arguments.
    unsafe extern "C" fn dereg_mr(
        _mr: *mut bindings::ib_mr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        EOPNOTSUPP.to_errno()
    }
}
