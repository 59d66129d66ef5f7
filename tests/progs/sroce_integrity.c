// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_integrity - a data-integrity check between two hosts over rdma_cm,
 * meant to run across a faulty network (tc netem).
 *
 *   sroce_integrity -s -a BIND_ADDR [-p PORT] [-t ACK_TIMEOUT] [-w SECONDS]
 *   sroce_integrity -c -a SERVER_ADDR [-p PORT] [-n OPS] [-S SEED] [-m MAX]
 *                   [-t ACK_TIMEOUT] [-r RETRY] [-w SECONDS]
 *
 * The client runs OPS operations of sizes 1 B .. MAX (default 1 MiB; the
 * first ones are the edge sizes 1 B and MAX, the rest random, log-spread)
 * at random offsets, each split over 1-4 SGEs scattered in local memory:
 *   WRITE  client -> server target region; then a SEND asks the server to
 *          check the bytes and that nothing else in the region changed (the
 *          server keeps a shadow copy of the whole region);
 *   READ   the server fills a range with a pattern; the client READs it into
 *          scattered pieces and checks them and the guard bytes between;
 *   SEND   header + payload from the client, checked by the server;
 *   PULL   the server SENDs header + payload, checked by the client;
 *   ATOMIC FETCH_ADD on a server counter (the returned value must be the
 *          running sum) and CMP_SWAP (one that matches, one that must not).
 * At the end the server checks the counter against the client's sum. Every
 * completion must be a success. Either side exits non-zero on any mismatch,
 * error completion or timeout (-w, per wait). The QP's local ACK timeout
 * (-t, IB exponent) and retry count (-r) are set through rdma_cm so that
 * loss recovers quickly.
 *
 * This file: the rdma_cm connection and main(). The rest is in
 * sroce_integrity/: integrity.h (the message and memory layout, the shared
 * state), common.c (pattern, memory, polling, sends), client.c (the
 * operations), server.c (the server's loop).
 */
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include "sroce_integrity/integrity.h"

/* ---- connection ------------------------------------------------------------ */

static struct rdma_event_channel *ec;
static int disconnected; /* the peer's DREQ has arrived: nothing to wait for at teardown */

static int wait_event(enum rdma_cm_event_type want, struct rdma_cm_event **out)
{
	struct pollfd pfd = { .fd = ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, wait_s * 1000) != 1) {
		printf("FAIL: no rdma_cm event %s in %d s\n", rdma_event_str(want), wait_s);
		failures++;
		return -1;
	}
	if (rdma_get_cm_event(ec, &ev)) {
		perror("rdma_get_cm_event");
		failures++;
		return -1;
	}
	if (ev->event != want) {
		printf("FAIL: rdma_cm event %s (status %d), want %s\n", rdma_event_str(ev->event), ev->status,
		       rdma_event_str(want));
		rdma_ack_cm_event(ev);
		failures++;
		return -1;
	}
	if (out)
		*out = ev;
	else
		rdma_ack_cm_event(ev);
	return 0;
}

static int resources(struct rdma_cm_id *cid, uint8_t timeout)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = NRECV, .max_send_sge = 5, .max_recv_sge = 2 },
	};

	if (rdma_set_option(cid, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof(timeout))) {
		perror("rdma_set_option(ACK_TIMEOUT)");
		return -1;
	}
	pd = ibv_alloc_pd(cid->verbs);
	cq = pd ? ibv_create_cq(cid->verbs, 64, NULL, NULL, 0) : NULL;
	if (!cq || mem_init())
		return -1;
	ia.send_cq = ia.recv_cq = cq;
	if (rdma_create_qp(cid, pd, &ia)) {
		perror("rdma_create_qp");
		return -1;
	}
	id = cid;
	for (int i = 0; i < NRECV; i++)
		if (post_recv(i))
			return -1;
	return 0;
}

