/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ULE scheduling class: FreeBSD's constants and the pure parts of its
 * algorithm (interactivity score, priority, calendar queue, slice), kept
 * apart from the class so that KUnit can test them on plain numbers.
 *
 * FreeBSD counts run and sleep time in hz ticks shifted left by 10 and
 * samples run time at stathz (about 127 Hz). Here both are nanoseconds:
 * run time comes exactly from update_curr(), sleep time from the runqueue
 * clock between dequeue and enqueue, and every constant that FreeBSD
 * states in ticks is converted at FreeBSD's defaults (hz = 1000,
 * stathz = 127). Documentation/scheduler/ule.rst lists each conversion.
 */
#ifndef _KERNEL_SCHED_ULE_H
#define _KERNEL_SCHED_ULE_H

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/smp.h>
#include <linux/stop_machine.h>
#include <linux/time64.h>
#include <linux/types.h>

/* FreeBSD's priority scale (sys/sys/priority.h): lower is better. */
#define ULE_PRI_MIN_REALTIME	48
#define ULE_PRI_MIN_KERN	80
#define ULE_PRI_MAX_KERN	119
#define ULE_PRI_MIN_TIMESHARE	120
#define ULE_PRI_MAX_TIMESHARE	223
#define ULE_PRI_MIN_IDLE	224
#define ULE_PRI_MAX_IDLE	255

/* Timeshare split: interactive band, then batch band with nice margins. */
#define ULE_NICE_RANGE		40
#define ULE_NICE_HALF		(ULE_NICE_RANGE / 2)
#define ULE_TIMESHARE_RANGE	(ULE_PRI_MAX_TIMESHARE - ULE_PRI_MIN_TIMESHARE + 1)
#define ULE_INTERACT_RANGE	((ULE_TIMESHARE_RANGE - ULE_NICE_RANGE) / 2)
#define ULE_PRI_MIN_INTERACT	ULE_PRI_MIN_TIMESHARE
#define ULE_PRI_MAX_INTERACT	(ULE_PRI_MIN_TIMESHARE + ULE_INTERACT_RANGE - 1)
#define ULE_PRI_MIN_BATCH	(ULE_PRI_MIN_TIMESHARE + ULE_INTERACT_RANGE)
#define ULE_PRI_MAX_BATCH	ULE_PRI_MAX_TIMESHARE
#define ULE_BATCH_RANGE		(ULE_PRI_MAX_BATCH - ULE_PRI_MIN_BATCH + 1)
#define ULE_SCHED_PRI_MIN	(ULE_PRI_MIN_BATCH + ULE_NICE_HALF)
#define ULE_SCHED_PRI_MAX	(ULE_PRI_MAX_BATCH - ULE_NICE_HALF)
#define ULE_SCHED_PRI_RANGE	(ULE_SCHED_PRI_MAX - ULE_SCHED_PRI_MIN + 1)

/* Interactivity score: 0 (sleeps all the time) to 100 (never sleeps). */
#define ULE_INTERACT_MAX	100
#define ULE_INTERACT_HALF	(ULE_INTERACT_MAX / 2)
#define ULE_INTERACT_THRESH	30

/* History kept for the score: 5 s; a child inherits at most 0.5 s. */
#define ULE_SLP_RUN_MAX		(5ULL * NSEC_PER_SEC)
#define ULE_SLP_RUN_FORK	(NSEC_PER_SEC / 2)

/* %CPU window: 10 s target, 11 s before it is scaled back. */
#define ULE_PCT_TARGET		(10ULL * NSEC_PER_SEC)
#define ULE_PCT_MAX		(11ULL * NSEC_PER_SEC)

/* One FreeBSD hz tick (hz = 1000) and one stathz tick (127 Hz). */
#define ULE_TICK_NS		(NSEC_PER_SEC / 1000)
#define ULE_STATHZ		127
#define ULE_STAT_TICK_NS	(NSEC_PER_SEC / ULE_STATHZ)

/* Slices: 12 stathz ticks (~94 ms); minimum a sixth of that (~16 ms). */
#define ULE_SLICE_DEFAULT_NS	(12ULL * NSEC_PER_SEC / ULE_STATHZ)
#define ULE_SLICE_MIN_DIVISOR	6

