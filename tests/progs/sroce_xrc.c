// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_xrc DEV objects|share: XRC through libibverbs on one device (an
 * initiator and a target of one device, over its loopback).
 *
 * objects: domains (private with fd -1; a file's with O_CREAT, refused
 * with O_EXCL once it exists, EAGAIN without O_CREAT), XRC SRQs and their
 * numbers (a basic SRQ has none), closing a domain an SRQ still uses
 * (EBUSY), a target made with another context's domain, work requests
 * posted to a target, ibv_open_qp with a QPN that is no target and with
 * another domain; then SENDs into two SRQs through one target, every byte
 * checked, and a SEND naming no SRQ of the target's domain (a number
 * nothing has, another domain's SRQ): the sender completes with
 * REM_ACCESS_ERR, the target gets IBV_EVENT_QP_ACCESS_ERR.
 *
 * share: ibv_open_qp across three processes. The creator makes a target,
 * two children open it through the same domain file; the creator destroys
 * its handle and traffic still arrives; it lives while one handle does
 * (ibv_open_qp still finds it) and is gone with the last. A bad SEND puts
 * it in error: the openers say whether its event reached them (ib_core
 * 6.1's ibv_open_qp gives a handle no async event file, so none does:
 * Documentation/kernel-notes.md); the creator's own handle gets it in
 * `objects`.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/srocedv.h>

#include "progs_common.h"

enum { MSG = 4096, SRQ_WR = 16 };

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;  /* the initiators' sends */
static struct ibv_cq *rcq; /* the XRC SRQs' receives */
static union ibv_gid gid;
static int gid_idx;
static uint8_t *buf; /* [0, MSG): what is sent; then one MSG per receive */
static struct ibv_mr *mr;

static struct ibv_xrcd *open_xrcd(struct ibv_context *c, const char *path, int oflags)
{
	struct ibv_xrcd_init_attr a = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
					.fd = -1, .oflags = oflags };
	struct ibv_xrcd *x;
	int fd = -1;

	if (path) {
		fd = open(path, O_RDONLY | O_CREAT, 0600);
		if (fd < 0)
			return NULL;
		a.fd = fd;
	}
	x = ibv_open_xrcd(c, &a);
	if (fd >= 0) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return x;
}

static struct ibv_srq *make_srq(struct ibv_xrcd *xrcd)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = SRQ_WR, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     (xrcd ? IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ : 0),
		.srq_type = xrcd ? IBV_SRQT_XRC : IBV_SRQT_BASIC,
		.pd = pd, .xrcd = xrcd, .cq = rcq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

static struct ibv_qp *make_tgt(struct ibv_context *c, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex a = { .qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
					 .xrcd = xrcd };

	return ibv_create_qp_ex(c, &a);
}

/* As ibv_xsrq_pingpong makes it: ibv_create_qp with the PD only. */
static struct ibv_qp *make_ini(void)
{
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_XRC_SEND,
				      .cap = { .max_send_wr = 16, .max_send_sge = 1 } };

	return ibv_create_qp(pd, &a);
}

