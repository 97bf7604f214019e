// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * KUnit suite hfi1_vnic_rx: the VNIC receive path of hfi1, with no chip.
 *
 * hfi1_vnic_bypass_rcv() runs in the NAPI poll of a netdev receive context
 * (hfi1_netdev_rx_napi() -> rcd->do_interrupt() -> netdev_rhf_rcv_functions).
 * This suite stands in for the chip and for netdev_rx.c's contexts: it owns
 * a NAPI on a dummy netdev, points a hand-made receive context at it (what
 * hfi1_netdev_rxq_init() does with rcd->napi), and from that NAPI's poll
 * hands crafted 16B bypass packets to the real hfi1_vnic_bypass_rcv(). The
 * VNIC netdev is built as hfi1_vnic_alloc_rn() builds it and is entered in
 * the real netdev_rx.c table (hfi1_alloc_rx(), hfi1_netdev_add_data()), but
 * hfi1_vnic_init() and hfi1_netdev_open() are not called: they allocate
 * SDMA state and hardware receive contexts. A packet_type tap on the VNIC
 * netdev sees what the stack receives; GRO runs in its real softirq context
 * and is flushed by the poll's napi_complete_done().
 *
 * On 6.12 without "IB/hfi1: deliver VNIC receive through the netdev receive
 * queue NAPI", hfi1_vnic_bypass_rcv() passes the skb to
 * napi_gro_receive(&vinfo->rxq[q_idx].napi), a NAPI nobody ever gave to
 * netif_napi_add(): its GRO lists are zeroed, so dev_gro_receive() ->
 * gro_list_prepare() follows a NULL list pointer and the kernel oopses (a
 * NULL pointer dereference in the test NAPI's softirq, "Fatal exception in
 * interrupt") in vnic_rx_good_frame, the first case. The cases that drop
 * the packet before napi_gro_receive() pass on both.
 *
 * Without "IB/hfi1: drop VNIC packets the chip flagged, count only good
 * ones received", vnic_rx_rhf_errors sees the flagged packets delivered, and
 * vnic_rx_oversize and vnic_rx_runt see the dropped frames in rx_packets.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "hfi.h"
#include "netdev.h"
#include "vnic.h"

/* vesw ids: the vport's, one with another low byte, its 8-bit alias */
#define VK_VESW_ID		0x123
#define VK_VESW_ID_UNKNOWN	0x124
#define VK_VESW_ID_ALIAS	0x223

/* An EtherType no protocol of the stack takes, so only the tap sees it */
#define VK_ETH_P		ETH_P_802_EX1
#define VK_MAX_PKTS		4
#define VK_TIMEOUT		(5 * HZ)

struct vnic_kunit_ctx {
	struct pci_dev *pdev;
	struct hfi1_devdata *dd;
	/* the receive context the packets "arrived" on */
	struct hfi1_ctxtdata *rcd;
	/* the NAPI of that context and the dummy netdev it is added to */
	struct net_device *napi_dev;
	struct napi_struct napi;
	bool napi_enabled;
	struct completion polled;
	/* what the next poll hands to hfi1_vnic_bypass_rcv() */
	struct hfi1_packet pkts[VK_MAX_PKTS];
	int npkts;
	/* the VNIC netdev and its vport */
	struct net_device *netdev;
	struct hfi1_vnic_vport_info *vinfo;
	bool registered;
	bool in_table;
	/* the receive tap on the VNIC netdev */
	struct packet_type tap;
	bool tap_added;
	atomic_t tap_frames;
	atomic_t tap_len;
};

static const u8 vk_src_mac[ETH_ALEN] __aligned(2) = {
	0x02, 0x00, 0x00, 0x4b, 0x55, 0x01
};

/*
 * The poll of the test's NAPI: what hfi1_netdev_rx_napi() does for a
 * netdev receive context, with the packets taken from the test instead of
 * the receive header queue.
 */
static int vnic_kunit_poll(struct napi_struct *napi, int budget)
{
	struct vnic_kunit_ctx *ctx = container_of(napi, struct vnic_kunit_ctx,
						  napi);
	int i;

	for (i = 0; i < ctx->npkts; i++)
		hfi1_vnic_bypass_rcv(&ctx->pkts[i]);

	/* npkts < budget: completing here delivers the GRO batch */
	napi_complete_done(napi, ctx->npkts);
	complete(&ctx->polled);
	return ctx->npkts;
}

/* Counts the frames the VNIC netdev receives; consumes them */
static int vnic_kunit_tap_rcv(struct sk_buff *skb, struct net_device *dev,
			      struct packet_type *pt,
			      struct net_device *orig_dev)
{
	struct vnic_kunit_ctx *ctx = container_of(pt, struct vnic_kunit_ctx,
						  tap);

	if (skb->protocol == htons(VK_ETH_P)) {
		/* the Ethernet header was pulled by eth_type_trans() */
		atomic_set(&ctx->tap_len, skb->len + skb->mac_len);
		atomic_inc(&ctx->tap_frames);
	}
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

/* The device is never opened, but drop anything handed to it for sending */
static netdev_tx_t vnic_kunit_xmit(struct sk_buff *skb,
				   struct net_device *netdev)
{
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/*
 * Not hfi1_netdev_ops: its ndo_open (hfi1_vnic_up()) allocates hardware
 * receive contexts and its ndo_start_xmit/ndo_select_queue reach SDMA.
 */
static const struct net_device_ops vnic_kunit_netdev_ops = {
	.ndo_start_xmit = vnic_kunit_xmit,
};

/*
 * netif_oper_up() is what bypass_rcv checks. On a chip, hfi1_vnic_up()
 * gets there through netif_carrier_on() and linkwatch; the test never
 * changes the carrier, so linkwatch leaves operstate as set here.
 */
static void vnic_kunit_set_operstate(struct net_device *netdev,
				     unsigned int state)
{
	rtnl_lock();
	WRITE_ONCE(netdev->operstate, state);
	rtnl_unlock();
}

/* The VNIC netdev and vport as hfi1_vnic_alloc_rn() makes them */
static int vnic_kunit_alloc_vport(struct vnic_kunit_ctx *ctx)
{
	struct hfi1_vnic_vport_info *vinfo;
	struct net_device *netdev;
	int size, i;

	size = sizeof(struct opa_vnic_rdma_netdev) + sizeof(*vinfo);
	/* one TX queue: a zeroed dd has no SDMA engines to count */
	netdev = alloc_netdev_mqs(size, "hfi1vk%d", NET_NAME_ENUM,
				  ether_setup, 1,
				  ctx->dd->num_netdev_contexts);
	if (!netdev)
		return -ENOMEM;

	vinfo = opa_vnic_dev_priv(netdev);
	vinfo->dd = ctx->dd;
	vinfo->num_tx_q = 1;
	vinfo->num_rx_q = ctx->dd->num_netdev_contexts;
	vinfo->netdev = netdev;
	vinfo->vesw_id = VK_VESW_ID;
	mutex_init(&vinfo->lock);

	netdev->features = NETIF_F_HIGHDMA | NETIF_F_SG;
	netdev->hw_features = netdev->features;
	netdev->vlan_features = netdev->features;
	netdev->netdev_ops = &vnic_kunit_netdev_ops;
	eth_hw_addr_random(netdev);

	for (i = 0; i < vinfo->num_rx_q; i++) {
		struct hfi1_vnic_rx_queue *rxq = &vinfo->rxq[i];

		rxq->idx = i;
		rxq->vinfo = vinfo;
		rxq->netdev = netdev;
	}

	ctx->netdev = netdev;
	ctx->vinfo = vinfo;
	return 0;
}

/*
 * Lay out a packet as the chip hands a 16B bypass packet to
 * hfi1_vnic_bypass_rcv(): the 16B LRH with L4 type ETHR and the L4 header
 * holding the vesw id (as opa_vnic_make_header() writes them), the Ethernet
 * frame, a pad to 8 bytes, the ICRC and the tail byte whose low 3 bits are
 * the pad count.
 */
static void vnic_kunit_add_pkt(struct kunit *test, u16 vesw_id,
			       unsigned int eth_len)
{
	struct vnic_kunit_ctx *ctx = test->priv;
	u32 h[OPA_VNIC_HDR_LEN / sizeof(u32)] = { 0, 0xc0000000, 0, 0, 0 };
	struct hfi1_packet *pkt;
	unsigned int pad, tlen, i;
	struct ethhdr *eth;
	u8 *buf;

	KUNIT_ASSERT_LT(test, ctx->npkts, VK_MAX_PKTS);
	KUNIT_ASSERT_GE(test, eth_len, (unsigned int)ETH_HLEN);

	pad = -(OPA_VNIC_HDR_LEN + eth_len + OPA_VNIC_ICRC_TAIL_LEN) & 0x7;
	tlen = OPA_VNIC_HDR_LEN + eth_len + pad + OPA_VNIC_ICRC_TAIL_LEN;
	KUNIT_ASSERT_LE(test, tlen, (unsigned int)U16_MAX);

	buf = kunit_kzalloc(test, tlen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	h[2] = OPA_16B_L4_ETHR;
	h[4] = (u32)vesw_id << 16;
	memcpy(buf, h, sizeof(h));
	/* the field the driver reads back must hold the id we meant */
	KUNIT_ASSERT_EQ(test, hfi1_16B_get_l4((struct hfi1_16b_header *)buf),
			(u8)OPA_16B_L4_ETHR);
	KUNIT_ASSERT_EQ(test, (u16)HFI1_VNIC_GET_VESWID(buf), vesw_id & 0xfff);

	eth = (struct ethhdr *)(buf + OPA_VNIC_HDR_LEN);
	ether_addr_copy(eth->h_dest, ctx->netdev->dev_addr);
	ether_addr_copy(eth->h_source, vk_src_mac);
	eth->h_proto = htons(VK_ETH_P);
	for (i = ETH_HLEN; i < eth_len; i++)
		buf[OPA_VNIC_HDR_LEN + i] = (u8)i;

	/* the ICRC is not checked on receive; the tail says the pad */
	buf[tlen - 1] = pad;

	pkt = &ctx->pkts[ctx->npkts++];
	memset(pkt, 0, sizeof(*pkt));
	pkt->rcd = ctx->rcd;
	pkt->ebuf = buf;
	pkt->tlen = tlen;
}

/* Run the queued packets through bypass_rcv in the test NAPI's poll */
static void vnic_kunit_rx(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx = test->priv;

	reinit_completion(&ctx->polled);
	/* the poll runs in NET_RX softirq, at latest on local_bh_enable() */
	local_bh_disable();
	napi_schedule(&ctx->napi);
	local_bh_enable();
	KUNIT_ASSERT_NE_MSG(test,
			    wait_for_completion_timeout(&ctx->polled,
							VK_TIMEOUT),
			    0, "the test NAPI was not polled");
	ctx->npkts = 0;
}

static int vnic_kunit_init(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx;
	struct hfi1_devdata *dd;
	int rc;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;
	init_completion(&ctx->polled);
	atomic_set(&ctx->tap_frames, 0);
	atomic_set(&ctx->tap_len, 0);

	/*
	 * dd_dev_*() print through &dd->pcidev->dev and the name of the IB
	 * device: a zeroed device with a name is enough for dev_printk().
	 */
	ctx->pdev = kzalloc(sizeof(*ctx->pdev), GFP_KERNEL);
	if (!ctx->pdev)
		return -ENOMEM;
	ctx->pdev->dev.init_name = "hfi1_vnic_kunit";

	dd = kzalloc(sizeof(*dd), GFP_KERNEL);
	if (!dd)
		return -ENOMEM;
	ctx->dd = dd;
	dd->pcidev = ctx->pdev;
	dd->node = NUMA_NO_NODE;
	/* two queues: packets are counted on their context's queue */
	dd->num_netdev_contexts = 2;
	dd->verbs_dev.rdi.ibdev.dev.init_name = "hfi1_kunit";

	rc = hfi1_alloc_rx(dd);
	if (rc)
		return rc;

	ctx->napi_dev = alloc_netdev_dummy(0);
	if (!ctx->napi_dev)
		return -ENOMEM;
	netif_napi_add(ctx->napi_dev, &ctx->napi, vnic_kunit_poll);
	napi_enable(&ctx->napi);
	ctx->napi_enabled = true;

	/* what hfi1_netdev_rxq_init() sets up for a netdev context */
	ctx->rcd = kzalloc(sizeof(*ctx->rcd), GFP_KERNEL);
	if (!ctx->rcd)
		return -ENOMEM;
	ctx->rcd->dd = dd;
	ctx->rcd->is_vnic = true;
	ctx->rcd->vnic_q_idx = 0;
	ctx->rcd->napi = &ctx->napi;

	rc = vnic_kunit_alloc_vport(ctx);
	if (rc)
		return rc;
	rc = register_netdev(ctx->netdev);
	if (rc)
		return rc;
	ctx->registered = true;

	/* the part of hfi1_vnic_up() that does not need the chip */
	rc = hfi1_netdev_add_data(dd, VNIC_ID(ctx->vinfo->vesw_id), ctx->vinfo);
	if (rc)
		return rc;
	ctx->in_table = true;
	vnic_kunit_set_operstate(ctx->netdev, IF_OPER_UP);

	ctx->tap.type = htons(ETH_P_ALL);
	ctx->tap.dev = ctx->netdev;
	ctx->tap.func = vnic_kunit_tap_rcv;
	/* count what the device receives, not what is sent on it */
	ctx->tap.ignore_outgoing = true;
	dev_add_pack(&ctx->tap);
	ctx->tap_added = true;

	return 0;
}

/* Undo whatever vnic_kunit_init() did; it may have stopped half way */
static void vnic_kunit_exit(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx = test->priv;

	if (!ctx)
		return;

	/* before unregister: a netdev must not go with its taps attached */
	if (ctx->tap_added)
		dev_remove_pack(&ctx->tap);
	/* napi_disable() waits for a poll still scheduled */
	if (ctx->napi_enabled)
		napi_disable(&ctx->napi);
	if (ctx->in_table)
		hfi1_netdev_remove_data(ctx->dd, VNIC_ID(ctx->vinfo->vesw_id));
	if (ctx->registered)
		unregister_netdev(ctx->netdev);
	if (ctx->netdev) {
		mutex_destroy(&ctx->vinfo->lock);
		free_netdev(ctx->netdev);
	}
	if (ctx->napi_dev) {
		if (ctx->napi_enabled)
			netif_napi_del(&ctx->napi);
		free_netdev(ctx->napi_dev);
	}
	kfree(ctx->rcd);
	if (ctx->dd) {
		hfi1_free_rx(ctx->dd);
		kfree(ctx->dd);
	}
	kfree(ctx->pdev);
}

/* A good frame reaches the VNIC netdev, once, whole */
static void vnic_rx_good_frame(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx = test->priv;
	struct opa_vnic_stats *st = &ctx->vinfo->stats[0];

	vnic_kunit_add_pkt(test, VK_VESW_ID, 100);
	vnic_kunit_rx(test);

	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->tap_frames), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->tap_len), 100);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_packets, 1ULL);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_bytes, 100ULL + ETH_FCS_LEN);
	KUNIT_EXPECT_EQ(test, st->rx_grp.unicast, 1ULL);
	KUNIT_EXPECT_EQ(test, st->rx_grp.untagged, 1ULL);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_nohandler, 0ULL);
	KUNIT_EXPECT_EQ(test, st->rx_drop_state, 0ULL);
}

