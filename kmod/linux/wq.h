/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wq.h - the RSS glue (wq.c, Documentation/rss.md): the verbs of WQs and
 * indirection tables, the RSS part of a create_qp request, and the debugfs
 * view of a device's WQs.
 */
#ifndef SROCE_WQ_H
#define SROCE_WQ_H

#include "sroce.h"

extern const struct ib_device_ops sroce_wq_ops;

/* The RSS part of a create request: an RSS QP's hashing (with a table) or
 * a child of the consecutive-QPN form; qi->rss or qi->rss_child then
 * points into *r. */
struct sroce_rss_req {
	struct sroce_core_rss_init ri;
	struct sroce_core_rss_child rc;
};
int sroce_rss_init(const struct ib_qp_init_attr *init, const struct sroce_create_qp_req *req,
		   struct sroce_rss_req *r, struct sroce_core_qp_init *qi);

int sroce_wqs_show(struct seq_file *m, struct sroce_dev *sdev);

#endif
