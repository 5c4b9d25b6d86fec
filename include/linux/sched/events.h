/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scheduler observability: the vocabulary shared by the sched_events
 * tracepoints, the per-CPU event recorder and the sanity checker.
 * Documentation/scheduler/sched-events.rst describes the dump format.
 */
#ifndef _LINUX_SCHED_EVENTS_H
#define _LINUX_SCHED_EVENTS_H

#include <linux/cpumask.h>
#include <linux/types.h>

/* What a cpus_considered event describes. Values are part of the ABI. */
enum sched_ev_kind {
	SCHED_EV_WAKE_IDLE_SIBLING	= 0,	/* CFS select_idle_sibling() */
	SCHED_EV_FORK_IDLEST_GROUP	= 1,	/* CFS find_idlest_group() */
	SCHED_EV_LB_GROUP_STATS		= 2,	/* CFS update_sg_lb_stats() */
	SCHED_EV_LB_BUSIEST_QUEUE	= 3,	/* CFS find_busiest_queue() */
	SCHED_EV_WAKE_IDLE_LONGEST	= 4,	/* CFS select_idle_longest() */
	SCHED_EV_ULE_FIRST		= 16,	/* 16-31: the ULE class */
	SCHED_EV_ULE_PICKCPU		= 16,	/* ULE sched_pickcpu() */
	SCHED_EV_ULE_STEAL		= 17,	/* ULE idle steal, per domain */
	SCHED_EV_ULE_BALANCE		= 18,	/* ULE balancer's donor search */
	SCHED_EV_BMQ_FIRST		= 32,	/* 32-47: the BMQ class */
	SCHED_EV_BMQ_SELECT		= 32,	/* BMQ wakeup placement */
	SCHED_EV_BMQ_PULL		= 33,	/* BMQ idle pull's sources */
	SCHED_EV_MUQSS_FIRST		= 48,	/* 48-63: the MuQSS class */
	SCHED_EV_MUQSS_SELECT		= 48,	/* MuQSS wakeup placement */
	SCHED_EV_MUQSS_LOOK		= 49,	/* MuQSS pick's look across queues */
};

/* Why set_task_cpu() moved a task. Values are part of the ABI. */
enum sched_migrate_reason {
	SCHED_MIGRATE_OTHER		= 0,	/* affinity, hotplug, RT/DL, NUMA */
	SCHED_MIGRATE_WAKEUP		= 1,
	SCHED_MIGRATE_FORK		= 2,
	SCHED_MIGRATE_BALANCE		= 3,	/* periodic (tick, nohz) */
	SCHED_MIGRATE_IDLE_BALANCE	= 4,	/* newly idle CPU pulls */
	SCHED_MIGRATE_ACTIVE_BALANCE	= 5,	/* stopper pushes a running task */
};

/* Life of a sanity-checker violation. Values are part of the ABI. */
enum sched_sanity_phase {
	SCHED_SANITY_WATCH		= 0,	/* seen once, being watched */
	SCHED_SANITY_CONFIRM		= 1,	/* persisted, reported */
	SCHED_SANITY_END		= 2,	/* a confirmed violation ended */
};

/* @cpus AND @and (or just @cpus if @and is NULL) into the bitmap @dst. */
static inline void sched_ev_cpus_and(unsigned long *dst, const struct cpumask *cpus,
				     const struct cpumask *and)
{
	if (and)
		bitmap_and(dst, cpumask_bits(cpus), cpumask_bits(and), nr_cpumask_bits);
	else
		bitmap_copy(dst, cpumask_bits(cpus), nr_cpumask_bits);
}

#ifdef CONFIG_SCHED_EVENTS
bool sched_events_freeze(unsigned int report_id);
#else
static inline bool sched_events_freeze(unsigned int report_id)
{
	return false;
}
#endif

#endif /* _LINUX_SCHED_EVENTS_H */