/* The shortest and the longest frame bypass_rcv accepts, in one poll */
static void vnic_rx_length_limits(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx = test->priv;
	unsigned int max_len = ctx->netdev->mtu + VLAN_ETH_HLEN;

	vnic_kunit_add_pkt(test, VK_VESW_ID, ETH_ZLEN);
	vnic_kunit_add_pkt(test, VK_VESW_ID, max_len);
	vnic_kunit_rx(test);

	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->tap_frames), 2);
	/* the tap keeps the last length: the GRO batch keeps the order */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->tap_len), (int)max_len);
	KUNIT_EXPECT_EQ(test, ctx->vinfo->stats[0].netstats.rx_packets, 2ULL);
	KUNIT_EXPECT_EQ(test, ctx->vinfo->stats[0].rx_runt, 0ULL);
	KUNIT_EXPECT_EQ(test, ctx->vinfo->stats[0].rx_oversize, 0ULL);
}

/* No vport for the vesw id: counted on the first vport, not delivered */
static void vnic_rx_unknown_vesw(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx = test->priv;
	struct opa_vnic_stats *st = &ctx->vinfo->stats[0];

	vnic_kunit_add_pkt(test, VK_VESW_ID_UNKNOWN, 100);
	vnic_kunit_rx(test);

	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->tap_frames), 0);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_nohandler, 1ULL);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_packets, 0ULL);
}