static void teardown(void)
{
	struct rdma_cm_event *ev;

	if (id) {
		rdma_disconnect(id);
		/* The peer may have gone first: any event (or none) ends it. */
		struct pollfd pfd = { .fd = ec->fd, .events = POLLIN };

		if (!disconnected && poll(&pfd, 1, 5000) == 1 && rdma_get_cm_event(ec, &ev) == 0)
			rdma_ack_cm_event(ev);
		rdma_destroy_qp(id);
	}
	if (m.mr)
		ibv_dereg_mr(m.mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	free(m.base);
}

static int get_addr(const char *host, const char *port, struct sockaddr_storage *sa)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res;

	if (getaddrinfo(host, port, &hints, &res)) {
		fprintf(stderr, "cannot resolve %s\n", host);
		return -1;
	}
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

int main(int argc, char **argv)
{
	int server = -1, ops = 100, retry = 7, opt, rc = 1;
	const char *addr = NULL, *port = "19700";
	uint64_t seed = 1, max = MIB;
	uint8_t timeout = 16; /* 268 ms: quick recovery, yet tolerant of TCG stalls */
	struct sockaddr_storage sa;
	struct rdma_cm_id *lid = NULL, *cid;
	struct rdma_cm_event *ev;

	while ((opt = getopt(argc, argv, "sca:p:n:S:m:t:r:w:")) != -1) {
		switch (opt) {
		case 's': server = 1; break;
		case 'c': server = 0; break;
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'n': ops = atoi(optarg); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'm': max = strtoull(optarg, NULL, 0); break;
		case 't': timeout = (uint8_t)atoi(optarg); break;
		case 'r': retry = atoi(optarg); break;
		case 'w': wait_s = atoi(optarg); break;
		default: server = -1; addr = NULL;
		}
	}
	if (server < 0 || !addr || max < 1 || max > MIB || ops < 1) {
		fprintf(stderr, "usage: %s -s|-c -a ADDR [-p PORT] [-n OPS] [-S SEED] [-m MAX<=1MiB] "
				"[-t ACK_TIMEOUT] [-r RETRY] [-w SECONDS]\n", argv[0]);
		return 2;
	}
	rnd_state = seed * 2 + (uint64_t)server;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ec = rdma_create_event_channel();
	if (!ec || get_addr(addr, port, &sa))
		return 1;
	if (server) {
		if (rdma_create_id(ec, &lid, NULL, RDMA_PS_TCP) || rdma_bind_addr(lid, (struct sockaddr *)&sa) ||
		    rdma_listen(lid, 1)) {
			perror("rdma listen");
			return 1;
		}
		printf("listening on %s port %s\n", addr, port);
		if (wait_event(RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
			goto out;
		cid = ev->id;
		rdma_ack_cm_event(ev);
		if (resources(cid, timeout))
			goto out;
		/* The target region and the shadow start equal, with random bytes. */
		for (uint64_t j = 0; j < REGION; j++)
			m.region[j] = (uint8_t)rnd();
		memcpy(m.shadow, m.region, REGION);
		struct remote r = { .region = (uintptr_t)m.region, .counter = (uintptr_t)m.counter,
				    .rkey = m.mr->rkey };
		struct rdma_conn_param cp = { .private_data = &r, .private_data_len = sizeof(r),
					      .responder_resources = 4, .initiator_depth = 4,
					      .retry_count = (uint8_t)retry, .rnr_retry_count = 7 };

		if (rdma_accept(cid, &cp)) {
			perror("rdma_accept");
			goto out;
		}
		if (wait_event(RDMA_CM_EVENT_ESTABLISHED, NULL))
			goto out;
		rc = server_loop() ? 1 : 0;
		/* The client disconnects first (wait_server_finished); until then
		 * its retransmissions must find this QP. */
		if (rc == 0 && wait_event(RDMA_CM_EVENT_DISCONNECTED, NULL) == 0)
			disconnected = 1;
	} else {
		if (rdma_create_id(ec, &cid, NULL, RDMA_PS_TCP) ||
		    rdma_resolve_addr(cid, NULL, (struct sockaddr *)&sa, 5000) ||
		    wait_event(RDMA_CM_EVENT_ADDR_RESOLVED, NULL) || rdma_resolve_route(cid, 5000) ||
		    wait_event(RDMA_CM_EVENT_ROUTE_RESOLVED, NULL)) {
			printf("FAIL: address/route resolution of %s\n", addr);
			goto out;
		}
		if (resources(cid, timeout))
			goto out;
		struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4,
					      .retry_count = (uint8_t)retry, .rnr_retry_count = 7 };

		if (rdma_connect(cid, &cp)) {
			perror("rdma_connect");
			goto out;
		}
		if (wait_event(RDMA_CM_EVENT_ESTABLISHED, &ev))
			goto out;
		if (ev->param.conn.private_data_len < sizeof(peer)) {
			printf("FAIL: accept carried %u bytes of private data\n", ev->param.conn.private_data_len);
			rdma_ack_cm_event(ev);
			goto out;
		}
		memcpy(&peer, ev->param.conn.private_data, sizeof(peer));
		rdma_ack_cm_event(ev);
		printf("connected: seed %" PRIu64 ", %d ops up to %" PRIu64 " B, ack timeout %u, retry %d\n", seed,
		       ops, max, timeout, retry);
		rc = client(ops, max); /* ends once the server has finished */
	}
out:
	teardown();
	if (id)
		rdma_destroy_id(id);
	if (lid)
		rdma_destroy_id(lid);
	rdma_destroy_event_channel(ec);
	if (failures)
		rc = 1;
	return rc;
}
