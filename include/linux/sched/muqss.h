/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-task state of the MuQSS scheduling class, Con Kolivas's Multiple
 * Queue Skiplist Scheduler as a class beside CFS
 * (Documentation/scheduler/muqss.rst).
 */
#ifndef _LINUX_SCHED_MUQSS_H
#define _LINUX_SCHED_MUQSS_H

#include <linux/types.h>

/* Levels of the skip lists: MuQSS draws levels 0..3 only. */
#define MUQSS_SL_LEVELS		4

/* A skip-list node; a list's head is a node of its own (key U64_MAX). */
struct muqss_sl_node {
	u64			key;
	unsigned int		level;	/* highest level it is linked at */
	struct muqss_sl_node	*next[MUQSS_SL_LEVELS];
	struct muqss_sl_node	*prev[MUQSS_SL_LEVELS];
};

struct sched_muqss_entity {
	struct muqss_sl_node	node;
	/* Virtual deadline, in the runqueue clock's ns. */
	u64			deadline;
	/* Time left of the current slice, ns. */
	s64			slice;
	/* The static_prio the deadline was drawn for (a nice change shifts it). */
	int			deadline_prio;
	u8			flags;
	/* WF_TTWU, WF_SYNC, WF_FORK of the wakeup under way, for task_woken(). */
	u8			wake_flags;
	/* Ends MUQSS_F_KERNEL on its way back to user space. */
	bool			resume_queued;
	struct callback_head	resume_work;
};

#endif /* _LINUX_SCHED_MUQSS_H */