/*
 * A task preempted inside the kernel runs no worse than this until it is
 * back in user space: FreeBSD never preempts a timeshare thread in the
 * kernel, so its kernel work (and the locks it holds) finishes first.
 * FreeBSD's former static_boost, the best timeshare priority.
 */
#define ULE_PRI_KERNEL_PREEMPT	ULE_PRI_MIN_TIMESHARE

/* Runqueues: 64 lists each; a realtime/idle list holds 4 priorities. */
#define ULE_RQ_NQS		64
#define ULE_RQ_PPQ		4

/* Per-task flags (sched_ule_entity.flags). */
#define ULE_F_QUEUED	0x01	/* counted in the CPU's load */
#define ULE_F_XFERABLE	0x02	/* counted as transferable */
#define ULE_F_SLICEEND	0x04	/* left the CPU because its slice ended */
#define ULE_F_YIELD	0x08	/* left the CPU through sched_yield() */
#define ULE_F_NEEDRESCHED 0x10	/* asked to switch as by TDF_NEEDRESCHED */
#define ULE_F_KPREEMPT	0x20	/* preempted in the kernel, not back in user space */
#define ULE_F_KSPENT	0x40	/* kernel thread: ran a whole slice since it slept */
#define ULE_F_EXITED	0x80	/* exiting; its run time went to its heir */

/* What happened to a task, for the boosts it holds (ule_boost_update()). */
enum ule_boost_event {
	ULE_EV_WAKEUP,		/* it slept and woke up */
	ULE_EV_SLEEP,		/* it left the CPU to sleep */
	ULE_EV_PREEMPT_KERNEL,	/* switched out while running kernel code */
	ULE_EV_SWITCH,		/* switched out on the way to user space, or yielded */
	ULE_EV_USER,		/* seen in user space, or on its way there */
	ULE_EV_SLICE_END,	/* its slice ended */
};

enum ule_runq_id {
	ULE_RUNQ_NONE,
	ULE_RUNQ_REALTIME,	/* kernel threads and interactive tasks */
	ULE_RUNQ_TIMESHARE,	/* batch tasks: the calendar queue */
	ULE_RUNQ_IDLE,		/* SCHED_IDLE tasks */
};

struct ule_runq {
	DECLARE_BITMAP(bits, ULE_RQ_NQS);
	struct list_head	queue[ULE_RQ_NQS];
};

/* The queue a priority belongs to: its band. */
static inline unsigned int ule_runq_for(unsigned int prio)
{
	if (prio < ULE_PRI_MIN_BATCH)
		return ULE_RUNQ_REALTIME;
	if (prio <= ULE_PRI_MAX_BATCH)
		return ULE_RUNQ_TIMESHARE;
	return ULE_RUNQ_IDLE;
}

/*
 * The stall watchdog's rule: a task of priority @prio waits behind better
 * work for as long as one of priority @best runs or waits on its CPU when
 * @best's queue comes first (realtime, then timeshare, then idle), or
 * both share the realtime or the idle queue, which run strictly by list,
 * and @best's list comes first. The timeshare calendar turns, so batch
 * tasks are never behind one another for good.
 */
static inline bool ule_waits_behind(unsigned int prio, unsigned int best)
{
	unsigned int band = ule_runq_for(prio), best_band = ule_runq_for(best);

	if (best_band != band)
		return best_band < band;
	return band != ULE_RUNQ_TIMESHARE && best / ULE_RQ_PPQ < prio / ULE_RQ_PPQ;
}

/* Where tdq_runq_add() puts a task back in its queue. */
enum ule_add {
	ULE_ADD_BY_PRIO,	/* tail of its priority's list or calendar slot */
	ULE_ADD_PREEMPTED,	/* head, of slot ridx for batch (SRQ_PREEMPTED) */
	ULE_ADD_BORROWED,	/* tail, of slot ridx for batch (SRQ_BORROWING) */
	ULE_ADD_KEEP,		/* tail of the list it was in */
};

