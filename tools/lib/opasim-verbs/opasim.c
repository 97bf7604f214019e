// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The rdma-core provider of opasim, the Omni-Path software devices: it lets
 * libibverbs list and open them, query them and their ports, and read their
 * async events (port active/down, LID, P_Key and SM changes).
 *
 * A user context is all the kernel side offers (see the kernel's
 * rust/kernel/rdma/provider/ucontext.rs): no driver data in any command
 * (user ABI version 1), and no user CQ, QP or memory region, so every verb
 * not set here answers EOPNOTSUPP (libibverbs' defaults).
 *
 * opasim registers its devices with RDMA_DRIVER_UNKNOWN (it has no driver id
 * of its own in the kernel's uapi) and without a parent bus device, so
 * libibverbs can match it only by the device name, "opasim<N>".
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/driver.h>

/* The kernel's user ABI version of opasim's devices (uverbs_abi_ver). */
#define OPASIM_UVERBS_ABI_VERSION 1

struct opasim_device {
	struct verbs_device vdev;
};

struct opasim_context {
	struct verbs_context vctx;
};

static int opasim_query_device_ex(struct ibv_context *ctx,
				  const struct ibv_query_device_ex_input *input,
				  struct ibv_device_attr_ex *attr,
				  size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int opasim_query_port(struct ibv_context *ctx, uint8_t port,
			     struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

static void opasim_free_context(struct ibv_context *ibctx)
{
	struct opasim_context *ctx =
		container_of(ibctx, struct opasim_context, vctx.context);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops opasim_ctx_ops = {
	.query_device_ex = opasim_query_device_ex,
	.query_port = opasim_query_port,
	.free_context = opasim_free_context,
};

static struct verbs_context *opasim_alloc_context(struct ibv_device *ibdev,
						  int cmd_fd,
						  void *private_data)
{
	struct ib_uverbs_get_context_resp resp;
	struct ibv_get_context cmd = {};
	struct opasim_context *ctx;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	if (ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp,
				sizeof(resp))) {
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		return NULL;
	}

	verbs_set_ops(&ctx->vctx, &opasim_ctx_ops);
	return &ctx->vctx;
}

static struct verbs_device *
opasim_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct opasim_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->vdev;
}

static void opasim_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct opasim_device, vdev));
}

/*
 * By name: the kernel gives opasim no driver id and no bus device (so no
 * modalias) to match on. This matches only a device still named opasim<N>;
 * a renamed device is not opened.
 */
static const struct verbs_match_ent opasim_match_table[] = {
	VERBS_NAME_MATCH("opasim", NULL),
	{},
};

/*
 * The name is not enough: another driver could register an "opasim..."
 * device. Only one with opasim's user ABI and no driver id is ours.
 */
static bool opasim_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	return sysfs_dev->match &&
	       sysfs_dev->driver_id == RDMA_DRIVER_UNKNOWN &&
	       strncmp(sysfs_dev->ibdev_name, "opasim", 6) == 0;
}

static const struct verbs_device_ops opasim_dev_ops = {
	.name = "opasim",
	.match_min_abi_version = OPASIM_UVERBS_ABI_VERSION,
	.match_max_abi_version = OPASIM_UVERBS_ABI_VERSION,
	.match_table = opasim_match_table,
	.match_device = opasim_match_device,
	.alloc_device = opasim_alloc_device,
	.uninit_device = opasim_uninit_device,
	.alloc_context = opasim_alloc_context,
};

PROVIDER_DRIVER(opasim, opasim_dev_ops);
