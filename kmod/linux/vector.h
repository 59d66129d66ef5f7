/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vector.h - completion vectors (seed 002-C, Documentation/rss.md): one per
 * CPU online when the device was added. A CQ's completion events run on its
 * vector's CPU; a CQ can move to another vector at run time, and the vectors
 * of a CPU going offline move to another CPU until it returns.
 */
#ifndef SROCE_VECTOR_H
#define SROCE_VECTOR_H

#include <linux/workqueue.h>

struct sroce_dev;
struct sroce_cq;
struct seq_file;
struct uapi_definition;

/* A CQ's place among the vectors (in struct sroce_cq). */
struct sroce_cq_vec {
	u32 vector;              /* now; READ_ONCE, changed by the driver method */
	u32 created;             /* given to create_cq: SROCE_CQ_HID_DEFAULT's */
	struct work_struct work; /* the event, run on another CPU */
};

int sroce_vectors_module_init(void);
void sroce_vectors_module_exit(void);
/* Device add (before registration) and dealloc_driver. */
int sroce_vectors_init(struct sroce_dev *sdev);
void sroce_vectors_free(struct sroce_dev *sdev);
void sroce_cq_vec_init(struct sroce_cq *cq, u32 vector);
/* destroy_cq, after synchronize_rcu: no event of the CQ runs after it. */
void sroce_cq_vec_cancel(struct sroce_cq *cq);
struct sroce_qp;
/* modify_qp: the owner's CPU and allowed CPUs, for receive steering. */
void sroce_qp_owner_seen(struct sroce_qp *qp);
/* A completion event of cq (batch.c): on its vector's CPU. */
void sroce_cq_comp_event(struct sroce_cq *cq);
const struct cpumask *sroce_get_vector_affinity(struct ib_device *ibdev, int comp_vector);
int sroce_vectors_show(struct seq_file *m, struct sroce_dev *sdev);
int sroce_rx_cpus_show(struct seq_file *m, void *unused);
extern const struct uapi_definition sroce_cq_uapi_defs[];

#endif /* SROCE_VECTOR_H */