/* A netdev that is not operationally up drops and counts */
static void vnic_rx_not_oper_up(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx = test->priv;
	struct opa_vnic_stats *st = &ctx->vinfo->stats[0];

	vnic_kunit_set_operstate(ctx->netdev, IF_OPER_DOWN);
	KUNIT_ASSERT_FALSE(test, netif_oper_up(ctx->netdev));

	vnic_kunit_add_pkt(test, VK_VESW_ID, 100);
	vnic_kunit_rx(test);

	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->tap_frames), 0);
	KUNIT_EXPECT_EQ(test, st->rx_drop_state, 1ULL);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_packets, 0ULL);
}

/* Longer than mtu + VLAN_ETH_HLEN: rx_oversize, not delivered */
static void vnic_rx_oversize(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx = test->priv;
	struct opa_vnic_stats *st = &ctx->vinfo->stats[0];

	vnic_kunit_add_pkt(test, VK_VESW_ID,
			   ctx->netdev->mtu + VLAN_ETH_HLEN + 1);
	vnic_kunit_rx(test);

	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->tap_frames), 0);
	KUNIT_EXPECT_EQ(test, st->rx_oversize, 1ULL);
	/* a dropped frame is not received (6.12 counted it in rx_packets) */
	KUNIT_EXPECT_EQ(test, st->netstats.rx_packets, 0ULL);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_bytes, 0ULL);
	KUNIT_EXPECT_EQ(test, st->rx_grp.s_1519_max, 0ULL);
	KUNIT_EXPECT_EQ(test, st->rx_grp.unicast, 0ULL);
}

