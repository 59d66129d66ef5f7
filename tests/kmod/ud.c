// SPDX-License-Identifier: GPL-2.0
/*
 * ud.c - a kernel UD QP of a sroce device, through ib_core's kernel verbs
 * only, as a kernel ULP would use it (main.c: ud_send, ud_drain).
 *
 * ud_send tests the glue around the packets sroce's core writes: the path
 * from an AH (source GID's netdev, route, namespace, traffic class, hop
 * limit, flow label), the IPv6 UDP checksum, a device's own address
 * through its local queue, and the receiving side's device lookup
 * (tests/vm/70-glue-datapath.sh checks them on the wire and in the
 * devices' counts). The AH is created sleepable, so a path that cannot be
 * made fails the write.
 *
 * ud_drain: ib_drain_sq posts an ib_rdma_wr, which the UD post path must
 * not read as an ib_ud_wr (KASAN, under make test-debug); before it, a
 * kernel FLUSH and ATOMIC WRITE must be refused with EOPNOTSUPP.
 */
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "selftest.h"

#define ST_QKEY 0x11111111
#define ST_DEPTH 64           /* send WRs in flight */
#define ST_SEND_TIMEOUT_MS 10000

struct st_ud {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
};

static void st_ud_destroy(struct st_ud *u)
{
	if (u->qp)
		ib_destroy_qp(u->qp);
	if (u->cq)
		ib_free_cq(u->cq);
	if (u->pd)
		ib_dealloc_pd(u->pd);
	if (u->dev)
		ib_device_put(u->dev);
}

/* A UD QP of the device named first in args, in RTS with PSN 0, with
 * ST_DEPTH WRs each way on one CQ that the caller polls. */
static int st_ud_create(const char *args, struct st_ud *u)
{
	char name[IB_DEVICE_NAME_MAX];
	struct ib_qp_init_attr init = {};
	struct ib_qp_attr attr = {};
	void *obj;
	int err;

	memset(u, 0, sizeof(*u));
	if (sscanf(args, "%63s", name) != 1)
		return -EINVAL;
	u->dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!u->dev)
		return -ENODEV;
	obj = ib_alloc_pd(u->dev, 0);
	if (IS_ERR(obj))
		goto err_obj;
	u->pd = obj;
	obj = ib_alloc_cq(u->dev, NULL, 2 * ST_DEPTH, 0, IB_POLL_DIRECT);
	if (IS_ERR(obj))
		goto err_obj;
	u->cq = obj;
	init.send_cq = init.recv_cq = u->cq;
	init.qp_type = IB_QPT_UD;
	init.sq_sig_type = IB_SIGNAL_ALL_WR;
	init.cap.max_send_wr = init.cap.max_recv_wr = ST_DEPTH;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	obj = ib_create_qp(u->pd, &init);
	if (IS_ERR(obj))
		goto err_obj;
	u->qp = obj;

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = ST_QKEY;
	err = ib_modify_qp(u->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY);
	attr.qp_state = IB_QPS_RTR;
	err = err ?: ib_modify_qp(u->qp, &attr, IB_QP_STATE);
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	err = err ?: ib_modify_qp(u->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
	if (err)
		st_ud_destroy(u);
	return err;

err_obj:
	st_ud_destroy(u);
	return PTR_ERR(obj);
}

int st_ud_drain(const char *args)
{
	struct st_ud u;
	int err = st_ud_create(args, &u);

	if (err)
		return err;
	{
		/* FLUSH and ATOMIC WRITE (opcodes 14 and 15; 6.2+ names them
		 * IB_WR_FLUSH and IB_WR_ATOMIC_WRITE) from a kernel user are
		 * refused at the post, before any QP check. */
		for (int op = 14; op <= 15; op++) {
			struct ib_rdma_wr aw = { .wr = { .opcode = (enum ib_wr_opcode)op } };

			err = ib_post_send(u.qp, &aw.wr, NULL);
			if (err != -EOPNOTSUPP) {
				pr_info("sroce_selftest: a kernel opcode %d: %d, want %d\n", op, err, -EOPNOTSUPP);
				st_ud_destroy(&u);
				return -EPROTO;
			}
		}
	}
	ib_drain_qp(u.qp); /* waits for both flushed drain WRs */
	st_ud_destroy(&u);
	return 0;
}

