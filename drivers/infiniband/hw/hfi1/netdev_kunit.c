// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * KUnit suite hfi1_netdev: the set-up and teardown of hfi1's netdev receive
 * contexts and VNIC ports, and the AIP IPoIB receive they are shared with,
 * with no chip.
 *
 * What a chip gives (receive contexts with their header queues, eager
 * buffers and MSI-X vectors, SDMA engines) is stood in for where the code
 * only looks at it: a zeroed hfi1_devdata, a frozen chip that refuses new
 * contexts (HFI1_FROZEN, which hfi1_netdev_allocate_ctxt() checks first), a
 * hand-made receive context, an SDMA engine with only its locks and wait
 * list. Everything else is hfi1's own code: hfi1_vnic_alloc_rn(),
 * hfi1_netdev_rx_init(), hfi1_netdev_rxq_bind(), hfi1_vnic_sdma_init() and
 * hfi1_vnic_sdma_deinit(), and hfi1_ipoib_ib_rcv() through
 * netdev_rhf_rcv_functions[].
 *
 * A VNIC port cannot be created successfully here: that needs receive
 * contexts from the chip. The first-user path is run up to the chip's
 * refusal, which is where 6.12 deadlocked (hfi1_mutex taken twice).
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/kthread.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <rdma/ib_hdrs.h>

#include "hfi.h"
#include "ipoib.h"
#include "netdev.h"
#include "sdma.h"
#include "vnic.h"

#define NK_TIMEOUT	(5 * HZ)
/* a QPN in the netdev table: below VNIC_ID(0), so it cannot clash */
#define NK_QPN		0xabc

struct netdev_kunit_ctx {
	struct pci_dev *pdev;
	struct hfi1_devdata *dd;
	struct sdma_engine *sde;
};

static int netdev_kunit_init(struct kunit *test)
{
	struct netdev_kunit_ctx *ctx;
	struct hfi1_devdata *dd;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;

	/* dd_dev_*() print through the PCI device and the IB device's name */
	ctx->pdev = kunit_kzalloc(test, sizeof(*ctx->pdev), GFP_KERNEL);
	if (!ctx->pdev)
		return -ENOMEM;
	ctx->pdev->dev.init_name = "hfi1_netdev_kunit";

	dd = kzalloc(sizeof(*dd), GFP_KERNEL);
	if (!dd)
		return -ENOMEM;
	ctx->dd = dd;
	dd->pcidev = ctx->pdev;
	dd->node = NUMA_NO_NODE;
	dd->verbs_dev.rdi.ibdev.dev.init_name = "hfi1_nk";
	dd->num_pports = 1;
	dd->num_netdev_contexts = 1;

	/* one SDMA engine: the locks and the wait list VNIC uses of it */
	ctx->sde = kunit_kzalloc(test, sizeof(*ctx->sde), GFP_KERNEL);
	if (!ctx->sde)
		return -ENOMEM;
	seqlock_init(&ctx->sde->head_lock);
	seqlock_init(&ctx->sde->waitlock);
	INIT_LIST_HEAD(&ctx->sde->dmawait);
	ctx->sde->dd = dd;
	dd->per_sdma = ctx->sde;
	dd->num_sdma = 1;

	return hfi1_alloc_rx(dd);
}

static void netdev_kunit_exit(struct kunit *test)
{
	struct netdev_kunit_ctx *ctx = test->priv;

	if (!ctx || !ctx->dd)
		return;
	hfi1_free_rx(ctx->dd);
	kfree(ctx->dd);
}

/*
 * A first hfi1_netdev_rx_init() that fails leaves nothing behind: no user
 * counted, no queue count without queues. 6.12 kept the count raised, so
 * the next caller was told the (freed) queues existed, and its
 * hfi1_netdev_enable_queues() walked a NULL array.
 */
