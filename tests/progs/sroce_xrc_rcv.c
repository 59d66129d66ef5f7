// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_xrc_rcv DEV ROLE DIR [N [hold|badkey]]: seed 001's scenario, a kernel-owned XRC
 * receive QP (srocedv_alloc_xrc_rcv_qp) that outlives the process that made
 * it. Three roles, in two namespaces, meet through files in DIR:
 *
 *   sender DEV DIR N  (the remote host) makes an XRC initiator and writes
 *                     DIR/ini (its QPN and GID); once DIR/tgt names the
 *                     receive QP, B's SRQ and B's buffer, it runs N rounds
 *                     of SEND (into B's SRQ), RDMA WRITE and RDMA READ
 *                     (back, every byte compared), all through the
 *                     kernel-owned QP; then, after DIR/closed, one more
 *                     SEND, which must end in IBV_WC_RETRY_EXC_ERR. With
 *                     `badkey`, before DIR/sender_done, a WRITE with a
 *                     wrong rkey must end in IBV_WC_REM_ACCESS_ERR (the
 *                     receive QP goes to error and its event to the kernel
 *                     log); the last SEND then completes flushed.
 *   a DEV DIR         opens the domain of DIR/domain (O_CREAT), makes an
 *                     XRC SRQ and the kernel-owned receive QP toward the
 *                     sender, checks the bad requests, writes DIR/rcv; once
 *                     B has the domain open too (DIR/b_open) it exits (or
 *                     waits to be killed, with `hold`).
 *   b DEV DIR N       opens the same domain file once A made it and writes
 *                     DIR/b_open; when A is gone it makes its own XRC SRQ
 *                     and a buffer, writes DIR/tgt (with its host's GID),
 *                     waits for DIR/sender_done, checks
 *                     N SENDs arrive intact, closes everything (the domain
 *                     last) and writes DIR/closed (or waits to be killed
 *                     with `hold`, the script then writes it).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/srocedv.h>

#include "progs_common.h"

enum { MSG = 2048, BUF = 64 * 1024, RECVS = 16 };

static const char *dir;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_idx;

/* DIR/name's contents, waiting up to 120 s for it to appear. */
static bool read_file(const char *name, char *out, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; i < 120000; i += 10) {
		FILE *f = fopen(path, "r");

		if (f) {
			bool ok = fgets(out, (int)len, f) != NULL;

			fclose(f);
			if (ok && strchr(out, '\n'))
				return true;
		}
		usleep(10000);
	}
	return false;
}

/* Writes DIR/name whole (renamed into place: a reader never sees half). */
static void write_file(const char *name, const char *text)
{
	char path[256], tmp[260];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path))
		perror(path);
}

static void gid_str(const union ibv_gid *g, char *out)
{
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", g->raw[i]);
}

static void gid_parse(const char *s, union ibv_gid *g)
{
	for (int i = 0; i < 16; i++)
		sscanf(s + 2 * i, "%2hhx", &g->raw[i]);
}

/* `hold`: says where to send SIGKILL (DIR/name holds the PID) and waits. */
static void hold_for_kill(const char *name)
{
	char line[32];

	printf("%s: holding, to be killed\n", name);
	fflush(stdout);
	snprintf(line, sizeof(line), "%d\n", (int)getpid());
	write_file(name, line);
	for (;;)
		pause();
}

static struct ibv_xrcd *open_domain(int oflags)
{
	char path[256];
	struct ibv_xrcd_init_attr a = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
					.oflags = oflags };
	struct ibv_xrcd *x;

	snprintf(path, sizeof(path), "%s/domain", dir);
	a.fd = open(path, O_RDONLY | O_CREAT, 0600);
	if (a.fd < 0)
		return NULL;
	x = ibv_open_xrcd(ctx, &a);
	close(a.fd);
	return x;
}

static struct ibv_srq *xrc_srq(struct ibv_xrcd *x, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = RECVS, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x, .cq = cq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

/* The seed's attributes for a receive QP toward the sender. */
static int rcv_attr(struct ibv_qp_attr *a, uint32_t ini_qpn, const union ibv_gid *dgid)
{
	*a = (struct ibv_qp_attr){
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.port_num = 1, .path_mtu = IBV_MTU_1024, .dest_qp_num = ini_qpn, .rq_psn = 0,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *dgid, .sgid_index = (uint8_t)gid_idx, .hop_limit = 64 } },
	};
	return IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_AV | IBV_QP_PATH_MTU |
	       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MIN_RNR_TIMER | IBV_QP_MAX_DEST_RD_ATOMIC;
}