/*
 * sched_thread_priority() on a queued task: a better priority re-adds it
 * as borrowed, so a batch task runs next; an equal or worse one leaves it
 * in its list. A task here always waits in its own band, so one whose
 * band got worse moves to its new band.
 */
static inline enum ule_add ule_requeue_how(unsigned int old_prio, unsigned int new_prio)
{
	if (new_prio < old_prio)
		return ULE_ADD_BORROWED;
	if (ule_runq_for(new_prio) == ule_runq_for(old_prio))
		return ULE_ADD_KEEP;
	return ULE_ADD_BY_PRIO;
}

/* FreeBSD's struct tdq: one per CPU, inside struct rq. */
struct ule_rq {
	struct ule_runq		realtime;
	struct ule_runq		timeshare;
	struct ule_runq		idle;
	/* Tasks queued or running here (tdq_load). */
	unsigned int		load;
	/* Queued tasks that may run elsewhere (tdq_transferable). */
	unsigned int		transferable;
	/* Best priority here, running or queued; 255 when idle. */
	u8			lowpri;
	/* Best priority whose preemption waits for wakeup_gran; 255: none. */
	u8			preempt_pri;
	/* Calendar insert and removal indexes. */
	u8			idx;
	u8			ridx;
	/* Runqueue clock of the last calendar step. */
	u64			calendar_clock;
	/*
	 * The queued task a DEQUEUE_SAVE took off its list, until its
	 * ENQUEUE_RESTORE or its leaving the class: what its priority
	 * depended on (ule_prio_key()) and ridx before it left.
	 */
	struct task_struct	*saved;
	u32			saved_key;
	u8			saved_ridx;
#ifdef CONFIG_SMP
	/* Wakes this CPU, when idle, to steal a task; one sender at a time. */
	call_single_data_t	steal_csd;
	/* CPUs its idle steal may still take from; its own CPU, IRQs off. */
	cpumask_var_t		steal_mask;
	atomic_t		steal_kicked;
	/* Has the lone running task pick a CPU again; pending under rq lock. */
	struct cpu_stop_work	repick_work;
	bool			repick_pending;
#endif
};

/*
 * FreeBSD's sched_interact_score(): the ratio of voluntary sleep to run
 * time scaled to 0-100; below 50 when the task sleeps more than it runs.
 */
static inline unsigned int ule_interact_score(u64 run, u64 slp)
{
	u64 div;

	if (run > slp) {
		div = max_t(u64, 1, div64_u64(run, ULE_INTERACT_HALF));
		return ULE_INTERACT_HALF +
			(ULE_INTERACT_HALF - div64_u64(slp, div));
	}
	if (slp > run) {
		div = max_t(u64, 1, div64_u64(slp, ULE_INTERACT_HALF));
		return div64_u64(run, div);
	}
	return run ? ULE_INTERACT_HALF : 0;
}

/*
 * The score sched_priority() classifies by. At a threshold of at most
 * ULE_INTERACT_HALF a task that runs at least as long as it sleeps cannot
 * score below it, and FreeBSD returns ULE_INTERACT_HALF without working
 * the ratio out: only nice then decides, and a task with no history yet
 * starts batch. The full ratio stays what ule.score shows.
 */
static inline unsigned int ule_prio_score(u64 run, u64 slp, unsigned int interact)
{
	if (interact <= ULE_INTERACT_HALF && run >= slp)
		return ULE_INTERACT_HALF;
	return ule_interact_score(run, slp);
}

/*
 * FreeBSD's sched_interact_update(): keep run + sleep history below
 * ULE_SLP_RUN_MAX, forgetting old behaviour gradually.
 */
static inline void ule_interact_update(u64 *run, u64 *slp)
{
	u64 sum = *run + *slp;

	if (sum < ULE_SLP_RUN_MAX)
		return;
	/* A huge sleep (or inherited run) time: keep only its direction. */
	if (sum > ULE_SLP_RUN_MAX * 2) {
		if (*run > *slp) {
			*run = ULE_SLP_RUN_MAX;
			*slp = 1;
		} else {
			*slp = ULE_SLP_RUN_MAX;
			*run = 1;
		}
		return;
	}
	/* 4/5 would not bring a sum above 6/5 of the maximum back under it. */
	if (sum > div_u64(ULE_SLP_RUN_MAX, 5) * 6) {
		*run /= 2;
		*slp /= 2;
		return;
	}
	*run = div_u64(*run, 5) * 4;
	*slp = div_u64(*slp, 5) * 4;
}