static void netdev_rx_init_failure(struct kunit *test)
{
	struct netdev_kunit_ctx *ctx = test->priv;
	struct hfi1_netdev_rx *rx = ctx->dd->netdev_rx;
	int i, rc;

	/* a frozen chip refuses new receive contexts */
	ctx->dd->flags |= HFI1_FROZEN;
	for (i = 0; i < 2; i++) {
		rc = hfi1_netdev_rx_init(ctx->dd);
		KUNIT_EXPECT_EQ_MSG(test, rc, -EIO, "call %d", i);
		KUNIT_EXPECT_EQ(test, atomic_read(&rx->netdevs), 0);
		KUNIT_EXPECT_EQ(test, rx->num_rx_q, 0);
		KUNIT_EXPECT_NULL(test, rx->rxq);
		if (rc || rx->rxq) {
			/* without the fix: nothing to destroy, reset by hand */
			atomic_set(&rx->netdevs, 0);
			rx->num_rx_q = 0;
		}
	}

	/* the device is usable: enabling and disabling finds no queue */
	hfi1_netdev_enable_queues(ctx->dd);
	hfi1_netdev_disable_queues(ctx->dd);
	KUNIT_EXPECT_EQ(test, atomic_read(&rx->enabled), 0);
}

/* Bring a netdev user up or down, as hfi1_vnic_up()/down() and AIP do */
static void netdev_kunit_user(struct kunit *test, struct hfi1_devdata *dd,
			      bool up)
{
	if (up) {
		KUNIT_EXPECT_EQ(test, hfi1_netdev_rx_init(dd), 0);
		hfi1_netdev_enable_queues(dd);
	} else {
		hfi1_netdev_disable_queues(dd);
		hfi1_netdev_rx_destroy(dd);
	}
}

/*
 * Two users of the receive contexts (a VNIC port and an AIP netdev) come
 * up and go down in every order: the queues exist and run exactly while
 * one of them is up. Both make the same calls (hfi1_netdev_rx_init() and
 * hfi1_netdev_enable_queues() going up, the reverse going down), so the
 * orders differ only in how the calls interleave: one user's life inside
 * or across the other's (UUDD), or one after the other (UDUD). The device
 * has no context to set up: the counts and the queue array (of none) are
 * what is checked.
 */
static void netdev_users_every_order(struct kunit *test)
{
	struct netdev_kunit_ctx *ctx = test->priv;
	struct hfi1_netdev_rx *rx = ctx->dd->netdev_rx;
	static const char * const orders[] = { "UUDD", "UDUD" };
	int i, j, users;

	ctx->dd->num_netdev_contexts = 0;
	for (i = 0; i < ARRAY_SIZE(orders); i++) {
		users = 0;
		for (j = 0; orders[i][j]; j++) {
			bool up = orders[i][j] == 'U';

			netdev_kunit_user(test, ctx->dd, up);
			users += up ? 1 : -1;
			KUNIT_EXPECT_EQ_MSG(test, atomic_read(&rx->netdevs), users,
					    "order %s step %d", orders[i], j);
			KUNIT_EXPECT_EQ_MSG(test, atomic_read(&rx->enabled), users,
					    "order %s step %d", orders[i], j);
			KUNIT_EXPECT_EQ_MSG(test, !!rx->rxq, users > 0,
					    "order %s step %d", orders[i], j);
		}
	}
}

struct netdev_kunit_alloc {
	struct netdev_kunit_ctx *ctx;
	struct net_device *netdev;
	struct completion done;
};

static int netdev_kunit_alloc_thread(void *data)
{
	struct netdev_kunit_alloc *a = data;

	a->netdev = hfi1_vnic_alloc_rn(&a->ctx->dd->verbs_dev.rdi.ibdev, 1,
				       RDMA_NETDEV_OPA_VNIC, "hfi1nk%d",
				       NET_NAME_ENUM, ether_setup);
	complete(&a->done);
	return 0;
}

/*
 * The first VNIC port of a device that no other netdev uses yet (no AIP
 * IPoIB): hfi1_vnic_alloc_rn() must get to the chip, and back with its
 * answer. 6.12 took hfi1_mutex in hfi1_vnic_init() and again in
 * hfi1_netdev_rx_init(): the allocation never returned, holding the
 * mutex. It runs in a thread, so a hang fails this case instead of the run.
 */
