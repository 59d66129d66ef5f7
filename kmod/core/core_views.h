/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * core_views.h - the observable side of the core's C interface (core.h
 * includes it): object counts for leak checks, device and QP counters
 * (`rdma statistic`), receive-path and SQ poller counts (debugfs) and the
 * per-object views of `rdma res show ... -dd`, each with its table of
 * printed fields (counters.cpp).
 */
#ifndef SROCE_CORE_VIEWS_H
#define SROCE_CORE_VIEWS_H

#ifdef __cplusplus
extern "C" {
#endif

/* A debug view's printed fields as data (counters.cpp): `rdma res show
 * ... -dd` and debugfs print each by name, in table order, from the struct
 * the snapshot filled (stats.c, debugfs.c loop over the table). A new field
 * is a struct member and a table row; a static_assert catches a row left
 * out. */
enum sroce_core_view_flags {
	SROCE_VIEW_HEX = 1 << 0,      /* printed in hex */
	SROCE_VIEW_KEY = 1 << 1,      /* key material: only for readers ib_core shows keys to */
	SROCE_VIEW_USER_MEM = 1 << 2, /* an MR's: only when it maps user memory (dma == 0) */
};
struct sroce_core_view_field {
	const char *name;
	unsigned short offset;       /* in the view struct */
	unsigned char size;          /* 4 or 8 bytes */
	unsigned char flags;         /* enum sroce_core_view_flags */
};

/* Object counts, for leak checks (debugfs; printed from
 * sroce_core_counts_fields, below). */
struct sroce_core_counts {
	unsigned long long qps;
	unsigned long long cqs;
	unsigned long long srqs;
	unsigned long long mrs;
	unsigned long long mws;     /* memory windows, until their last reference */
	unsigned long long ahs;
	unsigned long long pinned_pages;
	unsigned long long pkts_in_flight; /* allocated by the core, not yet sent or freed */
};
void sroce_core_dev_counts(struct sroce_core_dev *dev, struct sroce_core_counts *c);

/* Receive-path counts by reason (debugfs): a subset of the device counters. */
struct sroce_core_rx_counts {
	unsigned long long packets;
	unsigned long long bad_header;
	unsigned long long icrc_errors;
	unsigned long long bad_qpn;
};
void sroce_core_dev_rx_counts(struct sroce_core_dev *dev, struct sroce_core_rx_counts *c);
/* Their debugfs names, as tables (struct sroce_core_view_field, below). */
extern const struct sroce_core_view_field sroce_core_counts_fields[];
extern const unsigned int sroce_core_counts_nfields;
extern const struct sroce_core_view_field sroce_core_rx_counts_fields[];
extern const unsigned int sroce_core_rx_counts_nfields;

/* The SQ poller's counts (debugfs). */
struct sroce_core_sq_poll_stats {
	int running;                 /* the device has a poller thread */
	int asleep;                  /* it sleeps: NEED_WAKEUP is set */
	unsigned long long sleeps;   /* times it went to sleep */
	unsigned long long wakeups;  /* doorbells that woke it */
	unsigned long long drains;   /* SQ runs it started */
	unsigned long long rechecks; /* sleeps the post-barrier re-check cancelled */
	unsigned long long dozes;    /* sleeps begun early: its CPU was contended */
	unsigned long long held;     /* doorbells that did not wake it: a doze held */
	unsigned long long naps;     /* short sleeps while others wanted its CPU (the grace) */
	unsigned long long max_walk; /* most QPs looked at under one hold of its lock */
};
void sroce_core_dev_sq_poll(struct sroce_core_dev *dev, struct sroce_core_sq_poll_stats *s);

/* ---------------------------------------------------------------------- */
/* Device counters (rdma statistic show link), in this order. Packets and
 * bytes count IP datagrams (IP header to ICRC) of UDP port 4791; rx counts
 * every packet handed to sroce_core_rx, dropped or not. */
enum sroce_core_counter {
	SROCE_CNT_TX_PKTS,
	SROCE_CNT_TX_BYTES,
	SROCE_CNT_RX_PKTS,
	SROCE_CNT_RX_BYTES,
	SROCE_CNT_RETRANS_PKTS,       /* RC request packets sent again (PSN already sent) */
	SROCE_CNT_RETRANS_TIMEOUTS,   /* retry timer expired with packets unacknowledged */
	SROCE_CNT_RETRY_EXCEEDED,     /* WQEs failed with IB_WC_RETRY_EXC_ERR */
	SROCE_CNT_RNR_RETRY_EXCEEDED, /* WQEs failed with IB_WC_RNR_RETRY_EXC_ERR */
	SROCE_CNT_NAK_SENT_PSN_SEQ,   /* responder NAKs sent, by kind */
	SROCE_CNT_NAK_SENT_RNR,
	SROCE_CNT_NAK_SENT_REM_ACCESS,
	SROCE_CNT_NAK_SENT_REM_OP,
	SROCE_CNT_NAK_SENT_INV_REQ,
	SROCE_CNT_NAK_RCVD_PSN_SEQ,   /* NAKs received by an RC requester, by kind */
	SROCE_CNT_NAK_RCVD_RNR,
	SROCE_CNT_NAK_RCVD_REM_ACCESS,
	SROCE_CNT_NAK_RCVD_REM_OP,
	SROCE_CNT_NAK_RCVD_INV_REQ,
	SROCE_CNT_ICRC_ERRORS,        /* dropped: bad ICRC */
	SROCE_CNT_OUT_OF_SEQ_REQ,     /* requests ahead of the expected PSN (RC: dropped, UC: gap) */
	SROCE_CNT_DUPLICATE_REQ,      /* RC requests behind the expected PSN */
	SROCE_CNT_RX_BAD_QPN,         /* dropped: no such QP, or the wrong transport for it */
	SROCE_CNT_RX_BAD_HEADER,      /* dropped: IP/UDP/IB headers malformed or truncated */
	SROCE_CNT_SQ_DOORBELLS,       /* user SQ doorbells (empty POST_SEND) */
	SROCE_CNT_SQ_POLLER_WAKEUPS,  /* doorbells that woke a sleeping SQ poller */
	SROCE_CNT_RX_BAD_PKEY,        /* dropped: BTH P_Key not in the port's table */
	SROCE_CNT_RX_BAD_ADDR,        /* dropped: RC/UC packet not from the QP's peer to its source GID */
	SROCE_CNT_READ_GAP_RESENDS,   /* READs asked again at once: responses came beyond a lost one */
	SROCE_CNT_FAST_REGS,          /* IB_WR_REG_MR executed */
	SROCE_CNT_LOCAL_INVS,         /* IB_WR_LOCAL_INV executed */
	SROCE_CNT_REMOTE_INVS,        /* keys invalidated by a received SEND with invalidate */
	SROCE_CNT_MW_BINDS,           /* memory window binds executed (type 1 unbinds too) */
	SROCE_CNT_TAIL_PROBES,        /* RC packets sent again when answers stopped, before the retry timeout */
	SROCE_CNT_RX_STEERED,         /* packets of connected QPs received on their owner's CPU, not here */
	SROCE_CNT_RX_STEER_DROPS,     /* of them, dropped: that CPU's queue was full */
	SROCE_CNT_TX_ZERO_COPY_PKTS,  /* RC/XRC request packets whose payload left from the MR's pages, uncopied */
	SROCE_CNT_KEY_LOOKUPS,        /* data-path lkey/rkey look-ups in the key table (device only; key_cache.h) */
	SROCE_CNT_MAX
};
/* The counter's name as `rdma statistic` shows it; NULL for id >= SROCE_CNT_MAX. */
const char *sroce_core_counter_name(unsigned int id);
/* Copies min(n, SROCE_CNT_MAX) values in enum order; returns how many. */
unsigned int sroce_core_dev_read_counters(struct sroce_core_dev *dev, unsigned long long *values,
					  unsigned int n);
/* The same for one QP: its own packets, bytes, retransmissions, NAKs and
 * requests (counters.h says which events a QP counts). */
unsigned int sroce_core_qp_read_counters(struct sroce_core_qp *qp, unsigned long long *values, unsigned int n);

/* Resource views (rdma res show ... -dd): a snapshot of one object, taken
 * under its lock. */
struct sroce_core_qp_view {
	unsigned int state;          /* enum ib_qp_state */
	unsigned int type;           /* enum ib_qp_type */
	unsigned int dest_qpn;
	unsigned int sq_psn;         /* next PSN the requester sends */
	unsigned int sq_unacked_psn; /* oldest PSN not acknowledged */
	unsigned int rq_psn;         /* PSN the responder expects */
	unsigned int msn;            /* messages the responder completed */
	unsigned int sq_wqes;        /* WQEs fetched, not yet completed */
	unsigned int rd_atomic_out;  /* outstanding READ/ATOMIC requests */
	unsigned int rd_atomic_max;  /* max_rd_atomic */
	unsigned int responses_pending; /* READ/ATOMIC requests the responder still answers */
	unsigned int window;         /* PSNs that may be out (congestion window) */
	unsigned int window_limit;   /* what the window doubles up to */
	unsigned int retries_left;   /* of retry_cnt */
	unsigned int rnr_retries_left; /* of rnr_retry (7: forever) */
	unsigned int retry_cnt;
	unsigned int rnr_retry;
	unsigned int timeout;        /* 4.096 us * 2^timeout */
	unsigned int rnr_wait;       /* holding off after an RNR NAK */
	unsigned int timer_armed;
	unsigned int srtt_us;        /* smoothed round-trip time (0: no sample yet) */
	unsigned int rttvar_us;      /* its mean deviation */
	unsigned long long retrans_pkts;
	unsigned long long retrans_timeouts;
	unsigned long long xrcd;     /* an XRC target's domain number; 0 for others */
};
void sroce_core_qp_snapshot(struct sroce_core_qp *qp, struct sroce_core_qp_view *s);

extern const struct sroce_core_view_field sroce_core_qp_view_fields[];
extern const unsigned int sroce_core_qp_view_nfields;

struct sroce_core_cq_view {
	unsigned int entries;        /* ring slots */
	unsigned int fill;           /* CQEs produced and not yet consumed */
	unsigned int armed;          /* 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP */
	unsigned int error;          /* overflowed */
	unsigned int user;
};
void sroce_core_cq_snapshot(struct sroce_core_cq *cq, struct sroce_core_cq_view *s);
extern const struct sroce_core_view_field sroce_core_cq_view_fields[];
extern const unsigned int sroce_core_cq_view_nfields;

/* An RSS work queue's receives (debugfs <ibdev>/wqs). */
struct sroce_core_wq_view {
	unsigned long long received;  /* placed and completed successfully */
	unsigned long long errors;    /* completed in error (a malformed WQE, a bad SGE) */
	unsigned long long no_wqe;    /* dropped: no receive posted */
	unsigned long long not_ready; /* dropped: the WQ not in RDY */
};
void sroce_core_wq_snapshot(struct sroce_core_wq *wq, struct sroce_core_wq_view *s);
extern const struct sroce_core_view_field sroce_core_wq_view_fields[];
extern const unsigned int sroce_core_wq_view_nfields;

struct sroce_core_mr_view {
	unsigned int lkey;
	unsigned int rkey;
	unsigned int access;         /* IB_ACCESS_* */
	unsigned int page_shift;
	unsigned long long iova;
	unsigned long long length;
	unsigned long long npages;
	unsigned int dma;            /* a DMA MR (no user pages) */
	unsigned int fast_reg;       /* a fast-registration MR (ib_alloc_mr) */
	unsigned int windows;        /* memory windows bound to it */
};
void sroce_core_mr_snapshot(struct sroce_core_mr *mr, struct sroce_core_mr_view *s);
extern const struct sroce_core_view_field sroce_core_mr_view_fields[];
extern const unsigned int sroce_core_mr_view_nfields;

#ifdef __cplusplus
}
#endif

#endif /* SROCE_CORE_VIEWS_H */