/* INIT -> RTR (-> RTS) with the masks ib_core's XRC columns ask for. */
static int connect_qp(struct ibv_qp *qp, uint32_t dest, bool tgt)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.min_rnr_timer = 1;
	a.ah_attr = (struct ibv_ah_attr){ .is_global = 1, .port_num = 1,
					  .grh = { .dgid = gid, .sgid_index = (uint8_t)gid_idx, .hop_limit = 64 } };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       (tgt ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 3;
	a.rnr_retry = 7;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN |
					     (tgt ? 0 : IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
}

static int post_srq(struct ibv_srq *srq, uint64_t wr_id, unsigned int slot)
{
	struct ibv_sge s = { (uintptr_t)buf + MSG * (1 + slot), MSG, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1 }, *bad;

	memset(buf + MSG * (1 + slot), 0, MSG);
	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* One SEND of len bytes to SRQ srqn; its send completion's status (-1 for
 * none within 10 s). */
static int send_to(struct ibv_qp *ini, uint32_t srqn, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1000 + srqn, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (ibv_post_send(ini, &wr, &bad))
		return -1;
	for (int i = 0; i < 10000; i++) {
		struct ibv_wc wc;

		if (ibv_poll_cq(cq, 1, &wc) == 1)
			return wc.wr_id == wr.wr_id ? (int)wc.status : -1;
		usleep(1000);
	}
	return -1;
}

/* The receive completion of wr_id in the SRQs' CQ, byte_len len (false if
 * none). */
static bool received(uint64_t wr_id, uint32_t len, uint32_t qpn)
{
	for (int i = 0; i < 10000; i++) {
		struct ibv_wc wc;

		if (ibv_poll_cq(rcq, 1, &wc) == 1)
			return wc.wr_id == wr_id && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			       wc.byte_len == len && wc.qp_num == qpn;
		usleep(1000);
	}
	return false;
}

/* The next async event of c, if one comes within ms: its type, and the QP
 * it names in *qp. -1 when none. */
static int async_event(struct ibv_context *c, struct ibv_qp **qp, int ms)
{
	struct pollfd p = { .fd = c->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int type;

	if (poll(&p, 1, ms) != 1 || ibv_get_async_event(c, &ev))
		return -1;
	type = ev.event_type;
	*qp = ev.element.qp;
	ibv_ack_async_event(&ev);
	return type;
}

static int setup(const char *dev)
{
	if (open_with_gid(dev, &ctx, &pd, &gid, &gid_idx))
		return -1;
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = calloc(1 + SRQ_WR, MSG);
	if (!cq || !rcq || !buf)
		return -1;
	mr = ibv_reg_mr(pd, buf, MSG * (1 + SRQ_WR), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return -1;
	for (int i = 0; i < MSG; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	return 0;
}

static void objects(void)
{
	const char *path = "/tmp/sroce_xrc.domain", *none = "/tmp/sroce_xrc.none";
	struct ibv_xrcd *priv, *x, *other;
	struct ibv_srq *basic, *s1, *s2, *theirs;
	struct ibv_qp *tgt, *ini, *q;
	uint32_t n1 = 0, n2 = 0, nt = 0, n;
	struct ibv_qp_open_attr oa;
	int rc;

	/* Domains. */
	priv = open_xrcd(ctx, NULL, 0);
	CHECK(priv != NULL, "a private domain (fd -1)");
	unlink(path);
	unlink(none);
	x = open_xrcd(ctx, path, O_CREAT);
	CHECK(x != NULL, "a file's domain with O_CREAT");
	CHECK(!open_xrcd(ctx, path, O_CREAT | O_EXCL) && errno == EINVAL,
	      "the same file with O_CREAT | O_EXCL: %s (want EINVAL)", strerror(errno));
	CHECK(!open_xrcd(ctx, none, 0) && errno == EAGAIN, "a file without a domain, no O_CREAT: %s (want EAGAIN)",
	      strerror(errno));
	other = open_xrcd(ctx, NULL, 0);
	if (!priv || !x || !other)
		return;

	/* SRQs and their numbers. */
	basic = make_srq(NULL);
	s1 = make_srq(x);
	s2 = make_srq(x);
	theirs = make_srq(other);
	CHECK(basic && s1 && s2 && theirs, "a basic SRQ and three XRC SRQs");
	if (!basic || !s1 || !s2 || !theirs)
		return;
	CHECK_ERR(ibv_get_srq_num(basic, &n), EOPNOTSUPP, "ibv_get_srq_num of a basic SRQ");
	CHECK(!ibv_get_srq_num(s1, &n1) && !ibv_get_srq_num(s2, &n2) && !ibv_get_srq_num(theirs, &nt) && n1 && n2 &&
		      n1 != n2 && nt != n1 && nt != n2,
	      "ibv_get_srq_num: %u, %u, %u", n1, n2, nt);
	CHECK_ERR(ibv_close_xrcd(other), EBUSY, "closing a domain its SRQ still uses");

	/* Targets. */
	struct ibv_context *ctx2 = open_by_name(ibv_get_device_name(ctx->device));
	struct ibv_xrcd *x2 = ctx2 ? open_xrcd(ctx2, NULL, 0) : NULL;

	errno = 0;
	q = x2 ? make_tgt(ctx, x2) : NULL;
	CHECK(!q && errno == EINVAL, "a target with another context's domain: %s (want EINVAL)", strerror(errno));
	if (q)
		ibv_destroy_qp(q);
	if (x2)
		ibv_close_xrcd(x2);
	if (ctx2)
		ibv_close_device(ctx2);
	tgt = make_tgt(ctx, x);
	ini = make_ini();
	CHECK(tgt && ini, "a target (ibv_create_qp_ex, the domain only) and an initiator (ibv_create_qp, the PD only)");
	if (!tgt || !ini)
		return;
	CHECK(!connect_qp(ini, tgt->qp_num, false) && !connect_qp(tgt, ini->qp_num, true),
	      "initiator 0x%x and target 0x%x connected (RTS)", ini->qp_num, tgt->qp_num);
	{
		struct ibv_sge s = { (uintptr_t)buf, 8, mr->lkey };
		struct ibv_send_wr sw = { .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND }, *sbad;
		struct ibv_recv_wr rw = { .sg_list = &s, .num_sge = 1 }, *rbad;

		CHECK_ERR(ibv_post_send(tgt, &sw, &sbad), EINVAL, "ibv_post_send on a target");
		CHECK_ERR(ibv_post_recv(tgt, &rw, &rbad), EINVAL, "ibv_post_recv on a target");
		CHECK_ERR(ibv_post_recv(ini, &rw, &rbad), EINVAL, "ibv_post_recv on an initiator");
	}
	oa = (struct ibv_qp_open_attr){ .comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
						     IBV_QP_OPEN_ATTR_TYPE,
					.qp_num = ini->qp_num, .xrcd = x, .qp_type = IBV_QPT_XRC_RECV };
	errno = 0;
	q = ibv_open_qp(ctx, &oa);
	CHECK(!q, "ibv_open_qp of a QPN that is no target of the domain: %s", strerror(errno));
	oa.qp_num = tgt->qp_num;
	oa.xrcd = priv;
	errno = 0;
	q = ibv_open_qp(ctx, &oa);
	CHECK(!q, "ibv_open_qp of the target through another domain: %s", strerror(errno));
	oa.xrcd = x;
	q = ibv_open_qp(ctx, &oa);
	CHECK(q && q->qp_num == tgt->qp_num, "ibv_open_qp of the target through its domain");
	{
		/* A target's handle is ib_core's bare ib_qp, not the driver's QP:
		 * the receive-CPU method looks at its type before reading past
		 * the end of it. */
		int cpu;

		CHECK_ERR(srocedv_query_qp_rx_cpu(tgt, &cpu), EOPNOTSUPP, "the receive CPU of a target");
		if (q)
			CHECK_ERR(srocedv_modify_qp_rx_cpu(q, 0), EOPNOTSUPP, "the receive CPU of an opened target");
	}
	if (q)
		ibv_destroy_qp(q);

	/* Traffic into both SRQs through the one target. */
	for (unsigned int i = 0; i < 4; i++) {
		struct ibv_srq *s = i & 1 ? s2 : s1;
		uint32_t len = i == 3 ? MSG : 1 + i * 1000;

		rc = post_srq(s, 10 + i, i);
		rc = rc ? rc : send_to(ini, i & 1 ? n2 : n1, len);
		CHECK(rc == IBV_WC_SUCCESS && received(10 + i, len, tgt->qp_num) && !memcmp(buf + MSG * (1 + i), buf, len),
		      "SEND %u B to SRQ %u: received, every byte", len, i & 1 ? n2 : n1);
	}
	/* Targets of no SRQ of the domain: a new pair for each (the first
	 * error ends the target). */
	uint32_t bad[] = { 0xfffff0, nt };
	for (unsigned int i = 0; i < 2; i++) {
		struct ibv_qp *t = make_tgt(ctx, x), *s = make_ini(), *evqp = NULL;
		int ev;

		if (!t || !s || connect_qp(s, t->qp_num, false) || connect_qp(t, s->qp_num, true)) {
			CHECK(0, "a second pair");
			return;
		}
		rc = send_to(s, bad[i], 64);
		CHECK(rc == IBV_WC_REM_ACCESS_ERR, "SEND to %s: %s (want remote access error)",
		      i ? "another domain's SRQ" : "an SRQ number nothing has",
		      rc < 0 ? "no completion" : ibv_wc_status_str(rc));
		ev = async_event(ctx, &evqp, 10000);
		CHECK(ev == IBV_EVENT_QP_ACCESS_ERR && evqp == t, "the target's event: %s",
		      ev < 0 ? "none" : ibv_event_type_str(ev));
		ibv_destroy_qp(s);
		ibv_destroy_qp(t);
	}
	CHECK(!ibv_destroy_qp(ini) && !ibv_destroy_qp(tgt), "destroy the initiator and the target");
	CHECK(!ibv_destroy_srq(s1) && !ibv_destroy_srq(s2) && !ibv_destroy_srq(theirs) && !ibv_destroy_srq(basic),
	      "destroy the SRQs");
	CHECK(!ibv_close_xrcd(x) && !ibv_close_xrcd(other) && !ibv_close_xrcd(priv), "close the domains");
	unlink(path);
}

/* A child of `share`: opens the target through the domain file, says so,
 * looks for the target's event when told, then destroys its handle when
 * told. */
static int opener(const char *dev, const char *path, uint32_t qpn, int in, int out)
{
	struct ibv_context *c = open_by_name(dev);
	struct ibv_xrcd *x = c ? open_xrcd(c, path, 0) : NULL;
	struct ibv_qp_open_attr oa = { .comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
						    IBV_QP_OPEN_ATTR_TYPE,
				       .qp_num = qpn, .xrcd = x, .qp_type = IBV_QPT_XRC_RECV };
	struct ibv_qp *q = x ? ibv_open_qp(c, &oa) : NULL, *evqp = NULL;
	char b = q ? 'o' : 'x';
	int ev;

	if (write(out, &b, 1) != 1 || !q || read(in, &b, 1) != 1)
		return 1;
	ev = async_event(c, &evqp, 3000);
	b = ev == IBV_EVENT_QP_ACCESS_ERR && evqp == q ? 'e' : 'n';
	if (write(out, &b, 1) != 1 || read(in, &b, 1) != 1)
		return 1;
	return ibv_destroy_qp(q) || ibv_close_xrcd(x) || ibv_close_device(c);
}

static void share(const char *dev)
{
	const char *path = "/tmp/sroce_xrc.share";
	struct ibv_xrcd *x;
	struct ibv_srq *srq;
	struct ibv_qp *tgt, *ini, *q;
	int to[2][2], from[2][2];
	pid_t pid[2];
	uint32_t srqn = 0, qpn;
	struct ibv_qp_open_attr oa;
	char b;
	int rc, st;

	unlink(path);
	x = open_xrcd(ctx, path, O_CREAT);
	srq = x ? make_srq(x) : NULL;
	tgt = x ? make_tgt(ctx, x) : NULL;
	ini = make_ini();
	if (!srq || !tgt || !ini || ibv_get_srq_num(srq, &srqn) || connect_qp(ini, tgt->qp_num, false) ||
	    connect_qp(tgt, ini->qp_num, true)) {
		CHECK(0, "the creator's domain, SRQ, target and initiator");
		return;
	}
	qpn = tgt->qp_num;
	for (int i = 0; i < 2; i++) {
		if (pipe(to[i]) || pipe(from[i]))
			return;
		pid[i] = fork();
		if (pid[i] == 0)
			_exit(opener(dev, path, qpn, to[i][0], from[i][1]));
	}
	for (int i = 0; i < 2; i++)
		CHECK(read(from[i][0], &b, 1) == 1 && b == 'o', "process %d opened target 0x%x", (int)pid[i], qpn);
	CHECK(!ibv_destroy_qp(tgt), "the creator destroys its handle first");
	rc = post_srq(srq, 7, 0);
	rc = rc ? rc : send_to(ini, srqn, 2000);
	CHECK(rc == IBV_WC_SUCCESS && received(7, 2000, qpn) && !memcmp(buf + MSG, buf, 2000),
	      "a SEND still reaches the SRQ through the target the others hold");
	rc = send_to(ini, srqn + 1000, 64);
	CHECK(rc == IBV_WC_REM_ACCESS_ERR, "a SEND to no SRQ: %s", rc < 0 ? "no completion" : ibv_wc_status_str(rc));
	for (int i = 0; i < 2; i++) {
		b = 'w';
		if (write(to[i][1], &b, 1) != 1 || read(from[i][0], &b, 1) != 1)
			b = '?';
		printf("  process %d: IBV_EVENT_QP_ACCESS_ERR on its opened handle: %s\n", (int)pid[i],
		       b == 'e' ? "yes" : "no (ib_core gives opened handles no event file)");
	}
	oa = (struct ibv_qp_open_attr){ .comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
						     IBV_QP_OPEN_ATTR_TYPE,
					.qp_num = qpn, .xrcd = x, .qp_type = IBV_QPT_XRC_RECV };
	for (int i = 0; i < 2; i++) {
		b = 'd';
		if (write(to[i][1], &b, 1) != 1 || waitpid(pid[i], &st, 0) != pid[i])
			st = -1;
		CHECK(st == 0, "process %d destroyed its handle and exited", (int)pid[i]);
		q = ibv_open_qp(ctx, &oa);
		if (i == 0)
			CHECK(q != NULL, "with one handle left the target is still there (ibv_open_qp finds it)");
		else
			CHECK(!q, "with the last handle gone the target is too (ibv_open_qp: %s)", strerror(errno));
		if (q)
			ibv_destroy_qp(q);
	}
	CHECK(!ibv_destroy_qp(ini) && !ibv_destroy_srq(srq) && !ibv_close_xrcd(x), "the creator cleans up");
	unlink(path);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV objects|share\n", argv[0]);
		return 2;
	}
	if (setup(argv[1])) {
		fprintf(stderr, "setup on %s failed: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (!strcmp(argv[2], "share"))
		share(argv[1]);
	else
		objects();
	ibv_dereg_mr(mr);
	ibv_destroy_cq(rcq);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
