/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BMQ scheduling class: its constants and the pure arithmetic of levels,
 * boosts and slices, kept apart from the class so that KUnit can test
 * them on plain numbers. Documentation/scheduler/bmq.rst.
 */
#ifndef _KERNEL_SCHED_BMQ_H
#define _KERNEL_SCHED_BMQ_H

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/stop_machine.h>
#include <linux/types.h>

/* Boost range: -7 .. +7 levels of half a nice step each. */
#define BMQ_MAX_ADJ		7
/* (39 nice steps + 14 boost steps) / 2 + 1 levels: 0 (best) .. 26. */
#define BMQ_LEVELS		((NICE_WIDTH - 1 + 2 * BMQ_MAX_ADJ) / 2 + 1)
/* Less than this left of a slice counts as an expired slice. */
#define BMQ_RESCHED_NS		(100 << 10)
/* Project C's slices: 4 ms (4 << 20 ns) by default, or 2 ms. */
#define BMQ_SLICE_DEFAULT_MS	4
#define BMQ_SLICE_SHIFT		20

struct bmq_rq {
	/* One bit per non-empty level, and a FIFO per level. */
	unsigned long		bitmap;
	struct list_head	queue[BMQ_LEVELS];
	/* BMQ tasks queued here, the running one included. */
	unsigned int		nr;
	/* Of those, the ones allowed on more than one CPU. */
	unsigned int		nr_movable;
	/* Best level here, running task included; BMQ_LEVELS when none. */
	u8			prio;
	/* Yield type 2: the task the next pick passes over once. */
	struct task_struct	*skip;
#ifdef CONFIG_SCHED_HRTICK
	/* When the scheduler tick is next due here, in rq_clock() time. */
	u64			next_tick;
#endif
#ifdef CONFIG_SMP
	/* Wakes this CPU, when idle, to pull work; one sender at a time. */
	call_single_data_t	pull_csd;
	atomic_t		pull_kicked;
	/* SMT active balance: the stopper moves @active_task off this CPU. */
	int			active_balance;
	int			active_dst;
	struct task_struct	*active_task;
	struct cpu_stop_work	active_work;
#endif
};

/*
 * The level of a task of priority @prio (100..139 for nice -20..19) and
 * @boost: two priorities per level, so nice values 16 apart never share.
 */
static inline unsigned int bmq_level(int prio, int boost)
{
	int level = (prio - MAX_RT_PRIO + BMQ_MAX_ADJ + boost) / 2;

	return clamp(level, 0, BMQ_LEVELS - 1);
}

/*
 * A waking task of @level may be placed on a CPU whose best queued level
 * (its running task included) is @cpu_level. An equal level counts: the
 * task goes back to its previous CPU beside work of its own level and
 * waits there, rather than preempting worse work elsewhere, as Project
 * C's cached preempt mask makes it do (bmq.rst says how).
 */
static inline bool bmq_wake_target(unsigned int cpu_level, unsigned int level)
{
	return cpu_level >= level;
}

/*
 * The best boost a policy may reach: only SCHED_NORMAL goes below 0, and
 * SCHED_ISO, which runs as SCHED_NORMAL outside MuQSS.
 */
static inline int bmq_boost_min(unsigned int policy)
{
	return policy == SCHED_NORMAL || policy == SCHED_ISO ? -BMQ_MAX_ADJ : 0;
}

static inline int bmq_boosted(int boost, unsigned int policy)
{
	return max(boost - 1, bmq_boost_min(policy));
}

static inline int bmq_deboosted(int boost)
{
	return min(boost + 1, BMQ_MAX_ADJ);
}

/*
 * A run shorter than this before a voluntary sleep earns a boost: the
 * slice at +7, shifted one more bit per step better, so reaching -7 takes
 * runs of a few hundred ns.
 */
static inline u64 bmq_boost_threshold(u64 slice_ns, int boost)
{
	return slice_ns >> (BMQ_MAX_ADJ + 1 - boost);
}

/*
 * Project C's sched_task_deactivate(): a task that sleeps after running
 * less than the threshold since its run window began (@ran ns) is
 * interactive and earns a boost.
 */
static inline int bmq_sleep_boost(int boost, u64 ran, u64 slice_ns, unsigned int policy)
{
	return ran < bmq_boost_threshold(slice_ns, boost) ? bmq_boosted(boost, policy) : boost;
}

/* sched_task_ttwu(): a sleep longer than a slice (@slept ns) earns a boost. */
static inline int bmq_wakeup_boost(int boost, u64 slept, u64 slice_ns, unsigned int policy)
{
	return slept > slice_ns ? bmq_boosted(boost, policy) : boost;
}

/* time_slice_expired(): a task that stays runnable is deboosted. */
static inline int bmq_expire_boost(int boost, bool runnable)
{
	return runnable ? bmq_deboosted(boost) : boost;
}

/*
 * The start of a task's run window when it is picked at @now: a new one,
 * unless it is picked again at once (after its slice ran out or it
 * yielded), since Project C times runs from the last switch between two
 * different tasks (rq->last_ts_switch).
 */
static inline u64 bmq_run_window(u64 run_start, bool repick, u64 now)
{
	return repick ? run_start : now;
}

/*
 * Fork: parent and child share the parent's remaining slice. Returns true
 * when the share is too short to run on, in which case the child gets a
 * full slice and the parent must be rescheduled.
 */
static inline bool bmq_fork_split(s64 *parent, s64 *child, s64 full)
{
	*parent /= 2;
	if (*parent < BMQ_RESCHED_NS) {
		*child = full;
		return true;
	}
	*child = *parent;
	return false;
}

/*
 * A CPU with @nr_bmq BMQ tasks among @nr_running tasks of every class has
 * a BMQ task waiting that an idle CPU may take. Project C keeps all classes
 * in one queue and counts them all, so a normal task behind an RT task
 * counts as waiting there too.
 */
static inline bool bmq_has_waiter(unsigned int nr_bmq, unsigned int nr_running)
{
	return nr_bmq && nr_running >= 2;
}

/*
 * The stall watchdog's rule: a task waiting at @level waits behind better
 * work for as long as its CPU's best level (@cpu_level, the running task's
 * included) is better. Levels are strict; only equals take turns.
 */
static inline bool bmq_waits_behind(unsigned int level, unsigned int cpu_level)
{
	return cpu_level < level;
}

/*
 * The level a task of @level preempted in kernel code waits at until it
 * returns to user space, when its CPU's best level is @cpu_level: that of
 * the work that preempted it, if better, so that it takes turns with that
 * work and whatever lock it holds is released in bounded time.
 */
static inline unsigned int bmq_kernel_level(unsigned int level, unsigned int cpu_level)
{
	return min(level, cpu_level);
}

/* Tasks one pull may look at on a source: half its runnable, as Project C. */
static inline unsigned int bmq_pull_budget(unsigned int nr_running, unsigned int nr_migrate)
{
	return min(nr_running / 2, nr_migrate);
}

/* "sched_timeslice=": 2 or 4 (ms); anything else is -EINVAL. */
static inline int bmq_parse_timeslice(const char *str, unsigned int *ms)
{
	unsigned int val;

	if (!str || kstrtouint(str, 10, &val) || (val != 2 && val != 4))
		return -EINVAL;
	*ms = val;
	return 0;
}

struct sched_class;
extern const struct sched_class bmq_sched_class;

#endif /* _KERNEL_SCHED_BMQ_H */
