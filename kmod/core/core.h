/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * core.h - the C interface of the sroce core, called by the kernel glue
 * (kmod/linux) and by the host tests.
 *
 * Handles are opaque. Every function that can fail returns 0 or a negative
 * errno. Values use the IBTA/ib_verbs encodings (port states, MTU enums) so
 * the glue copies them without translation tables.
 */
#ifndef SROCE_CORE_H
#define SROCE_CORE_H

#ifdef __cplusplus
extern "C" {
#endif

struct sroce_core_dev;
struct sroce_core_pd;
struct sroce_core_ucontext;
struct sroce_alloc_ucontext_req;
struct sroce_alloc_ucontext_resp;

/* enum ib_port_state / ib_port_phys_state / ib_mtu values. */
enum sroce_core_port_state { SROCE_PORT_DOWN = 1, SROCE_PORT_ACTIVE = 4 };
enum sroce_core_phys_state { SROCE_PHYS_DISABLED = 3, SROCE_PHYS_LINK_UP = 5 };
enum sroce_core_mtu {
	SROCE_MTU_NONE = 0, /* netdev MTU too small for any IB MTU */
	SROCE_MTU_256 = 1,
	SROCE_MTU_512 = 2,
	SROCE_MTU_1024 = 3,
	SROCE_MTU_2048 = 4,
	SROCE_MTU_4096 = 5,
};

/* What a netdev change means for the port: the async event to raise. */
enum sroce_core_port_event { SROCE_EVENT_NONE = 0, SROCE_EVENT_PORT_ACTIVE, SROCE_EVENT_PORT_ERR };

struct sroce_core_dev_init {
	unsigned char mac[6];
	unsigned int netdev_mtu;
	int netdev_up; /* running with carrier */
};

/* Device-wide limits; see param.h. */
struct sroce_core_dev_attr {
	unsigned long long node_guid; /* big-endian, as ib_device.node_guid */
	unsigned long long sys_image_guid;
	unsigned long long fw_ver;
	unsigned long long max_mr_size;
	unsigned long long page_size_cap;
	unsigned int vendor_id;
	unsigned int vendor_part_id;
	unsigned int hw_ver;
	unsigned int max_qp;
	unsigned int max_qp_wr;
	unsigned int max_send_sge;
	unsigned int max_recv_sge;
	unsigned int max_sge_rd;
	unsigned int max_cq;
	unsigned int max_cqe;
	unsigned int max_mr;
	unsigned int max_mw;
	unsigned int max_pd;
	unsigned int max_qp_rd_atom;
	unsigned int max_qp_init_rd_atom;
	unsigned int max_res_rd_atom;
	unsigned int max_srq;
	unsigned int max_srq_wr;
	unsigned int max_srq_sge;
	unsigned int max_ah;
	unsigned int max_pkeys;
	unsigned int local_ca_ack_delay;
	unsigned int max_fast_reg_page_list_len;
	unsigned int max_inline_data;
};

struct sroce_core_port_attr {
	unsigned int state;      /* enum sroce_core_port_state */
	unsigned int phys_state; /* enum sroce_core_phys_state */
	unsigned int max_mtu;    /* enum sroce_core_mtu */
	unsigned int active_mtu; /* enum sroce_core_mtu */
	unsigned int gid_tbl_len;
	unsigned int pkey_tbl_len;
	unsigned int max_msg_sz;
};

/* Pure helpers. */
unsigned int sroce_core_mtu_for_netdev(unsigned int netdev_mtu);
/* EUI-64 from a MAC (the universal/local bit flipped), big-endian. */
unsigned long long sroce_core_guid_from_mac(const unsigned char mac[6]);

/* Devices. */
int sroce_core_dev_create(const struct sroce_core_dev_init *init, struct sroce_core_dev **out);
void sroce_core_dev_destroy(struct sroce_core_dev *dev);
void sroce_core_query_device(struct sroce_core_dev *dev, struct sroce_core_dev_attr *attr);
void sroce_core_query_port(struct sroce_core_dev *dev, struct sroce_core_port_attr *attr);
/* The netdev changed state or MTU; returns the event to raise, if any. */
enum sroce_core_port_event sroce_core_netdev_changed(struct sroce_core_dev *dev, int netdev_up,
						     unsigned int netdev_mtu);

/* User contexts. req holds req_len bytes copied from udata (zero-filled up
 * to sizeof(*req) when the provider's struct is shorter). */
int sroce_core_ucontext_create(struct sroce_core_dev *dev, const struct sroce_alloc_ucontext_req *req,
			       unsigned long req_len, struct sroce_alloc_ucontext_resp *resp,
			       struct sroce_core_ucontext **out);
void sroce_core_ucontext_destroy(struct sroce_core_ucontext *uctx);
/* Fills the context page (struct sroce_context_page) the glue maps. */
void sroce_core_ucontext_fill_page(struct sroce_core_ucontext *uctx, void *page);

/* Protection domains. */
int sroce_core_pd_create(struct sroce_core_dev *dev, struct sroce_core_pd **out);
void sroce_core_pd_destroy(struct sroce_core_pd *pd);
unsigned int sroce_core_pd_number(const struct sroce_core_pd *pd);

#ifdef __cplusplus
}
#endif

#endif /* SROCE_CORE_H */
