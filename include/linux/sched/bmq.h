/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-task state of the BMQ scheduling class, Alfred Chen's BitMap Queue
 * scheduler as a class beside CFS (Documentation/scheduler/bmq.rst).
 */
#ifndef _LINUX_SCHED_BMQ_H
#define _LINUX_SCHED_BMQ_H

#include <linux/list.h>
#include <linux/types.h>

struct sched_bmq_entity {
	struct list_head	run_list;
	/* Time left of the current slice, ns; refilled once below 100 us. */
	s64			slice;
	/* Runqueue clock when it last got the CPU, for the short-run boost. */
	u64			run_start;
	/* -7 (best) .. +7 (worst), added to the priority to give the level. */
	s8			boost;
	/* The queue level it is listed at (valid while listed). */
	u8			level;
	u8			flags;
	/* The level it finishes kernel code at after a preemption there. */
	u8			kernel_level;
	/* Ends that level on its way back to user space. */
	bool			resume_queued;
	struct callback_head	resume_work;
};

#endif /* _LINUX_SCHED_BMQ_H */
