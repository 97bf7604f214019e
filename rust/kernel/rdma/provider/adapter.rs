// SPDX-License-Identifier: GPL-2.0

//! The `struct ib_device_ops` of a provider and its device-level trampolines.

use super::ucontext;
use super::{errno, PortCapMask, PortModify, PortState, Provider, ProviderDevice, NODE_DESC_LEN};
use crate::rdma::verbs::{Ah, Cq, Qp};
use crate::rdma::vnic::VnicOps;
use crate::{bindings, error::code::*};
use core::{ffi::c_int, marker::PhantomData, mem::size_of};

/// The `struct ib_device_ops` of a provider `T` and the device-level trampolines.
pub(crate) struct Adapter<T: Provider>(PhantomData<T>);

impl<T: Provider> Adapter<T> {
    pub(super) const OPS: bindings::ib_device_ops = bindings::ib_device_ops {
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
        modify_device: if T::HAS_MODIFY_NODE_DESC {
            Some(Self::modify_device)
        } else {
            None
        },
        query_gid: Some(Self::query_gid),
        process_mad: if T::HAS_PROCESS_MAD {
            Some(Self::process_mad)
        } else {
            None
        },
        alloc_pd: Some(Self::alloc_pd),
        dealloc_pd: Some(Self::dealloc_pd),
        get_dma_mr: Some(Self::get_dma_mr),
        reg_user_mr: Some(Self::reg_user_mr),
        dereg_mr: Some(Self::dereg_mr),
        create_cq: Some(Cq::<T>::create_cq_callback),
        pre_destroy_cq: Some(Cq::<T>::pre_destroy_cq_callback),
        destroy_cq: Some(Cq::<T>::destroy_cq_callback),
        poll_cq: Some(Cq::<T>::poll_cq_callback),
        req_notify_cq: Some(Cq::<T>::req_notify_cq_callback),
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
        alloc_rdma_netdev: if <T::Vnic as VnicOps<T>>::SUPPORTED {
            Some(crate::rdma::vnic::Adapter::<T>::alloc_rdma_netdev)
        } else {
            None
        },
        size_ib_pd: size_of::<bindings::ib_pd>(),
        size_ib_cq: size_of::<Cq<T>>(),
        size_ib_qp: size_of::<Qp<T>>(),
        size_ib_ah: size_of::<Ah>(),
        alloc_ucontext: Some(ucontext::alloc_ucontext),
        dealloc_ucontext: Some(ucontext::dealloc_ucontext),
        disassociate_ucontext: Some(ucontext::disassociate_ucontext),
        size_ib_ucontext: ucontext::SIZE,
        uverbs_abi_ver: ucontext::UVERBS_ABI_VER,
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
        let dev = unsafe { ProviderDevice::<T>::from_raw(ibdev) };
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
        let dev = unsafe { ProviderDevice::<T>::from_raw(ibdev) };
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
        attr.max_mtu = a.mtu.raw();
        attr.active_mtu = a.mtu.raw();
        attr.phys_mtu = a.phys_mtu;
        attr.lid = a.lid;
        attr.sm_lid = a.sm_lid;
        attr.sm_sl = a.sm_sl;
        attr.lmc = a.lmc;
        attr.gid_tbl_len = a.gid_tbl_len as c_int;
        attr.pkey_tbl_len = a.pkey_tbl_len;
        attr.port_cap_flags = a.port_cap_flags;
        attr.max_msg_sz = a.max_msg_sz;
        attr.bad_pkey_cntr = a.bad_pkey_cntr;
        attr.qkey_viol_cntr = a.qkey_viol_cntr;
        attr.max_vl_num = a.max_vl_num;
        attr.subnet_timeout = a.subnet_timeout;
        attr.active_width = a.active_width;
        attr.active_speed = a.active_speed;
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
        let dev = unsafe { ProviderDevice::<T>::from_raw(ibdev) };
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
    /// Called by the IB core only (`ib_modify_device()`), with a device of `T` and a valid
    /// `ib_device_modify`.
    unsafe extern "C" fn modify_device(
        ibdev: *mut bindings::ib_device,
        mask: c_int,
        modify: *mut bindings::ib_device_modify,
    ) -> c_int {
        // As hfi1's `modify_device()`: only the node description may change here.
        if mask & !(bindings::ib_device_modify_flags_IB_DEVICE_MODIFY_NODE_DESC as c_int) != 0 {
            return EOPNOTSUPP.to_errno();
        }
        if mask == 0 {
            return 0;
        }
        // SAFETY: As in `query_device`.
        let dev = unsafe { ProviderDevice::<T>::from_raw(ibdev) };
        // SAFETY: The core passes a valid `ib_device_modify` for reading.
        let src = unsafe { &(*modify).node_desc };
        let mut desc = [0u8; NODE_DESC_LEN];
        for (d, s) in desc.iter_mut().zip(src.iter()) {
            *d = *s as _;
        }
        if let Err(e) = T::modify_node_desc(dev, &desc) {
            return e.to_errno();
        }
        // SAFETY: `ibdev` is a registered device of `T`. The IB core's readers of
        // `node_desc` (sysfs, the SMA's NodeDescription) take no lock, and hfi1's
        // `modify_device()` writes it with a plain `memcpy()` in the same way: a reader racing
        // a change may see a mix of both descriptions, as on hfi1.
        unsafe { (*ibdev).node_desc = *src };
        0
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
        let dev = unsafe { ProviderDevice::<T>::from_raw(ibdev) };
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
        let dev = unsafe { ProviderDevice::<T>::from_raw(ibdev) };
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
        let dev = unsafe { ProviderDevice::<T>::from_raw(ibdev) };
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
        let dev = unsafe { ProviderDevice::<T>::from_raw(ibdev) };
        // SAFETY: `stats` was allocated by `alloc_hw_port_stats` with `num_counters` values;
        // the core holds its lock during the call (or calls it once before its sysfs files
        // exist, `setup_hw_port_stats()`, with nothing else using it).
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