/*
 * FreeBSD's sched_wakeup() credit: the whole hz ticks whose boundaries the
 * sleep from @start to @now crossed, so a 0.3 ms sleep counts a tick 30 %
 * of the time and none otherwise (on average its own length, as with the
 * run time that stathz samples), where dropping every sleep under a tick
 * would make a task of sub-tick sleeps batch.
 */
static inline u64 ule_sleep_credit(u64 start, u64 now)
{
	if (now <= start)
		return 0;
	return (div_u64(now, ULE_TICK_NS) - div_u64(start, ULE_TICK_NS)) * ULE_TICK_NS;
}

/* FreeBSD's sched_interact_fork(): a child starts with a short history. */
static inline void ule_interact_fork(u64 *run, u64 *slp)
{
	u64 sum = *run + *slp, ratio;

	if (sum <= ULE_SLP_RUN_FORK)
		return;
	ratio = div64_u64(sum, ULE_SLP_RUN_FORK);
	*run = div64_u64(*run, ratio);
	*slp = div64_u64(*slp, ratio);
}

/*
 * FreeBSD's SCHED_PRI_TICKS(): the share of the %CPU window the task ran,
 * on a 0..ULE_SCHED_PRI_RANGE scale. The window counts as at least one
 * second, as FreeBSD's max(ltick - ftick, hz) does.
 */
static inline unsigned int ule_pri_ticks(u64 pct_run, u64 window)
{
	u64 unit = div_u64(max_t(u64, window, NSEC_PER_SEC) + ULE_SCHED_PRI_RANGE - 1,
			   ULE_SCHED_PRI_RANGE);

	return min_t(u64, div64_u64(pct_run, unit), ULE_SCHED_PRI_RANGE - 1);
}

/*
 * FreeBSD's sched_priority() for a timeshare task with interactivity
 * score @score, nice @nice and %CPU ticks @pri_ticks: interactive tasks
 * spread over 120-151 by score, the others over 152-223 by recent CPU use
 * and nice. @interact is the threshold (kernel.sched_ule_interact).
 */
static inline unsigned int ule_timeshare_prio(unsigned int score, int nice,
					      unsigned int pri_ticks,
					      unsigned int interact)
{
	int s = max_t(int, 0, (int)score + nice);

	if (interact && s < interact)
		return ULE_PRI_MIN_INTERACT + (ULE_INTERACT_RANGE / interact) * s;
	return ULE_SCHED_PRI_MIN + min_t(unsigned int, pri_ticks, ULE_SCHED_PRI_RANGE - 1) +
		nice;
}

/*
 * The flags @flags of a task (a kernel thread if @kthread) after @ev:
 *
 * - ULE_F_KPREEMPT: a user task switched out in the middle of kernel code
 *   holds it from then until it returns to user space or leaves the CPU
 *   of its own accord. Kernel threads never return to user space, so they
 *   never hold it.
 * - ULE_F_KSPENT: a kernel thread that ran a whole slice without sleeping
 *   holds it until it next sleeps, as FreeBSD's maybe_yield() drops a
 *   looping kernel thread to its user priority.
 */
static inline u8 ule_boost_update(u8 flags, enum ule_boost_event ev, bool kthread)
{
	switch (ev) {
	case ULE_EV_WAKEUP:
		return flags & ~(ULE_F_KPREEMPT | ULE_F_KSPENT);
	case ULE_EV_PREEMPT_KERNEL:
		return kthread ? flags : flags | ULE_F_KPREEMPT;
	case ULE_EV_SLEEP:
	case ULE_EV_SWITCH:
	case ULE_EV_USER:
		return flags & ~ULE_F_KPREEMPT;
	case ULE_EV_SLICE_END:
		return kthread ? flags | ULE_F_KSPENT : flags;
	}
	return flags;
}

