/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-task state of the ULE scheduling class, a port of FreeBSD's ULE
 * scheduler (Documentation/scheduler/ule.rst). Times are nanoseconds of
 * the runqueue clock where FreeBSD counts ticks.
 */
#ifndef _LINUX_SCHED_ULE_H
#define _LINUX_SCHED_ULE_H

#include <linux/list.h>
#include <linux/types.h>

struct sched_ule_entity {
	struct list_head	run_list;
	/* Interactivity history: recent run time and voluntary sleep. */
	u64			runtime;
	u64			slptime;
	/* Runqueue clock when the task went to sleep, 0 if it did not. */
	u64			sleep_start;
	/* %CPU estimate: time run within the window [pct_first, pct_last]. */
	u64			pct_run;
	u64			pct_first;
	u64			pct_last;
	/* Part of the current slice used up. */
	u64			slice_used;
	/* When it last left a CPU: cache affinity for placement. */
	u64			last_ran;
	int			waker_cpu;
	/* kernel.sched_ule_strict: a reschedule left for the return to user. */
	struct callback_head	resume_work;
	bool			resume_queued;
	/* ULE priority on FreeBSD's 0-255 scale, lower is better. */
	u8			prio;
	/* Which ULE runqueue list holds it (ULE_RUNQ_*), and its index. */
	u8			runq;
	u8			rqindex;
	u8			flags;
};

#endif /* _LINUX_SCHED_ULE_H */