static void netdev_vnic_first_port(struct kunit *test)
{
	struct netdev_kunit_ctx *ctx = test->priv;
	struct hfi1_netdev_rx *rx = ctx->dd->netdev_rx;
	struct netdev_kunit_alloc *a;
	struct task_struct *t;
	int i;

	ctx->dd->flags |= HFI1_FROZEN;
	for (i = 0; i < 2; i++) {
		a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, a);
		a->ctx = ctx;
		init_completion(&a->done);
		t = kthread_run(netdev_kunit_alloc_thread, a, "hfi1_nk_alloc");
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
		if (!wait_for_completion_timeout(&a->done, NK_TIMEOUT)) {
			/* the thread holds hfi1_mutex for good: stop here */
			KUNIT_FAIL(test, "hfi1_vnic_alloc_rn() did not return");
			ctx->dd = NULL;
			return;
		}
		KUNIT_ASSERT_TRUE(test, IS_ERR(a->netdev));
		KUNIT_EXPECT_EQ(test, PTR_ERR(a->netdev), -EIO);
		KUNIT_EXPECT_EQ(test, atomic_read(&rx->netdevs), 0);
		KUNIT_EXPECT_NULL(test, rx->rxq);
		KUNIT_EXPECT_EQ(test, ctx->dd->vnic_num_vports, 0);
		KUNIT_EXPECT_NULL(test, ctx->dd->vnic.txreq_cache);
	}
}

/*
 * hfi1_netdev_rxq_bind() ties each context to its queue: the queue's NAPI
 * polls it and VNIC counts on the queue's index. In 6.12 the index was
 * never set, so every context counted on queue 0, from several CPUs.
 */
static void netdev_rxq_bind_queue_index(struct kunit *test)
{
	struct netdev_kunit_ctx *ctx = test->priv;
	struct hfi1_netdev_rx *rx = ctx->dd->netdev_rx;
	const int n = 3;
	int i;

	rx->rxq = kunit_kcalloc(test, n, sizeof(*rx->rxq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rx->rxq);
	for (i = 0; i < n; i++) {
		rx->rxq[i].rcd = kunit_kzalloc(test, sizeof(*rx->rxq[i].rcd),
					       GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, rx->rxq[i].rcd);
		/* a stale index, as a reused context could carry */
		rx->rxq[i].rcd->vnic_q_idx = 7;
	}

	for (i = 0; i < n; i++)
		hfi1_netdev_rxq_bind(rx, i);

	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, rx->rxq[i].rcd->vnic_q_idx, (u8)i);
		KUNIT_EXPECT_PTR_EQ(test, rx->rxq[i].rcd->napi,
				    &rx->rxq[i].napi);
		KUNIT_EXPECT_PTR_EQ(test, rx->rxq[i].rx, rx);
		KUNIT_EXPECT_TRUE(test, test_bit(NAPI_STATE_NO_BUSY_POLL,
						 &rx->rxq[i].napi.state));
		netif_napi_del(&rx->rxq[i].napi);
	}
	rx->rxq = NULL;
}

/* Never opened; frees anything handed to it */
static netdev_tx_t netdev_kunit_xmit(struct sk_buff *skb,
				     struct net_device *netdev)
{
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops netdev_kunit_ops = {
	.ndo_start_xmit = netdev_kunit_xmit,
};

/* A VNIC netdev with its vport, as hfi1_vnic_alloc_rn() lays it out */
static struct hfi1_vnic_vport_info *netdev_kunit_vport(struct kunit *test)
{
	struct netdev_kunit_ctx *ctx = test->priv;
	struct hfi1_vnic_vport_info *vinfo;
	struct net_device *netdev;