/* Shorter than ETH_ZLEN: rx_runt, not delivered */
static void vnic_rx_runt(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx = test->priv;
	struct opa_vnic_stats *st = &ctx->vinfo->stats[0];

	vnic_kunit_add_pkt(test, VK_VESW_ID, ETH_ZLEN - 1);
	vnic_kunit_rx(test);

	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->tap_frames), 0);
	KUNIT_EXPECT_EQ(test, st->rx_runt, 1ULL);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_packets, 0ULL);
	KUNIT_EXPECT_EQ(test, st->rx_grp.unicast, 0ULL);
}

/*
 * Packets the chip flagged in the receive header flags are dropped, as
 * hfi1's other receive paths drop them, and counted on the vport: a bad
 * ICRC as a CRC error, anything else as a frame error. 6.12 passed them up
 * as good frames.
 */
static void vnic_rx_rhf_errors(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx = test->priv;
	struct opa_vnic_stats *st = &ctx->vinfo->stats[0];
	static const u64 flags[] = {
		RHF_ICRC_ERR, RHF_ECC_ERR, RHF_LEN_ERR, RHF_DC_ERR,
		RHF_DC_UNC_ERR, RHF_K_HDR_LEN_ERR,
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		vnic_kunit_add_pkt(test, VK_VESW_ID, 100);
		ctx->pkts[0].rhf = flags[i];
		vnic_kunit_rx(test);
	}

	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->tap_frames), 0);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_crc_errors, 1ULL);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_frame_errors,
			(u64)ARRAY_SIZE(flags) - 1);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_packets, 0ULL);
	KUNIT_EXPECT_EQ(test, st->rx_grp.unicast, 0ULL);

	/* the next good frame goes through */
	vnic_kunit_add_pkt(test, VK_VESW_ID, 100);
	vnic_kunit_rx(test);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->tap_frames), 1);
	KUNIT_EXPECT_EQ(test, st->netstats.rx_packets, 1ULL);
}