/*
 * A kernel thread's own priority: FreeBSD's kernel band by @nice, as a
 * FreeBSD thread woken in the kernel runs at its sleep priority, until it
 * has run a whole slice without sleeping (@spent); then @timeshare, what
 * its run and sleep history give a user task, so that a looping kernel
 * thread shares the CPU with user work instead of starving it.
 */
static inline unsigned int ule_kthread_prio(int nice, bool spent, unsigned int timeshare)
{
	return spent ? timeshare : ULE_PRI_MIN_KERN + nice + ULE_NICE_HALF;
}

/*
 * The flags of the running task when a switch is asked for a waiting task
 * of priority @pri. Batch tasks are picked by calendar slot, not by
 * priority: put back at the head of the slot being drained, the running
 * task would be picked again and the switch would do nothing, so it goes
 * to its own slot, as after FreeBSD's TDF_NEEDRESCHED.
 */
static inline u8 ule_switch_for(u8 flags, unsigned int pri)
{
	if (pri >= ULE_PRI_MIN_BATCH && pri <= ULE_PRI_MAX_BATCH)
		return flags | ULE_F_NEEDRESCHED;
	return flags;
}

/*
 * tdq_runq_add(): whether a task put back on its queue with flags @flags
 * goes to the head of its list (preempted with slice left) or the tail.
 */
static inline bool ule_requeue_head(u8 flags)
{
	return !(flags & (ULE_F_SLICEEND | ULE_F_YIELD | ULE_F_NEEDRESCHED));
}

/* The priority a task with own priority @prio and flags @flags runs at. */
static inline unsigned int ule_boosted_prio(unsigned int prio, u8 flags)
{
	if (flags & ULE_F_KPREEMPT)
		return min_t(unsigned int, prio, ULE_PRI_KERNEL_PREEMPT);
	return prio;
}

/*
 * Calendar slot of a batch priority (tdq_runq_add()): the priority's
 * distance from the insert index @idx, never the slot being drained
 * (@ridx) unless the calendar is caught up (idx == ridx).
 */
static inline unsigned int ule_calendar_slot(unsigned int prio, unsigned int idx,
					     unsigned int ridx)
{
	unsigned int slot = ULE_RQ_NQS * (prio - ULE_PRI_MIN_BATCH) / ULE_BATCH_RANGE;

	slot = (slot + idx) % ULE_RQ_NQS;
	if (ridx != idx && slot == ridx)
		slot = (slot + ULE_RQ_NQS - 1) % ULE_RQ_NQS;
	return slot;
}

/* sysctl_kern_quantum(): a new slice sets the minimum slice to a sixth. */
static inline int ule_slice_min_of(int slice_us)
{
	return max(1, slice_us / ULE_SLICE_MIN_DIVISOR);
}

/*
 * The list tdq_runq_add() puts a task of priority @prio in, given how
 * (@how), the calendar's indexes and the list it was in (@kept).
 */
static inline unsigned int ule_add_index(enum ule_add how, unsigned int prio,
					 unsigned int idx, unsigned int ridx,
					 unsigned int kept)
{
	if (how == ULE_ADD_KEEP)
		return kept;
	if (ule_runq_for(prio) != ULE_RUNQ_TIMESHARE)
		return prio / ULE_RQ_PPQ;
	if (how == ULE_ADD_BY_PRIO)
		return ule_calendar_slot(prio, idx, ridx);
	return ridx;
}

/*
 * tdq_slice(): the slice shrinks as more tasks share the CPU (@load counts
 * the running one), so that each waits about one full slice at most, but
 * never below @slice_min. FreeBSD divides whole stathz ticks (12 / 5 is
 * 2), so the share is too.
 */
static inline u64 ule_slice_for_load(unsigned int load, u64 slice, u64 slice_min)
{
	int waiting = (int)load - 1;
	u64 ticks;

	if (waiting >= ULE_SLICE_MIN_DIVISOR)
		return slice_min;
	if (waiting <= 1)
		return slice;
	ticks = div_u64(div_u64(slice, ULE_STAT_TICK_NS), waiting);
	return max(ticks * ULE_STAT_TICK_NS, slice_min);
}

struct sched_class;
extern const struct sched_class ule_sched_class;

#endif /* _KERNEL_SCHED_ULE_H */