	netdev = alloc_netdev_mqs(sizeof(struct opa_vnic_rdma_netdev) +
				  sizeof(*vinfo), "hfi1nk%d", NET_NAME_ENUM,
				  ether_setup, ctx->dd->num_sdma, 1);
	KUNIT_ASSERT_NOT_NULL(test, netdev);
	vinfo = opa_vnic_dev_priv(netdev);
	vinfo->dd = ctx->dd;
	vinfo->netdev = netdev;
	vinfo->num_tx_q = ctx->dd->num_sdma;
	vinfo->num_rx_q = 1;
	netdev->netdev_ops = &netdev_kunit_ops;
	hfi1_vnic_sdma_init(vinfo);
	return vinfo;
}

struct netdev_kunit_deinit {
	struct hfi1_vnic_vport_info *vinfo;
	struct completion done;
};

static int netdev_kunit_deinit_thread(void *data)
{
	struct netdev_kunit_deinit *d = data;

	hfi1_vnic_sdma_deinit(d->vinfo);
	complete(&d->done);
	return 0;
}

/*
 * Teardown with a descriptor in flight, and the queue asleep on its
 * engine's dmawait list (as hfi1_vnic_sdma_sleep() leaves it): the vport
 * must not be freed before the completion, which writes to the queue's
 * iowait, nor stay on the engine's list. 6.12 freed it at once.
 */
static void netdev_vnic_sdma_teardown(struct kunit *test)
{
	struct netdev_kunit_ctx *ctx = test->priv;
	struct hfi1_vnic_vport_info *vinfo = netdev_kunit_vport(test);
	struct hfi1_vnic_sdma *vnic_sdma = &vinfo->sdma[0];
	struct netdev_kunit_deinit *d;
	struct task_struct *t;

	KUNIT_EXPECT_PTR_EQ(test, vnic_sdma->sde, ctx->sde);

	/* what sdma_send_txreq() and hfi1_vnic_sdma_sleep() leave behind */
	atomic_inc(&vnic_sdma->wait.sdma_busy);
	write_seqlock(&ctx->sde->waitlock);
	list_add_tail(&vnic_sdma->wait.list, &ctx->sde->dmawait);
	write_sequnlock(&ctx->sde->waitlock);

	d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, d);
	d->vinfo = vinfo;
	init_completion(&d->done);
	t = kthread_run(netdev_kunit_deinit_thread, d, "hfi1_nk_deinit");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));

	/* it waits for the descriptor */
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&d->done, HZ / 10),
			0UL);

	/* the completion, as complete_tx() ends it */
	if (iowait_sdma_dec(&vnic_sdma->wait))
		iowait_drain_wakeup(&vnic_sdma->wait);

	KUNIT_ASSERT_NE_MSG(test,
			    wait_for_completion_timeout(&d->done, NK_TIMEOUT),
			    0UL, "teardown did not end after the completion");
	KUNIT_EXPECT_TRUE(test, list_empty(&ctx->sde->dmawait));
	KUNIT_EXPECT_TRUE(test, list_empty(&vnic_sdma->wait.list));
	free_netdev(vinfo->netdev);
}

/*
 * The SDMA wakeup restarts a queue the transmit path stopped when the
 * engine ran out of descriptors (hfi1_vnic_maybe_stop_tx()).
 */
static void netdev_vnic_sdma_wakeup(struct kunit *test)
{
	struct hfi1_vnic_vport_info *vinfo = netdev_kunit_vport(test);
	struct hfi1_vnic_sdma *vnic_sdma = &vinfo->sdma[0];

	/* registered: waking a queue schedules its qdisc (noop until open) */
	if (register_netdev(vinfo->netdev)) {
		free_netdev(vinfo->netdev);
		KUNIT_FAIL(test, "register_netdev() failed");
		return;
	}
	netif_tx_start_all_queues(vinfo->netdev);
	WRITE_ONCE(vnic_sdma->state, HFI1_VNIC_SDMA_Q_DEFERRED);
	netif_stop_subqueue(vinfo->netdev, 0);
	KUNIT_EXPECT_FALSE(test, hfi1_vnic_sdma_write_avail(vinfo, 0));

	vnic_sdma->wait.wakeup(&vnic_sdma->wait, SDMA_AVAIL_REASON);

	KUNIT_EXPECT_TRUE(test, hfi1_vnic_sdma_write_avail(vinfo, 0));
	KUNIT_EXPECT_FALSE(test, __netif_subqueue_stopped(vinfo->netdev, 0));
	unregister_netdev(vinfo->netdev);
	free_netdev(vinfo->netdev);
}