static int role_a(bool hold)
{
	struct ibv_xrcd *x = open_domain(O_CREAT);
	struct ibv_cq *cq = ibv_create_cq(ctx, RECVS, NULL, NULL, 0);
	struct ibv_srq *srq = x && cq ? xrc_srq(x, cq) : NULL;
	struct ibv_qp_attr a;
	union ibv_gid dgid = { 0 };
	char line[128];
	uint32_t ini_qpn, qpn = 0;
	int mask, rc;

	CHECK(srq != NULL, "A: the domain of %s/domain, an XRC SRQ", dir);
	if (!srq || !read_file("ini", line, sizeof(line)))
		return 1;
	sscanf(line, "%x", &ini_qpn);
	gid_parse(strchr(line, ' ') + 1, &dgid);
	mask = rcv_attr(&a, ini_qpn, &dgid);
	/* Bad requests first: each refused, nothing made. */
	rc = srocedv_alloc_xrc_rcv_qp(pd, x, &a, mask & ~IBV_QP_MIN_RNR_TIMER, &qpn);
	CHECK(rc == -EINVAL, "A: without IBV_QP_MIN_RNR_TIMER: %d (want -EINVAL)", rc);
	rc = srocedv_alloc_xrc_rcv_qp(pd, x, &a, mask & ~IBV_QP_AV, &qpn);
	CHECK(rc == -EINVAL, "A: without IBV_QP_AV: %d (want -EINVAL)", rc);
	rc = srocedv_alloc_xrc_rcv_qp(pd, x, &a, mask | IBV_QP_ALT_PATH, &qpn);
	CHECK(rc == -EINVAL, "A: with IBV_QP_ALT_PATH: %d (want -EINVAL)", rc);
	a.port_num = 2;
	rc = srocedv_alloc_xrc_rcv_qp(pd, x, &a, mask, &qpn);
	CHECK(rc == -EINVAL, "A: port 2: %d (want -EINVAL)", rc);
	a.port_num = 1;
	a.path_mtu = 7;
	rc = srocedv_alloc_xrc_rcv_qp(pd, x, &a, mask, &qpn);
	CHECK(rc == -EINVAL, "A: path MTU 7: %d (want -EINVAL)", rc);
	mask = rcv_attr(&a, ini_qpn, &dgid);
	a.ah_attr.grh.sgid_index = 200;
	rc = srocedv_alloc_xrc_rcv_qp(pd, x, &a, mask, &qpn);
	CHECK(rc < 0, "A: a source GID index with no GID: %d (%s)", rc, strerror(-rc));
	mask = rcv_attr(&a, ini_qpn, &dgid);
	/* The seed's ignored attributes may come along. */
	rc = srocedv_alloc_xrc_rcv_qp(pd, x, &a, mask | IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_QKEY,
				      &qpn);
	CHECK(rc == 0 && qpn, "A: the kernel-owned receive QP: 0x%x (%s)", qpn, rc ? strerror(-rc) : "ok");
	if (rc)
		return 1;
	snprintf(line, sizeof(line), "%x\n", qpn);
	write_file("rcv", line);
	/* The domain must have another user before A goes, or it goes with
	 * A, and the receive QP with it. */
	CHECK(read_file("b_open", line, sizeof(line)), "A: B has the domain open: A goes");
	if (hold)
		hold_for_kill("a.pid");
	/* Exiting closes A's SRQ and its handle of the domain: B keeps the
	 * domain, and with it the receive QP. */
	return failures ? 1 : 0;
}

