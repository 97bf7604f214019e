// SPDX-License-Identifier: GPL-2.0

#include <rdma/ib_verbs.h>
#include <rdma/opa_vnic.h>

/*
 * Only pure accessors of struct ib_device live here: the helpers are linked
 * into vmlinux, and they must not reference symbols of a modular IB core.
 */

u32 rust_helper_rdma_start_port(const struct ib_device *device)
{
	return rdma_start_port(device);
}

u32 rust_helper_rdma_end_port(const struct ib_device *device)
{
	return rdma_end_port(device);
}

bool rust_helper_rdma_cap_opa_mad(struct ib_device *device, u32 port_num)
{
	return rdma_cap_opa_mad(device, port_num);
}

bool rust_helper_rdma_cap_opa_vnic(struct ib_device *device)
{
	return rdma_cap_opa_vnic(device);
}

/* opasim: the software OPA device (rust/kernel/rdma/{provider,verbs}.rs). */

void rust_helper_init_completion(struct completion *x)
{
	init_completion(x);
}