/*
 * A vesw id change of an open VNIC port whose reopen fails (the chip
 * refuses the receive contexts): the netdev stays open with its queues
 * stopped and no carrier, and the ULP turns the carrier on when the OPA port
 * comes back (opa_vnic_event()). It must be detached, so that the transmit
 * watchdog does not look at those queues (dev_watchdog() wants the device
 * present, running and with carrier): 6.12 left it present, and the
 * watchdog's WARN and hfi1_vnic_tx_timeout() followed. The next vesw id
 * change that brings the port up attaches it again, and so does a close.
 */
static void netdev_vnic_set_id_reopen_fails(struct kunit *test)
{
	struct netdev_kunit_ctx *ctx = test->priv;
	struct hfi1_vnic_vport_info *vinfo = netdev_kunit_vport(test);
	struct net_device *netdev = vinfo->netdev;
	int rc;

	mutex_init(&vinfo->lock);
	if (register_netdev(netdev)) {
		free_netdev(netdev);
		KUNIT_FAIL(test, "register_netdev() failed");
		return;
	}
	rtnl_lock();
	rc = dev_open(netdev, NULL);
	rtnl_unlock();
	KUNIT_EXPECT_EQ(test, rc, 0);
	/* no context to set up: the port comes up */
	ctx->dd->num_netdev_contexts = 0;
	vinfo->vesw_id = 1;
	KUNIT_EXPECT_EQ(test, hfi1_netdev_open(netdev), 0);
	KUNIT_EXPECT_TRUE(test, netif_carrier_ok(netdev));

	/* a frozen chip refuses the contexts of the reopen */
	ctx->dd->num_netdev_contexts = 1;
	ctx->dd->flags |= HFI1_FROZEN;
	hfi1_vnic_set_vesw_id(netdev, 2);
	KUNIT_EXPECT_FALSE(test, netif_carrier_ok(netdev));
	KUNIT_EXPECT_TRUE(test, netif_xmit_stopped(netdev_get_tx_queue(netdev,
								      0)));
	KUNIT_EXPECT_FALSE(test, netif_device_present(netdev));

	/* the port comes back: the watchdog still does not look */
	netif_carrier_on(netdev);
	KUNIT_EXPECT_FALSE(test, netif_device_present(netdev) &&
			   netif_running(netdev) && netif_carrier_ok(netdev));

	/* the chip is back: the next vesw id change brings the port up */
	ctx->dd->flags &= ~HFI1_FROZEN;
	ctx->dd->num_netdev_contexts = 0;
	hfi1_vnic_set_vesw_id(netdev, 3);
	KUNIT_EXPECT_TRUE(test, netif_device_present(netdev));
	KUNIT_EXPECT_FALSE(test, netif_xmit_stopped(netdev_get_tx_queue(netdev,
								       0)));

	/* failed again, then closed: present, so that it can be opened */
	ctx->dd->num_netdev_contexts = 1;
	ctx->dd->flags |= HFI1_FROZEN;
	hfi1_vnic_set_vesw_id(netdev, 4);
	KUNIT_EXPECT_FALSE(test, netif_device_present(netdev));
	rtnl_lock();
	dev_close(netdev);
	rtnl_unlock();
	hfi1_netdev_close(netdev);
	KUNIT_EXPECT_TRUE(test, netif_device_present(netdev));

	ctx->dd->flags &= ~HFI1_FROZEN;
	unregister_netdev(netdev);
	mutex_destroy(&vinfo->lock);
	free_netdev(netdev);
}