static int role_b(unsigned int n, bool hold)
{
	struct ibv_xrcd *x;
	struct ibv_cq *cq = ibv_create_cq(ctx, RECVS * 2, NULL, NULL, 0);
	struct ibv_srq *srq = NULL;
	uint8_t *buf = calloc(1, BUF + RECVS * MSG);
	struct ibv_mr *mr = buf ? ibv_reg_mr(pd, buf, BUF + RECVS * MSG,
					     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_REMOTE_READ) : NULL;
	uint32_t srqn = 0, rcvqpn;
	unsigned int got = 0, bad = 0;
	char line[160];

	/* A's domain, once A made it (its receive QP is made by then). */
	if (!read_file("rcv", line, sizeof(line)))
		return 1;
	sscanf(line, "%x", &rcvqpn);
	x = open_domain(0);
	CHECK(x != NULL, "B: A's domain, opened through %s/domain", dir);
	if (!x)
		return 1;
	write_file("b_open", "1\n");
	/* A leaves now; B's SRQ is made after, so only B holds the domain. */
	if (!read_file("a_gone", line, sizeof(line)))
		return 1;
	srq = cq ? xrc_srq(x, cq) : NULL;
	CHECK(srq && mr && !ibv_get_srq_num(srq, &srqn), "B: its own XRC SRQ %u and buffer", srqn);
	if (!srq || !mr)
		return 1;
	for (unsigned int i = 0; i < RECVS; i++) {
		struct ibv_sge s = { (uintptr_t)buf + BUF + i * MSG, MSG, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &s, .num_sge = 1 }, *badwr;

		if (ibv_post_srq_recv(srq, &wr, &badwr))
			return 1;
	}
	{
		char g[33];

		gid_str(&gid, g);
		snprintf(line, sizeof(line), "%x %u %llx %x %s\n", rcvqpn, srqn, (unsigned long long)(uintptr_t)buf,
			 mr->rkey, g);
		write_file("tgt", line);
	}
	while (got < n) {
		struct ibv_wc wc;
		int k = 0;

		for (; k < 30000 && ibv_poll_cq(cq, 1, &wc) != 1; k++)
			usleep(1000);
		if (k == 30000)
			break;
		uint8_t *at = buf + BUF + wc.wr_id * MSG;
		bool ok = wc.status == IBV_WC_SUCCESS && wc.qp_num == rcvqpn && wc.byte_len == MSG;

		for (unsigned int j = 0; ok && j < MSG; j++)
			ok = at[j] == (uint8_t)(got * 31 + j);
		bad += !ok;
		got++;
		struct ibv_sge s = { (uintptr_t)at, MSG, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = wc.wr_id, .sg_list = &s, .num_sge = 1 }, *badwr;

		memset(at, 0, MSG);
		ibv_post_srq_recv(srq, &wr, &badwr);
	}
	CHECK(got == n && !bad, "B: %u SENDs through receive QP 0x%x into SRQ %u, every byte (%u bad)", got, rcvqpn,
	      srqn, bad);
	/* The sender's last WRITE and READ come after its last SEND. */
	CHECK(read_file("sender_done", line, sizeof(line)), "B: the sender is done");
	if (hold)
		hold_for_kill("b.pid");
	/* The domain's last user goes: so does the receive QP. */
	CHECK(!ibv_destroy_srq(srq) && !ibv_close_xrcd(x), "B: SRQ destroyed, domain closed");
	write_file("closed", "1\n");
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	return failures ? 1 : 0;
}

/* The initiator toward the receive QP: ib_core's XRC_INI masks. */
static int ini_to_rts(struct ibv_qp *qp, uint32_t dest, const union ibv_gid *dgid)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dest,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *dgid, .sgid_index = (uint8_t)gid_idx, .hop_limit = 64 } },
	};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		return -1;
	/* A short timeout and few retries: the last SEND's RETRY_EXC_ERR comes
	 * in about a second. */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 3, .rnr_retry = 7,
				  .max_rd_atomic = 4 };
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int post1(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	wr->send_flags = IBV_SEND_SIGNALED;
	return ibv_post_send(qp, wr, &bad);
}

/* The status of the next completion (-1: none in 60 s). */
static int wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	for (int i = 0; i < 60000; i++) {
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			return wc.status;
		usleep(1000);
	}
	return -1;
}