static int st_parse_gid(const char *s, union ib_gid *gid)
{
	__be32 v4;

	if (in4_pton(s, -1, (u8 *)&v4, -1, NULL)) {
		ipv6_addr_set_v4mapped(v4, (struct in6_addr *)gid->raw);
		return 0;
	}
	return in6_pton(s, -1, gid->raw, -1, NULL) ? 0 : -EINVAL;
}

/* An AH from the source GID src of the device to dst; the traffic class,
 * hop limit and flow label go into the GRH. */
static struct ib_ah *st_ah_create(struct st_ud *u, const char *src, const char *dst, u32 flow_label,
				  u8 hop_limit, u8 tclass)
{
	const struct ib_gid_attr *sgid_attr;
	struct rdma_ah_attr attr = {};
	union ib_gid sgid, dgid;
	struct ib_ah *ah;

	if (st_parse_gid(src, &sgid) || st_parse_gid(dst, &dgid))
		return ERR_PTR(-EINVAL);
	sgid_attr = rdma_find_gid(u->dev, &sgid, IB_GID_TYPE_ROCE_UDP_ENCAP, NULL);
	if (IS_ERR(sgid_attr))
		return ERR_CAST(sgid_attr);
	attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, &dgid, flow_label, sgid_attr->index, hop_limit, tclass);
	attr.grh.sgid_attr = sgid_attr;
	ah = rdma_create_ah(u->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	rdma_put_gid_attr(sgid_attr);
	return ah;
}

/* n signaled SENDs of sge (length 0: none) to destqp, at most ST_DEPTH in
 * flight; every one must complete successfully. */
static int st_ud_post(struct st_ud *u, struct ib_ah *ah, u32 destqp, struct ib_sge *sge, unsigned int n)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(ST_SEND_TIMEOUT_MS);
	unsigned int posted = 0, done = 0;
	struct ib_wc wc;
	int err, got;

	while (done < n) {
		for (; posted < n && posted - done < ST_DEPTH; posted++) {
			struct ib_ud_wr wr = {
				.wr = {
					.wr_id = posted,
					.sg_list = sge,
					.num_sge = sge->length ? 1 : 0,
					.opcode = IB_WR_SEND,
					.send_flags = IB_SEND_SIGNALED,
				},
				.ah = ah,
				.remote_qpn = destqp,
				.remote_qkey = ST_QKEY,
			};

			err = ib_post_send(u->qp, &wr.wr, NULL);
			if (err)
				return err;
		}
		got = ib_poll_cq(u->cq, 1, &wc);
		if (got < 0)
			return got;
		if (!got) {
			if (time_after(jiffies, deadline))
				return -ETIMEDOUT;
			usleep_range(100, 200);
			continue;
		}
		if (wc.status != IB_WC_SUCCESS) {
			pr_info("sroce_selftest: send %llu: %s\n", wc.wr_id, ib_wc_status_msg(wc.status));
			return -EIO;
		}
		done++;
	}
	return 0;
}

int st_ud_send(const char *args)
{
	unsigned int n, payload = 64, tclass = 0, hop_limit = 64;
	int destqp, flow_label = 0;
	char src[48], dst[48];
	struct ib_sge sge = {};
	struct ib_ah *ah;
	struct st_ud u;
	void *buf;
	int err;

	if (sscanf(args, "%*s %47s %47s %u %i %u %u %u %i", src, dst, &n, &destqp, &payload, &tclass,
		   &hop_limit, &flow_label) < 4 || n > 1000 || payload > 4096 || tclass > 255 ||
	    hop_limit > 255 || destqp < 0 || destqp > 0xffffff || flow_label < 0 ||
	    flow_label > IB_GRH_FLOWLABEL_MASK)
		return -EINVAL;
	buf = kmalloc(payload ?: 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	memset(buf, 0x5a, payload);
	err = st_ud_create(args, &u);
	if (err)
		goto out_buf;
	ah = st_ah_create(&u, src, dst, flow_label, hop_limit, tclass);
	if (IS_ERR(ah)) {
		err = PTR_ERR(ah);
		goto out_ud;
	}
	/* sroce has no DMA device: kernel consumers' addresses are virtual. */
	sge.addr = ib_dma_map_single(u.dev, buf, payload, DMA_TO_DEVICE);
	sge.length = payload;
	sge.lkey = u.pd->local_dma_lkey;
	err = st_ud_post(&u, ah, destqp, &sge, n);
	ib_dma_unmap_single(u.dev, sge.addr, payload, DMA_TO_DEVICE);
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
out_ud:
	st_ud_destroy(&u);
out_buf:
	kfree(buf);
	return err;
}