/*
 * An AIP IPoIB netdev registered but not open (no QP) on a device whose
 * receive contexts run for VNIC: a packet for its QPN with FECN set is
 * dropped and counted. 6.12 passed the NULL QP to
 * hfi1_process_ecn_slowpath(), which dereferences it.
 */
static void netdev_ipoib_rcv_not_open(struct kunit *test)
{
	struct netdev_kunit_ctx *ctx = test->priv;
	rhf_rcv_function_ptr ib_rcv = netdev_rhf_rcv_functions[RHF_RCV_TYPE_IB];
	struct hfi1_pportdata *ppd;
	struct hfi1_ctxtdata *rcd;
	struct net_device *netdev;
	struct hfi1_packet *pkt;
	struct ib_header *hdr;
	/* the header, then the RHF 16 dwords after its start */
	__le32 *hq;

	ppd = kunit_kzalloc(test, sizeof(*ppd), GFP_KERNEL);
	rcd = kunit_kzalloc(test, sizeof(*rcd), GFP_KERNEL);
	pkt = kunit_kzalloc(test, sizeof(*pkt), GFP_KERNEL);
	hq = kunit_kzalloc(test, 32 * sizeof(*hq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ppd);
	KUNIT_ASSERT_NOT_NULL(test, rcd);
	KUNIT_ASSERT_NOT_NULL(test, pkt);
	KUNIT_ASSERT_NOT_NULL(test, hq);

	netdev = alloc_netdev(sizeof(struct hfi1_ipoib_rdma_netdev), "hfi1nk%d",
			      NET_NAME_ENUM, ether_setup);
	KUNIT_ASSERT_NOT_NULL(test, netdev);
	KUNIT_EXPECT_NULL(test, hfi1_ipoib_priv(netdev)->qp);
	KUNIT_ASSERT_EQ(test, hfi1_netdev_add_data(ctx->dd, NK_QPN, netdev),
			0);

	rcd->dd = ctx->dd;
	rcd->ppd = ppd;
	rcd->is_vnic = true;
	/* the RHF is 16 dwords into the entry; its header offset is 0 */
	rcd->rhf_offset = 16;
	hdr = (struct ib_header *)hq;
	hdr->lrh[0] = cpu_to_be16(HFI1_LRH_BTH);
	hdr->u.oth.bth[0] = cpu_to_be32(IB_OPCODE_UD_SEND_ONLY << 24);
	hdr->u.oth.bth[1] = cpu_to_be32(IB_FECN_SMASK | NK_QPN);

	pkt->rcd = rcd;
	pkt->rhf_addr = hq + 16;
	pkt->rhf = 0;
	pkt->etype = RHF_RCV_TYPE_IB;

	ib_rcv(pkt);

	KUNIT_EXPECT_EQ(test, ppd->ibport_data.rvp.n_pkt_drops, 1ULL);
	hfi1_netdev_remove_data(ctx->dd, NK_QPN);
	free_netdev(netdev);
}

static struct kunit_case hfi1_netdev_cases[] = {
	KUNIT_CASE(netdev_rx_init_failure),
	KUNIT_CASE(netdev_users_every_order),
	KUNIT_CASE(netdev_rxq_bind_queue_index),
	KUNIT_CASE(netdev_vnic_sdma_teardown),
	KUNIT_CASE(netdev_vnic_sdma_wakeup),
	KUNIT_CASE(netdev_ipoib_rcv_not_open),
	KUNIT_CASE(netdev_vnic_set_id_reopen_fails),
	/* last: on a kernel with the deadlock it leaves hfi1_mutex held */
	KUNIT_CASE(netdev_vnic_first_port),
	{}
};

static struct kunit_suite hfi1_netdev_suite = {
	.name = "hfi1_netdev",
	.init = netdev_kunit_init,
	.exit = netdev_kunit_exit,
	.test_cases = hfi1_netdev_cases,
};
kunit_test_suite(hfi1_netdev_suite);