static int role_sender(unsigned int n, bool badkey)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_XRC_SEND,
				       .cap = { .max_send_wr = 16, .max_send_sge = 1 } };
	struct ibv_qp *ini = cq ? ibv_create_qp(pd, &ia) : NULL;
	uint8_t *buf = calloc(2, MSG);
	struct ibv_mr *mr = buf ? ibv_reg_mr(pd, buf, 2 * MSG, IBV_ACCESS_LOCAL_WRITE) : NULL;
	char line[160], g[33];
	int gpos = 0;
	unsigned long long raddr;
	uint32_t rcvqpn, srqn, rkey;
	union ibv_gid dgid;
	unsigned int bad = 0, done = 0;
	int st;

	if (!ini || !mr)
		return 1;
	gid_str(&gid, g);
	snprintf(line, sizeof(line), "%x %s\n", ini->qp_num, g);
	write_file("ini", line);
	if (!read_file("tgt", line, sizeof(line)) ||
	    sscanf(line, "%x %u %llx %x %n", &rcvqpn, &srqn, &raddr, &rkey, &gpos) != 4 || !gpos)
		return 1;
	gid_parse(line + gpos, &dgid);
	if (ini_to_rts(ini, rcvqpn, &dgid))
		return 1;
	for (unsigned int r = 0; r < n; r++) {
		struct ibv_sge s = { (uintptr_t)buf, MSG, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = r, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND };

		for (unsigned int j = 0; j < MSG; j++)
			buf[j] = (uint8_t)(r * 31 + j);
		wr.qp_type.xrc.remote_srqn = srqn;
		st = post1(ini, &wr) ? -1 : wait_wc(cq);
		bad += st != IBV_WC_SUCCESS;
		/* WRITE the same bytes at the round's place in B's buffer, READ
		 * them back into the second half, compare. */
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = raddr + (r % 32) * MSG;
		wr.wr.rdma.rkey = rkey;
		st = post1(ini, &wr) ? -1 : wait_wc(cq);
		bad += st != IBV_WC_SUCCESS;
		memset(buf + MSG, 0, MSG);
		s.addr = (uintptr_t)buf + MSG;
		wr.opcode = IBV_WR_RDMA_READ;
		st = post1(ini, &wr) ? -1 : wait_wc(cq);
		bad += st != IBV_WC_SUCCESS || memcmp(buf, buf + MSG, MSG);
		if (bad)
			break;
		done++;
	}
	CHECK(done == n && !bad, "sender: %u rounds of SEND, WRITE and READ through receive QP 0x%x, every byte",
	      done, rcvqpn);
	if (badkey) {
		struct ibv_sge s = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = n, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };

		wr.qp_type.xrc.remote_srqn = srqn;
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey ^ 0x80;
		st = post1(ini, &wr) ? -1 : wait_wc(cq);
		CHECK(st == IBV_WC_REM_ACCESS_ERR, "sender: a WRITE with a wrong rkey: %s (want %s)",
		      st < 0 ? "no completion" : ibv_wc_status_str(st), ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	}
	write_file("sender_done", "1\n");
	if (!read_file("closed", line, sizeof(line)))
		return 1;
	{
		struct ibv_sge s = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = n, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND };

		wr.qp_type.xrc.remote_srqn = srqn;
		int want = badkey ? IBV_WC_WR_FLUSH_ERR : IBV_WC_RETRY_EXC_ERR;

		st = post1(ini, &wr) ? -1 : wait_wc(cq);
		CHECK(st == want, "sender: after B closed the domain, a SEND: %s (want %s)",
		      st < 0 ? "no completion" : ibv_wc_status_str(st), ibv_wc_status_str(want));
	}
	ibv_destroy_qp(ini);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *role;
	unsigned int n;
	bool hold;
	int rc;

	if (argc < 4) {
		fprintf(stderr, "usage: %s DEV sender|a|b DIR [N] [hold]\n", argv[0]);
		return 2;
	}
	role = argv[2];
	dir = argv[3];
	n = argc > 4 ? (unsigned int)strtoul(argv[4], NULL, 0) : 100;
	hold = argc > 5 && !strcmp(argv[5], "hold");
	if (open_with_gid(argv[1], &ctx, &pd, &gid, &gid_idx))
		return 1;
	if (!strcmp(role, "sender"))
		rc = role_sender(n, argc > 5 && !strcmp(argv[5], "badkey"));
	else if (!strcmp(role, "a"))
		rc = role_a(hold);
	else
		rc = role_b(n, hold);
	printf("%s: %d failure(s)\n", role, failures);
	return rc;
}
