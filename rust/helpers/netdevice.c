// SPDX-License-Identifier: GPL-2.0

#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>

void *rust_helper_netdev_priv(const struct net_device *dev)
{
	return netdev_priv(dev);
}

unsigned int rust_helper_skb_headroom(const struct sk_buff *skb)
{
	return skb_headroom(skb);
}

struct sk_buff *rust_helper_alloc_skb(unsigned int size, gfp_t priority)
{
	return alloc_skb(size, priority);
}

void rust_helper_skb_reserve(struct sk_buff *skb, int len)
{
	skb_reserve(skb, len);
}

unsigned int rust_helper_skb_tailroom(const struct sk_buff *skb)
{
	return skb_tailroom(skb);
}

int rust_helper_skb_cow_head(struct sk_buff *skb, unsigned int headroom)
{
	return skb_cow_head(skb, headroom);
}

u32 rust_helper_skb_get_hash(struct sk_buff *skb)
{
	return skb_get_hash(skb);
}

void rust_helper_skb_set_hash(struct sk_buff *skb, u32 hash, enum pkt_hash_types type)
{
	skb_set_hash(skb, hash, type);
}

bool rust_helper_skb_vlan_tag_present(const struct sk_buff *skb)
{
	return skb_vlan_tag_present(skb);
}

u16 rust_helper_skb_vlan_tag_get(const struct sk_buff *skb)
{
	return skb_vlan_tag_get(skb);
}

/*
 * skb->protocol sits in a struct_group inside an anonymous union, which
 * bindgen names by position: read and write it here instead.
 */
__be16 rust_helper_skb_protocol(const struct sk_buff *skb)
{
	return skb->protocol;
}

void rust_helper_skb_set_protocol(struct sk_buff *skb, __be16 protocol)
{
	skb->protocol = protocol;
}

/*
 * Without free_on_error: on failure the buffer is left to its Rust owner,
 * which frees it with dev_kfree_skb_any() (transmit may run with interrupts
 * off, under netpoll, where skb_put_padto()'s kfree_skb() must not run a
 * destructor).
 */
int rust_helper___skb_put_padto(struct sk_buff *skb, unsigned int len,
				bool free_on_error)
{
	return __skb_put_padto(skb, len, free_on_error);
}

void rust_helper_netif_dormant_on(struct net_device *dev)
{
	netif_dormant_on(dev);
}

void rust_helper_netif_dormant_off(struct net_device *dev)
{
	netif_dormant_off(dev);
}

/* priv_flags is a bitfield in an anonymous union, out of bindgen's reach. */
void rust_helper_netdev_add_priv_flags(struct net_device *dev, unsigned long long flags)
{
	dev->priv_flags |= flags;
}

void rust_helper_netdev_clear_priv_flags(struct net_device *dev, unsigned long long flags)
{
	dev->priv_flags &= ~flags;
}

void rust_helper_netif_addr_lock_bh(struct net_device *dev)
{
	netif_addr_lock_bh(dev);
}

void rust_helper_netif_addr_unlock_bh(struct net_device *dev)
{
	netif_addr_unlock_bh(dev);
}

const char *rust_helper_dev_name(const struct device *dev)
{
	return dev_name(dev);
}

void rust_helper_dev_core_stats_tx_dropped_inc(struct net_device *dev)
{
	dev_core_stats_tx_dropped_inc(dev);
}

unsigned int rust_helper_skb_nr_frags(const struct sk_buff *skb)
{
	return skb_shinfo(skb)->nr_frags;
}

void rust_helper_netif_stop_subqueue(struct net_device *dev, u16 queue_index)
{
	netif_stop_subqueue(dev, queue_index);
}

void rust_helper_netif_wake_subqueue(struct net_device *dev, u16 queue_index)
{
	netif_wake_subqueue(dev, queue_index);
}

bool rust_helper___netif_subqueue_stopped(const struct net_device *dev,
					  u16 queue_index)
{
	return __netif_subqueue_stopped(dev, queue_index);
}

void rust_helper_local_bh_disable(void)
{
	local_bh_disable();
}

void rust_helper_local_bh_enable(void)
{
	local_bh_enable();
}

void rust_helper_netif_napi_add(struct net_device *dev, struct napi_struct *napi,
				int (*poll)(struct napi_struct *, int))
{
	netif_napi_add(dev, napi, poll);
}

void rust_helper_netif_napi_del(struct napi_struct *napi)
{
	netif_napi_del(napi);
}

bool rust_helper_napi_schedule(struct napi_struct *n)
{
	return napi_schedule(n);
}
