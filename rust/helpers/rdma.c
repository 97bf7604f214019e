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

/* opasim: the OPA VNIC netdevs of software devices (rust/kernel/rdma/vnic.rs). */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>

void rust_helper_dev_hold(struct net_device *dev)
{
	dev_hold(dev);
}

void rust_helper_dev_put(struct net_device *dev)
{
	dev_put(dev);
}

bool rust_helper_netif_oper_up(const struct net_device *dev)
{
	return netif_oper_up(dev);
}

void rust_helper_netif_tx_start_all_queues(struct net_device *dev)
{
	netif_tx_start_all_queues(dev);
}

void rust_helper_netif_tx_disable(struct net_device *dev)
{
	netif_tx_disable(dev);
}

void rust_helper_skb_eth_protocol_set(struct sk_buff *skb, struct net_device *dev)
{
	skb->protocol = eth_type_trans(skb, dev);
}

/* The MAD agents' address handles (rust/kernel/rdma/mad.rs). */

enum rdma_ah_attr_type rust_helper_rdma_ah_find_type(struct ib_device *dev, u32 port_num)
{
	return rdma_ah_find_type(dev, port_num);
}

void rust_helper_rdma_ah_set_dlid(struct rdma_ah_attr *attr, u32 dlid)
{
	rdma_ah_set_dlid(attr, dlid);
}

void rust_helper_rdma_ah_set_sl(struct rdma_ah_attr *attr, u8 sl)
{
	rdma_ah_set_sl(attr, sl);
}

void rust_helper_rdma_ah_set_port_num(struct rdma_ah_attr *attr, u32 port_num)
{
	rdma_ah_set_port_num(attr, port_num);
}