/*
 * A packet is counted on the queue of the receive context it arrived on
 * (rcd->vnic_q_idx, set by hfi1_netdev_rxq_bind()): each queue's counters
 * are written by one NAPI only.
 */
static void vnic_rx_queue_counters(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx = test->priv;

	KUNIT_ASSERT_GE(test, ctx->vinfo->num_rx_q, 2);
	ctx->rcd->vnic_q_idx = 1;
	vnic_kunit_add_pkt(test, VK_VESW_ID, 100);
	vnic_kunit_rx(test);

	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->tap_frames), 1);
	KUNIT_EXPECT_EQ(test, ctx->vinfo->stats[1].netstats.rx_packets, 1ULL);
	KUNIT_EXPECT_EQ(test, ctx->vinfo->stats[0].netstats.rx_packets, 0ULL);
}

/*
 * The vport table is keyed on VNIC_ID(), the low 8 bits of the 12-bit
 * vesw id, as in 6.12: two vesws equal modulo 256 cannot both be up on
 * one device, the second hfi1_vnic_up() fails with -EBUSY. This case
 * records that behaviour; it is not a requirement.
 */
static void vnic_rx_vesw_key_8_bit(struct kunit *test)
{
	struct vnic_kunit_ctx *ctx = test->priv;
	int other = 0;
	int rc;

	KUNIT_EXPECT_EQ(test, VNIC_ID(VK_VESW_ID_ALIAS), VNIC_ID(VK_VESW_ID));
	rc = hfi1_netdev_add_data(ctx->dd, VNIC_ID(VK_VESW_ID_ALIAS), &other);
	/* a wider key would take the entry: leave no stack pointer behind */
	if (!rc)
		hfi1_netdev_remove_data(ctx->dd, VNIC_ID(VK_VESW_ID_ALIAS));
	KUNIT_EXPECT_EQ(test, rc, -EBUSY);
	KUNIT_EXPECT_PTR_EQ(test,
			    hfi1_netdev_get_data(ctx->dd,
						 VNIC_ID(VK_VESW_ID_ALIAS)),
			    (void *)ctx->vinfo);

	/* a vesw with another low byte does get its own entry */
	KUNIT_ASSERT_EQ(test,
			hfi1_netdev_add_data(ctx->dd,
					     VNIC_ID(VK_VESW_ID_UNKNOWN),
					     &other),
			0);
	KUNIT_EXPECT_PTR_EQ(test,
			    hfi1_netdev_remove_data(ctx->dd,
						    VNIC_ID(VK_VESW_ID_UNKNOWN)),
			    (void *)&other);
}

static struct kunit_case hfi1_vnic_rx_cases[] = {
	KUNIT_CASE(vnic_rx_good_frame),
	KUNIT_CASE(vnic_rx_length_limits),
	KUNIT_CASE(vnic_rx_unknown_vesw),
	KUNIT_CASE(vnic_rx_not_oper_up),
	KUNIT_CASE(vnic_rx_oversize),
	KUNIT_CASE(vnic_rx_runt),
	KUNIT_CASE(vnic_rx_rhf_errors),
	KUNIT_CASE(vnic_rx_queue_counters),
	KUNIT_CASE(vnic_rx_vesw_key_8_bit),
	{}
};

static struct kunit_suite hfi1_vnic_rx_suite = {
	.name = "hfi1_vnic_rx",
	.init = vnic_kunit_init,
	.exit = vnic_kunit_exit,
	.test_cases = hfi1_vnic_rx_cases,
};

kunit_test_suite(hfi1_vnic_rx_suite);
