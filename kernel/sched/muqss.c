// SPDX-License-Identifier: GPL-2.0
/*
 * MuQSS: Con Kolivas's Multiple Queue Skiplist Scheduler as a Linux
 * scheduling class for SCHED_NORMAL, SCHED_BATCH, SCHED_ISO and SCHED_IDLE
 * tasks, selected with CONFIG_SCHED_DEFAULT_MUQSS or "sched=muqss".
 * Documentation/scheduler/muqss.rst describes the design and lists where
 * it differs from MuQSS, which replaces the whole core scheduler.
 *
 * Per CPU, a skip list of waiting tasks ordered by virtual deadline: now
 * plus rr_interval scaled by nice. Every task gets the same rr_interval
 * slice; a task keeps its deadline and what is left of its slice while it
 * sleeps and gets a new deadline only when the slice is used up. A CPU
 * about to pick looks at the first task of the other CPUs' lists, nearest
 * first, and takes the earliest deadline it may run. There is no periodic
 * balancer: wakeups go to an idle CPU or preempt one running a later
 * deadline, and the pick's look across queues does the rest.
 *
 * Built as part of build_policy.c.
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/sched/isolation.h>
#include <linux/stop_machine.h>

#include "class_common.h"

/* kernel.sched_muqss_rr_interval_ms */
static int sysctl_sched_muqss_rr_interval = MUQSS_RR_DEFAULT_MS;
/* kernel.sched_muqss_interactive: 0 looks only at busier queues, this node. */
static int sysctl_sched_muqss_interactive = 1;
/* kernel.sched_muqss_yield_type: 0 none, 1 reschedule, 2 expire the slice. */
static int sysctl_sched_muqss_yield_type = 1;
/* kernel.sched_muqss_iso_cpu: percent of a CPU realtime and SCHED_ISO may take. */
static int sysctl_sched_muqss_iso_cpu = MUQSS_ISO_CPU_DEFAULT;
/*
 * kernel.sched_muqss_kernel_boost: 1, a SCHED_IDLE user task preempted in
 * kernel code sorts among normal tasks until it is back in user space; 0,
 * MuQSS, where it waits behind them and a lock it holds with it.
 */
static int sysctl_sched_muqss_kernel_boost = 1;

static u32 muqss_ratios[NICE_WIDTH] __read_mostly;

/* Entity flags. */
#define MUQSS_F_ONRQ	0x01	/* enqueued in the class */
#define MUQSS_F_LISTED	0x02	/* in its CPU's skip list */
#define MUQSS_F_RUNNING	0x04	/* between set_next_task and put_prev_task */
#define MUQSS_F_KERNEL	0x08	/* preempted in kernel code, not back in user space */

/* Wake flags task_woken() decides by; they fit the entity's u8. */
#define MUQSS_WAKE_FLAGS	(WF_TTWU | WF_SYNC | WF_FORK)
static_assert(MUQSS_WAKE_FLAGS <= U8_MAX);

static inline bool muqss_task(struct task_struct *p)
{
	return p->sched_class == &muqss_sched_class;
}

static inline unsigned int muqss_rr(void)
{
	return READ_ONCE(sysctl_sched_muqss_rr_interval);
}

static inline u64 muqss_diff_of(int static_prio)
{
	return muqss_deadline_diff(muqss_ratios[static_prio - MAX_RT_PRIO], muqss_rr());
}

static inline u64 muqss_longest_diff(void)
{
	return muqss_deadline_diff(muqss_ratios[NICE_WIDTH - 1], muqss_rr());
}

/*
 * idleprio_suitable(): a SCHED_IDLE task may wait behind everything else
 * unless it is exiting or has a signal to handle, which it should do soon,
 * or (not in MuQSS) was preempted in kernel code, which it should finish.
 */
static bool muqss_idle_suitable(struct task_struct *p)
{
	return !(p->flags & PF_EXITING) && !signal_pending(p) &&
	       !(p->muqss.flags & MUQSS_F_KERNEL);
}

/*
 * A SCHED_ISO task sorts before every deadline while its CPU is not
 * refractory, and by its deadline as a normal task while it is.
 */
static u64 muqss_task_key(struct task_struct *p)
{
	if (p->policy == SCHED_ISO && !task_rq(p)->muqss.iso_refractory)
		return MUQSS_ISO_KEY;
	return muqss_key(p->muqss.deadline, p->policy == SCHED_IDLE, muqss_idle_suitable(p),
			 muqss_longest_diff());
}

/* time_slice_expired(): a full slice and a deadline from now. */
static void muqss_new_deadline(struct rq *rq, struct task_struct *p)
{
	p->muqss.slice = muqss_slice_ns(muqss_rr());
	p->muqss.deadline = rq_clock(rq) + muqss_diff_of(p->static_prio);
	p->muqss.deadline_prio = p->static_prio;
}

/* adjust_deadline(): a nice change moves the deadline by the difference. */
static void muqss_sync_nice(struct task_struct *p)
{
	struct sched_muqss_entity *me = &p->muqss;

	if (me->deadline_prio == p->static_prio)
		return;
	me->deadline += muqss_diff_of(p->static_prio) - muqss_diff_of(me->deadline_prio);
	me->deadline_prio = p->static_prio;
}

/* @q's first key, for other CPUs' unlocked looks. */
static inline void muqss_publish(struct muqss_rq *q)
{
	struct muqss_sl_node *first = muqss_sl_first(&q->sl);

	WRITE_ONCE(q->best_key, first ? first->key : U64_MAX);
}

/* The queue @rq's CPU lists in: its own, or its share group's. */
static inline struct muqss_rq *muqss_queue(struct rq *rq)
{
	return rq->muqss.share;
}

static void muqss_list_add(struct rq *rq, struct task_struct *p)
{
	struct muqss_rq *q = muqss_queue(rq);

	lockdep_assert_rq_held(rq);
	SCHED_WARN_ON(p->muqss.flags & MUQSS_F_LISTED);
	q->seed = q->seed * 1103515245 + 12345 + (u32)(rq_clock(rq) >> 10);
	muqss_sl_insert(&q->sl, &p->muqss.node, muqss_task_key(p),
			muqss_sl_random_level(q->seed >> 8));
	p->muqss.flags |= MUQSS_F_LISTED;
	muqss_publish(q);
}

static void muqss_list_del(struct rq *rq, struct task_struct *p)
{
	struct muqss_rq *q = muqss_queue(rq);

	lockdep_assert_rq_held(rq);
	if (!(p->muqss.flags & MUQSS_F_LISTED))
		return;
	muqss_sl_delete(&q->sl, &p->muqss.node);
	p->muqss.flags &= ~MUQSS_F_LISTED;
	muqss_publish(q);
}

static inline struct task_struct *muqss_node_task(struct muqss_sl_node *node)
{
	return container_of(node, struct task_struct, muqss.node);
}

#ifdef CONFIG_SMP
static bool muqss_kick_idle(struct rq *rq, struct task_struct *p);

/* MuQSS's utilisation is part of cpu_util_cfs(); tell schedutil it moved. */
static inline void muqss_update_util(struct rq *rq, int running)
{
	if (update_pluggable_rq_load_avg(rq_clock_pelt(rq), rq, running))
		cpufreq_update_util(rq, 0);
}
#else
static inline void muqss_update_util(struct rq *rq, int running) { }
static inline bool muqss_kick_idle(struct rq *rq, struct task_struct *p) { return false; }
#endif

#ifdef CONFIG_SCHED_HRTICK
/* MuQSS's hrexpiry: the rq's hrtick, sched_feat HRTICK_MUQSS (default on). */
static inline bool muqss_hrtick_on(struct rq *rq)
{
	return sched_feat(HRTICK_MUQSS) && hrtick_enabled(rq);
}

/* End @p's slice on time: arm the hrtick for what is left of it. */
static void muqss_hrtick_start(struct rq *rq, struct task_struct *p)
{
	if (muqss_hrtick_on(rq))
		hrtick_start(rq, max_t(s64, p->muqss.slice, MUQSS_RESCHED_NS));
}
#else
static inline bool muqss_hrtick_on(struct rq *rq) { return false; }
static inline void muqss_hrtick_start(struct rq *rq, struct task_struct *p) { }
#endif

/* Charge the running task's time to it and to its slice. */
static void update_curr_muqss(struct rq *rq)
{
	u64 delta = sched_class_update_curr(rq, &muqss_sched_class);

	if (delta)
		rq_curr_locked(rq)->muqss.slice -= delta;
}

static void enqueue_task_muqss(struct rq *rq, struct task_struct *p, int flags)
{
	struct sched_muqss_entity *me = &p->muqss;

	SCHED_WARN_ON(me->flags & MUQSS_F_ONRQ);
	/* First time in the class (boot, or a switch from another class). */
	if (!me->deadline_prio)
		muqss_new_deadline(rq, p);
	muqss_sync_nice(p);
	me->flags |= MUQSS_F_ONRQ;
	/* The running task is listed again only when it is put back. */
	if (!(me->flags & MUQSS_F_RUNNING))
		muqss_list_add(rq, p);
	rq->muqss.nr++;
	muqss_queue(rq)->share_nr++;
	add_nr_running(rq, 1);
	if (p->in_iowait)
		cpufreq_update_util(rq, SCHED_CPUFREQ_IOWAIT);
}

static void dequeue_task_muqss(struct rq *rq, struct task_struct *p, int flags)
{
	struct sched_muqss_entity *me = &p->muqss;

	SCHED_WARN_ON(!(me->flags & MUQSS_F_ONRQ));
	if (me->flags & MUQSS_F_RUNNING)
		update_curr_muqss(rq);
	muqss_list_del(rq, p);
	me->flags &= ~MUQSS_F_ONRQ;
	me->wake_flags = 0;
	/* It left the CPU of its own accord: it sorts as itself again. */
	if (flags & DEQUEUE_SLEEP)
		me->flags &= ~MUQSS_F_KERNEL;
	rq->muqss.nr--;
	muqss_queue(rq)->share_nr--;
	sub_nr_running(rq, 1);
}

/*
 * Type 1 (MuQSS's default) keeps the deadline, so the yielder runs on
 * unless some task has an earlier one; type 2 gives up the slice and its
 * deadline. Type 0 does nothing here, and the core's reschedule then
 * behaves as type 1 (MuQSS's returns without one).
 */
static void yield_task_muqss(struct rq *rq)
{
	struct task_struct *curr = rq_curr_locked(rq);

	if (READ_ONCE(sysctl_sched_muqss_yield_type) != 2)
		return;
	/* do_sched_yield() leaves the clock as the last update left it. */
	update_rq_clock(rq);
	update_curr_muqss(rq);
	rq_clock_skip_update(rq);
	muqss_new_deadline(rq, curr);
	WRITE_ONCE(rq->muqss.curr_deadline, curr->muqss.deadline);
}

/*
 * yield_to(): @p, waiting, takes the yielder's deadline if that is earlier
 * and the rest of its slice, up to a whole slice; the yielder starts a new
 * slice and deadline. @p keeps its place in its list, as in MuQSS.
 *
 * Context: yield_to(), @rq (the yielder's) and @p's rq locked.
 */
static bool yield_to_task_muqss(struct rq *rq, struct task_struct *p)
{
	struct task_struct *curr = rq_curr_locked(rq);

	update_rq_clock(rq);
	update_curr_muqss(rq);
	rq_clock_skip_update(rq);
	p->muqss.deadline = min(p->muqss.deadline, curr->muqss.deadline);
	p->muqss.slice = muqss_yield_to_slice(p->muqss.slice, curr->muqss.slice,
					      muqss_slice_ns(muqss_rr()));
	muqss_new_deadline(rq, curr);
	WRITE_ONCE(rq->muqss.curr_deadline, curr->muqss.deadline);
	return true;
}

/* May @p, with key @key, preempt what @cpu runs? Unlocked reads. */
static bool muqss_preempts(struct task_struct *p, u64 key, u64 curr_key, int cpu)
{
	return muqss_can_preempt(key, p->muqss.deadline, p->policy == SCHED_BATCH,
				 p->policy == SCHED_IDLE, curr_key,
				 READ_ONCE(cpu_rq(cpu)->muqss.curr_deadline));
}

#ifdef CONFIG_SMP
static void muqss_try_preempt(struct rq *rq, struct task_struct *p);
#else
static void muqss_try_preempt(struct rq *rq, struct task_struct *p)
{
	if (muqss_task(rq_curr_locked(rq)) &&
	    muqss_preempts(p, muqss_task_key(p), rq->muqss.curr_key, cpu_of(rq)))
		resched_curr(rq);
}
#endif

/*
 * A wakeup or a fork is decided in task_woken(), as MuQSS's
 * ttwu_do_wakeup() and wake_up_new_task() decide it; any other arrival
 * (a move to another CPU, a new priority) tries to preempt, an idle CPU
 * first, as MuQSS's try_preempt().
 */
static void check_preempt_curr_muqss(struct rq *rq, struct task_struct *p, int flags)
{
	p->muqss.wake_flags |= flags & MUQSS_WAKE_FLAGS;
	if (!p->muqss.wake_flags)
		muqss_try_preempt(rq, p);
}

/*
 * The key @p runs with: an ISO task queued before its CPU turned
 * refractory keeps the ISO key it was queued with, as MuQSS's p->prio set
 * at enqueue, so it runs as ISO until its tick demotes it.
 */
static u64 muqss_running_key(struct task_struct *p)
{
	if ((p->muqss.flags & MUQSS_F_LISTED) && p->muqss.node.key == MUQSS_ISO_KEY &&
	    p->policy == SCHED_ISO)
		return MUQSS_ISO_KEY;
	return muqss_task_key(p);
}

static void set_next_task_muqss(struct rq *rq, struct task_struct *p, bool first)
{
	struct sched_muqss_entity *me = &p->muqss;
	u64 key = muqss_running_key(p);

	muqss_list_del(rq, p);
	me->flags |= MUQSS_F_RUNNING;
	p->se.exec_start = rq_clock_task(rq);
	if (first)
		p->se.prev_sum_exec_runtime = p->se.sum_exec_runtime;
	WRITE_ONCE(rq->muqss.curr_key, key);
	WRITE_ONCE(rq->muqss.curr_deadline, me->deadline);
	sched_class_mark_idle(rq, false);
	muqss_hrtick_start(rq, p);
	if (rq_curr_locked(rq)->sched_class != &muqss_sched_class)
		muqss_update_util(rq, 0);
}

#ifdef CONFIG_SMP
static bool muqss_pick_look(struct rq *rq, u64 best);
static struct task_struct *muqss_queue_first(struct rq *rq);
static void muqss_move_task(struct rq *from, struct rq *to, struct task_struct *p);
#else
static inline bool muqss_pick_look(struct rq *rq, u64 best) { return false; }

static struct task_struct *muqss_queue_first(struct rq *rq)
{
	struct muqss_sl_node *node, *head = &rq->muqss.sl.head;

	for (node = head->next[0]; node != head; node = node->next[0]) {
		if (!sched_stall_injected(muqss_node_task(node)))
			return muqss_node_task(node);
	}
	return NULL;
}

static inline void muqss_move_task(struct rq *from, struct rq *to, struct task_struct *p) { }
#endif

/*
 * The first task of this CPU's queue it may run, which may belong to
 * another CPU sharing the queue. No side effects, as a pick_task(): the
 * look across queues and the move are pick_next_task_muqss()'s.
 */
static struct task_struct *pick_task_muqss(struct rq *rq)
{
	lockdep_assert_rq_held(rq);
	return muqss_queue_first(rq);
}

/*
 * earliest_deadline_task(): the first task of this CPU's queue it may run,
 * unless the look across the other queues finds an earlier deadline. A
 * task of another CPU sharing the queue moves here.
 *
 * Context: __schedule(), @rq locked and pinned; other rq locks only tried.
 */
static struct task_struct *pick_next_task_muqss(struct rq *rq)
{
	/* rq->curr is still the task being switched out. */
	struct task_struct *prev = rq_curr_locked(rq), *p;

	p = pick_task_muqss(rq);
	if (muqss_pick_look(rq, p ? p->muqss.node.key : U64_MAX))
		p = pick_task_muqss(rq);
	if (!p) {
		WRITE_ONCE(rq->muqss.curr_key, U64_MAX);
		sched_class_mark_idle(rq, true);
		sched_class_hrtick_cancel(rq);
		return NULL;
	}
	if (task_rq(p) != rq)
		muqss_move_task(task_rq(p), rq, p);
	set_next_task_muqss(rq, p, true);
	/* resched_suitable_idle(): prev waits here; an idle CPU may take it. */
	if (prev != p && muqss_task(prev) && (prev->muqss.flags & MUQSS_F_LISTED))
		muqss_kick_idle(rq, prev);
	return p;
}

/*
 * check_deadline(): a used-up slice gets a new one and a new deadline,
 * whether the task sleeps or waits; SCHED_BATCH tasks get both at every
 * reschedule. A waiting task goes back in the list under its key; the
 * pick asks an idle CPU to take it if it is not picked again.
 */
/*
 * On its way back to user space @p, the current task, sorts as
 * SCHED_IDLE again, and gives the CPU up if normal work waits.
 *
 * Context: task_work of @p; no lock held.
 */
static void muqss_resume_work(struct callback_head *work)
{
	struct task_struct *p = container_of(work, struct task_struct, muqss.resume_work);
	bool switch_now = false;
	struct rq_flags rf;
	struct rq *rq;

	WRITE_ONCE(p->muqss.resume_queued, false);
	rq = task_rq_lock(p, &rf);
	if (p->muqss.flags & MUQSS_F_KERNEL) {
		p->muqss.flags &= ~MUQSS_F_KERNEL;
		if (muqss_task(p) && task_current(rq, p)) {
			WRITE_ONCE(rq->muqss.curr_key, muqss_task_key(p));
			switch_now = READ_ONCE(muqss_queue(rq)->best_key) < rq->muqss.curr_key;
		}
	}
	task_rq_unlock(rq, p, &rf);
	/* A switch of its own: a preemption here would sort it as normal again. */
	if (switch_now)
		schedule();
}

/*
 * @p, the SCHED_IDLE user task being switched out, was preempted in kernel
 * code and waits: it sorts among normal tasks until it is back in user
 * space or sleeps, so that a lock it holds does not wait with it for good.
 */
static void muqss_preempted_in_kernel(struct task_struct *p)
{
	struct sched_muqss_entity *me = &p->muqss;

	if (!READ_ONCE(sysctl_sched_muqss_kernel_boost) || p->policy != SCHED_IDLE ||
	    p != current ||
	    !sched_queue_resume(p, &me->resume_work, &me->resume_queued, muqss_resume_work))
		return;
	me->flags |= MUQSS_F_KERNEL;
}

static void put_prev_task_muqss(struct rq *rq, struct task_struct *p)
{
	struct sched_muqss_entity *me = &p->muqss;

	update_curr_muqss(rq);
	muqss_update_util(rq, 1);
	me->flags &= ~MUQSS_F_RUNNING;
	if (me->slice < (s64)MUQSS_RESCHED_NS || p->policy == SCHED_BATCH)
		muqss_new_deadline(rq, p);
	if (!(me->flags & MUQSS_F_ONRQ))
		return;
	if (rq->sched_kernel_preempt)
		muqss_preempted_in_kernel(p);
	muqss_list_add(rq, p);
	/*
	 * A stop, deadline or realtime task runs next and this class's pick
	 * does not: offer @p to an idle CPU here, as MuQSS's schedule() does
	 * whatever it switches to.
	 */
	if (sched_class_above_runnable(rq))
		muqss_kick_idle(rq, p);
}

/*
 * The tick, and the hrtick with @queued set. The hrtick ends a slice on
 * time; without it the tick ends one with less than half a tick left, as
 * MuQSS's dither does, rather than a whole tick after it ran out.
 *
 * Context: hardirq, @rq locked.
 */
static void task_tick_muqss(struct rq *rq, struct task_struct *p, int queued)
{
	s64 dither = queued || muqss_hrtick_on(rq) ? 0 : TICK_NSEC / 2;

	update_curr_muqss(rq);
	muqss_update_util(rq, 1);
	if (p->muqss.slice - dither < (s64)MUQSS_RESCHED_NS)
		resched_curr(rq);
	else if (queued)
		muqss_hrtick_start(rq, p);
}

/*
 * Fork: the parent's remaining slice is split with the child, which keeps
 * the parent's deadline; if the half is too short to run, the parent
 * reschedules and the child starts with a fresh slice and deadline.
 */
static void task_fork_muqss(struct task_struct *p)
{
	struct task_struct *parent = current;
	struct rq_flags rf;
	struct rq *rq;

	rq = this_rq();
	rq_lock(rq, &rf);
	update_rq_clock(rq);
	if (muqss_task(parent) && parent->policy != SCHED_FIFO) {
		update_curr_muqss(rq);
		parent->muqss.slice /= 2;
		if (parent->muqss.slice < (s64)MUQSS_RESCHED_NS) {
			resched_curr(rq);
			muqss_new_deadline(rq, p);
		} else {
			p->muqss.slice = parent->muqss.slice;
			p->muqss.deadline = parent->muqss.deadline;
			p->muqss.deadline_prio = parent->muqss.deadline_prio;
			/* The parent's slice timer was armed for the whole half. */
			muqss_hrtick_start(rq, parent);
		}
	} else {
		muqss_new_deadline(rq, p);
	}
	rq_unlock(rq, &rf);
}

/*
 * A nice or PI change: enqueue_task() moved the deadline and the key. The
 * running task reschedules if its nice got worse, as MuQSS's
 * set_user_nice() does; a waiting one may now preempt.
 */
static void prio_changed_muqss(struct rq *rq, struct task_struct *p, int oldprio)
{
	if (!task_on_rq_queued(p))
		return;
	if (task_current(rq, p)) {
		WRITE_ONCE(rq->muqss.curr_key, muqss_task_key(p));
		WRITE_ONCE(rq->muqss.curr_deadline, p->muqss.deadline);
		if (p->prio > oldprio || READ_ONCE(muqss_queue(rq)->best_key) < rq->muqss.curr_key)
			resched_curr(rq);
	} else {
		check_preempt_curr_muqss(rq, p, 0);
	}
}

static void switched_to_muqss(struct rq *rq, struct task_struct *p)
{
	bool listed = p->muqss.flags & MUQSS_F_LISTED;

	if (p->muqss.slice < (s64)MUQSS_RESCHED_NS) {
		if (listed)
			muqss_list_del(rq, p);
		muqss_new_deadline(rq, p);
		if (listed)
			muqss_list_add(rq, p);
	}
	if (!task_on_rq_queued(p) || task_current(rq, p))
		return;
	if (!muqss_task(rq_curr_locked(rq)))
		resched_curr(rq);
	else
		check_preempt_curr_muqss(rq, p, 0);
}

/*
 * sched_rr_get_interval(): MuQSS reports rr_interval scaled by the nice
 * ratio (the deadline offset), nominal as every slice is rr_interval; in
 * jiffies here, and at least one.
 */
static unsigned int get_rr_interval_muqss(struct rq *rq, struct task_struct *task)
{
	return max_t(u64, 1, DIV_ROUND_CLOSEST_ULL(muqss_diff_of(task->static_prio), TICK_NSEC));
}

#ifdef CONFIG_SMP
static void muqss_look_ipi(void *info);
#endif

static void muqss_init_rq(struct rq *rq)
{
	struct muqss_rq *mq = &rq->muqss;

	mq->share = mq;
	muqss_sl_init(&mq->sl);
	mq->best_key = U64_MAX;
	mq->curr_key = U64_MAX;
#ifdef CONFIG_SMP
	INIT_CSD(&mq->look_csd, muqss_look_ipi, rq);
#endif
}

/* A new task (from __sched_fork()); task_fork() gives it a slice. */
static void muqss_init_task(struct task_struct *p)
{
	memset(&p->muqss, 0, sizeof(p->muqss));
}

#ifdef CONFIG_SMP
/*
 * The key of what @cpu runs, for a lockless preemption test: 0 (never
 * preempted from here) while realtime, deadline or another class's task
 * runs there.
 */
static u64 muqss_cpu_key(int cpu)
{
	struct rq *rq = cpu_rq(cpu);
	/* Callers run with preemption off, an RCU-sched reader. */
	struct task_struct *curr = rcu_dereference_sched(rq->curr);

	sched_ev_seen_cpu(cpu);
	if (READ_ONCE(rq->rt.rt_nr_running) || READ_ONCE(rq->dl.dl_nr_running))
		return 0;
	if (curr == rq->idle)
		return U64_MAX;
	if (curr->sched_class != &muqss_sched_class)
		return 0;
	return READ_ONCE(rq->muqss.curr_key);
}

static bool muqss_idle_cpu(int cpu)
{
	sched_ev_seen_cpu(cpu);
	return available_idle_cpu(cpu);
}

/*
 * cache_idle(): every other CPU sharing @cpu's last-level cache idles.
 * Without a sched domain @cpu shares it with none. Context: RCU reader.
 */
static bool muqss_idle_cache(int cpu)
{
	struct sched_domain *sd = rcu_dereference_sched(per_cpu(sd_llc, cpu));
	int other;

	if (!sd)
		return true;
	for_each_cpu(other, sched_domain_span(sd)) {
		if (other != cpu && !cpumask_test_cpu(other, sched_class_idle_mask(other)))
			return false;
	}
	return true;
}

/* A CPU whose locality table could not be allocated looks at no other. */
static inline u8 muqss_loc(struct rq *rq, int cpu)
{
	if (cpu == cpu_of(rq))
		return MUQSS_LOC_SAME;
	return rq->muqss.loc ? rq->muqss.loc[cpu] : MUQSS_LOC_NONE;
}

/*
 * best_mask_cpu() of v0.210: among idle CPUs @p may use, @prev if it is
 * one, else the lowest rank from @prev (nearer, and a cache with nothing
 * else running), and among equal ranks one whose whole core idles. -1 if
 * none is idle indeed.
 */
static int muqss_best_idle(struct task_struct *p, int prev)
{
	const struct cpumask *idle = sched_class_idle_mask(prev);
	struct rq *prq = cpu_rq(prev);
	unsigned int rank, best_rank = UINT_MAX;
	int cpu, best = -1;

	if (cpumask_test_cpu(prev, p->cpus_ptr) && cpumask_test_cpu(prev, idle) &&
	    muqss_idle_cpu(prev))
		return prev;
	for_each_cpu_and(cpu, p->cpus_ptr, idle) {
		u8 loc = muqss_loc(prq, cpu);
		bool core_idle;

		if (loc == MUQSS_LOC_NONE || !cpu_active(cpu) || !muqss_idle_cpu(cpu))
			continue;
		rank = muqss_idle_rank(loc, !muqss_idle_cache(cpu));
		core_idle = sched_class_core_idle(cpu, sched_class_cpu_idle);
		if (muqss_idle_better(rank, best_rank, core_idle)) {
			best_rank = rank;
			best = cpu;
		}
	}
	return best;
}

/*
 * select_best_cpu(): an idle CPU if one is allowed, else the allowed CPU
 * with the fewest tasks in @prev's locality order, @prev first; ties go
 * to the nearer. New tasks start on their parent's CPU, as in MuQSS.
 */
static int muqss_select_cpu(struct task_struct *p, int prev)
{
	struct rq *prq = cpu_rq(prev);
	unsigned int nr, best_nr = UINT_MAX;
	int cpu, best = -1, i;

	if (!cpumask_intersects(p->cpus_ptr, cpu_active_mask))
		return prev;
	cpu = muqss_best_idle(p, prev);
	if (cpu >= 0)
		return cpu;
	if (cpumask_test_cpu(prev, p->cpus_ptr) && cpu_active(prev)) {
		best = prev;
		best_nr = READ_ONCE(prq->nr_running);
	}
	for (i = 0; i < READ_ONCE(prq->muqss.nr_order) && best_nr; i++) {
		cpu = prq->muqss.order[i];
		if (!cpumask_test_cpu(cpu, p->cpus_ptr) || !cpu_active(cpu))
			continue;
		sched_ev_seen_cpu(cpu);
		nr = READ_ONCE(cpu_rq(cpu)->nr_running);
		if (nr < best_nr) {
			best_nr = nr;
			best = cpu;
		}
	}
	return best >= 0 ? best : prev;
}

static int select_task_rq_muqss(struct task_struct *p, int prev, int wake_flags)
{
	int cpu;

	/*
	 * Kept for task_woken(): a wakeup queued on a remote CPU reaches
	 * check_preempt_curr() without its flags.
	 */
	if (wake_flags & (WF_TTWU | WF_FORK))
		p->muqss.wake_flags = wake_flags & MUQSS_WAKE_FLAGS;
	if (wake_flags & (WF_EXEC | WF_FORK))
		return prev;
	rcu_read_lock();
	cpu = sched_ev_search(SCHED_EV_MUQSS_SELECT, p->pid, muqss_select_cpu(p, prev));
	rcu_read_unlock();
	return cpu;
}

/*
 * resched_curr() without @cpu's lock, which callers may not take under
 * theirs: this CPU marks itself, another gets an IPI that does.
 */
static void muqss_kick_cpu(int cpu)
{
	struct rq *rq = cpu_rq(cpu);

	if (cpu == smp_processor_id()) {
		set_tsk_need_resched(current);
		set_preempt_need_resched();
	} else {
		sched_class_kick(cpu, &rq->muqss.look_csd, &rq->muqss.look_kicked);
	}
}

/*
 * try_preempt(): after @p was woken on @rq, the best idle CPU @p may use
 * is told to take it; else @p preempts what @rq's CPU runs if it may, else
 * the first CPU in @rq's locality order running a task @p may preempt
 * is told to reschedule, and its pick's look takes @p. With interactive
 * off, only CPUs busier than @rq.
 *
 * Context: @rq locked (task_woken).
 */
static void muqss_try_preempt(struct rq *rq, struct task_struct *p)
{
	u64 key = muqss_task_key(p);
	bool interactive = READ_ONCE(sysctl_sched_muqss_interactive);
	int cpu, i;

	lockdep_assert_rq_held(rq);
	if (!task_on_rq_queued(p) || task_current(rq, p))
		return;
	if (muqss_kick_idle(rq, p) || p->policy == SCHED_IDLE)
		return;
	rcu_read_lock();
	if (muqss_preempts(p, key, muqss_cpu_key(cpu_of(rq)), cpu_of(rq))) {
		resched_curr(rq);
		goto out;
	}
	if (p->nr_cpus_allowed == 1 || is_migration_disabled(p))
		goto out;
	for (i = 0; i < rq->muqss.nr_order; i++) {
		cpu = rq->muqss.order[i];
		if (!cpumask_test_cpu(cpu, p->cpus_ptr) || !cpu_active(cpu))
			continue;
		if (!muqss_preempt_candidate(interactive, READ_ONCE(cpu_rq(cpu)->nr_running),
					     rq->nr_running))
			continue;
		if (muqss_preempts(p, key, muqss_cpu_key(cpu), cpu)) {
			muqss_kick_cpu(cpu);
			break;
		}
	}
out:
	rcu_read_unlock();
}

/*
 * ttwu_do_wakeup() and wake_up_new_task() in MuQSS: a sync waker is about
 * to sleep, so it runs on and only an idle CPU is told; a new task goes to
 * an idle CPU, else its parent reschedules and the child, queued first
 * with the parent's deadline, runs first; other wakeups try_preempt().
 * Without flags (a task bound to one CPU, a task woken before it slept)
 * check_preempt_curr() tried already.
 */
static void task_woken_muqss(struct rq *rq, struct task_struct *p)
{
	u8 flags = p->muqss.wake_flags;

	p->muqss.wake_flags = 0;
	if (flags & WF_FORK) {
		if (!muqss_kick_idle(rq, p) && rq_curr_locked(rq) == current &&
		    muqss_task(current))
			resched_curr(rq);
	} else if (flags & WF_SYNC) {
		muqss_kick_idle(rq, p);
	} else if (flags & WF_TTWU) {
		muqss_try_preempt(rq, p);
	}
}

/*
 * resched_suitable_idle(): @p waits on @rq; the best idle CPU it may run
 * on is told to take it. @rq's own CPU, when idle, was told by the core.
 * Returns whether an idle CPU was found.
 */
static bool muqss_kick_idle(struct rq *rq, struct task_struct *p)
{
	int cpu;

	lockdep_assert_rq_held(rq);
	if (rq_curr_locked(rq) == rq->idle)
		return true;
	if (cpumask_empty(sched_class_idle_mask(cpu_of(rq))) || is_migration_disabled(p))
		return false;
	rcu_read_lock();
	cpu = muqss_best_idle(p, cpu_of(rq));
	if (cpu >= 0 && cpu != cpu_of(rq))
		muqss_kick_cpu(cpu);
	rcu_read_unlock();
	return cpu >= 0;
}

/* May @cpu take @p, listed on another CPU's runqueue? */
static bool muqss_may_take(struct task_struct *p, int cpu)
{
	return !(p->muqss.flags & MUQSS_F_RUNNING) && !task_on_cpu(task_rq(p), p) &&
	       !is_migration_disabled(p) && cpumask_test_cpu(cpu, p->cpus_ptr);
}

/*
 * May @rq's CPU run @p from its own queue? Tasks of the CPUs sharing the
 * queue move to whichever of them picks them, unless it is going down or
 * has no sched domain (balancing off there, as for the look).
 */
static bool muqss_runs_here(struct rq *rq, struct task_struct *p)
{
	return task_rq(p) == rq ||
	       (cpu_active(cpu_of(rq)) && rcu_access_pointer(rq->sd) &&
		muqss_may_take(p, cpu_of(rq)));
}

/*
 * The first task in @rq's queue that its CPU may run. Unlike MuQSS, a CPU
 * with no MuQSS task of its own looks at sysctl_sched_nr_migrate tasks of
 * a shared queue at most, as the look across queues does: the others
 * belong to CPUs sharing the queue, which run them. A CPU with tasks of
 * its own walks to the first it may run, at worst the first of its own.
 *
 * Context: @rq locked.
 */
static struct task_struct *muqss_queue_first(struct rq *rq)
{
	struct muqss_sl_node *node, *head = &muqss_queue(rq)->sl.head;
	int budget = rq->muqss.nr ? INT_MAX : READ_ONCE(sysctl_sched_nr_migrate);
	struct task_struct *p;

	lockdep_assert_rq_held(rq);
	for (node = head->next[0]; node != head; node = node->next[0]) {
		p = muqss_node_task(node);
		if (muqss_runs_here(rq, p) && !sched_stall_injected(p))
			return p;
		if (--budget <= 0)
			break;
	}
	return NULL;
}

/*
 * Move queued @p from @from to @to, both locked (or one shared lock).
 * @from was locked by a trylock or through the lock it shares with @to:
 * its clock flags are the last holder's.
 */
static void muqss_move_task(struct rq *from, struct rq *to, struct task_struct *p)
{
	lockdep_assert_rq_held(from);
	lockdep_assert_rq_held(to);
	double_rq_clock_clear_update(from, from);
	update_rq_clock(from);
	deactivate_task(from, p, DEQUEUE_NOCLOCK);
	set_task_cpu_reason(p, cpu_of(to), SCHED_MIGRATE_IDLE_BALANCE);
	activate_task(to, p, ENQUEUE_NOCLOCK);
}

/*
 * The first task on @src's queue with a key below @best that @this_rq's
 * CPU may run, walking level 0 (interactive) or stopping at the first
 * that it may not run (interactive off), as earliest_deadline_task().
 * Unlike MuQSS, at most sysctl_sched_nr_migrate tasks, as mainline's
 * walks with interrupts off: a queue of thousands that may not run here
 * is not walked at every pick.
 */
static struct task_struct *muqss_first_for(struct rq *src, struct rq *this_rq, u64 best,
					   bool interactive)
{
	struct muqss_sl_node *node, *head = &muqss_queue(src)->sl.head;
	int budget = READ_ONCE(sysctl_sched_nr_migrate);
	struct task_struct *p;

	lockdep_assert_rq_held(src);
	for (node = head->next[0]; node != head && node->key < best; node = node->next[0]) {
		p = muqss_node_task(node);
		if (muqss_may_take(p, cpu_of(this_rq)) && !sched_stall_injected(p))
			return p;
		if (!interactive || --budget <= 0)
			break;
	}
	return NULL;
}

/*
 * earliest_deadline_task(), the look across queues: @this_rq takes the
 * task with the earliest key among the first tasks of the other queues,
 * nearest first, if it beats @best (what it would run of its own queue).
 * Unlocked keys skip queues with nothing better; a queue whose lock is
 * taken is skipped, never waited for. With interactive off only busier
 * queues count and the look stops at the node's edge once something was
 * found. Returns whether a task moved here.
 *
 * Context: @this_rq locked, IRQs off; other rq locks only tried.
 */
static void muqss_build_order(struct rq *rq);

static bool muqss_look(struct rq *this_rq, u64 best)
{
	bool interactive = READ_ONCE(sysctl_sched_muqss_interactive);
	struct task_struct *p, *found = NULL;
	struct rq *src, *locked = NULL;
	unsigned int i;
	int cpu;

	lockdep_assert_rq_held(this_rq);
	/* No sched domain (isolated, or sched_load_balance off): no balance. */
	if (!cpu_active(cpu_of(this_rq)) || !rcu_access_pointer(this_rq->sd))
		return false;
	if (READ_ONCE(this_rq->muqss.order_stale)) {
		WRITE_ONCE(this_rq->muqss.order_stale, false);
		muqss_build_order(this_rq);
	}
	for (i = 0; i < this_rq->muqss.nr_look; i++) {
		cpu = this_rq->muqss.look[i];
		if (found && !interactive && this_rq->muqss.loc[cpu] > MUQSS_LOC_SMP)
			break;
		src = cpu_rq(cpu);
		sched_ev_seen_cpu(cpu);
		if (READ_ONCE(muqss_queue(src)->best_key) >= best)
			continue;
		if (!interactive && READ_ONCE(muqss_queue(src)->share_nr) <=
		    muqss_queue(this_rq)->share_nr)
			continue;
		if (!raw_spin_rq_trylock(src))
			continue;
		p = muqss_first_for(src, this_rq, best, interactive);
		if (p) {
			if (locked)
				raw_spin_rq_unlock(locked);
			locked = src;
			found = p;
			best = p->muqss.node.key;
		} else {
			raw_spin_rq_unlock(src);
		}
	}
	if (!found)
		return false;
	/* @found's runqueue is @locked's or shares its lock. */
	muqss_move_task(task_rq(found), this_rq, found);
	raw_spin_rq_unlock(locked);
	return true;
}

/* The look of a pick: only while MuQSS runs the normal tasks. */
static bool muqss_pick_look(struct rq *rq, u64 best)
{
	bool moved;

	if (!sched_class_is_normal(&muqss_sched_class))
		return false;
	moved = muqss_look(rq, best);
	sched_ev_search(SCHED_EV_MUQSS_LOOK, cpu_of(rq), moved ? cpu_of(rq) : -1);
	return moved;
}

/*
 * The look is in the pick, after prev is back in its list; this only
 * says whether the classes below need a look.
 */
static int balance_muqss(struct rq *rq, struct task_struct *prev, struct rq_flags *rf)
{
	return sched_class_above_runnable(rq) || rq->muqss.nr || muqss_queue(rq)->sl.entries;
}

/*
 * Told to reschedule by a CPU that could not take this one's lock: a
 * wakeup elsewhere that may preempt what runs here, or waiting work for
 * this idle CPU. The pick that follows looks at the queues.
 *
 * Context: hardirq on this CPU; takes its rq lock.
 */
static void muqss_look_ipi(void *info)
{
	struct rq *rq = info;
	struct rq_flags rf;

	atomic_set(&rq->muqss.look_kicked, 0);
	rq_lock(rq, &rf);
	if (sched_class_is_normal(&muqss_sched_class) &&
	    (rq_curr_locked(rq) == rq->idle || muqss_task(rq_curr_locked(rq))))
		resched_curr(rq);
	rq_unlock(rq, &rf);
}

/*
 * How near @cpu is to @this, from the topology; CPUs isolated from sched
 * domains are near none but themselves.
 */
static u8 muqss_locality(int this, int cpu)
{
	if (cpu == this)
		return MUQSS_LOC_SAME;
	if (!housekeeping_cpu(this, HK_TYPE_DOMAIN) || !housekeeping_cpu(cpu, HK_TYPE_DOMAIN))
		return MUQSS_LOC_NONE;
#ifdef CONFIG_SCHED_SMT
	if (cpumask_test_cpu(cpu, cpu_smt_mask(this)))
		return MUQSS_LOC_SMT;
#endif
	/* The topology's, not the sched domains' view: fixed across rebuilds. */
#ifdef CONFIG_SCHED_MC
	if (cpumask_test_cpu(cpu, cpu_coregroup_mask(this)))
		return MUQSS_LOC_LLC;
#else
	if (cpus_share_cache(this, cpu))
		return MUQSS_LOC_LLC;
#endif
	if (topology_physical_package_id(this) == topology_physical_package_id(cpu))
		return MUQSS_LOC_MC;
	if (cpu_to_node(this) == cpu_to_node(cpu))
		return MUQSS_LOC_SMP;
	return MUQSS_LOC_DISTANT;
}

/*
 * The locality of every CPU of @rq's root domain from @rq's CPU and the
 * order they are visited in; CPUs elsewhere or isolated from sched
 * domains are never looked at. The look visits the nearest CPU of each
 * other queue once (rq_order[] in MuQSS).
 */
static void muqss_build_order(struct rq *rq)
{
	struct muqss_rq *mq = &rq->muqss, *q;
	int this = cpu_of(rq), cpu;
	unsigned int i, j;

	if (!mq->loc || !mq->order || !mq->look)
		return;
	for_each_possible_cpu(cpu) {
		if (cpu != this && !cpumask_test_cpu(cpu, rq->rd->span))
			mq->loc[cpu] = MUQSS_LOC_NONE;
		else
			mq->loc[cpu] = muqss_locality(this, cpu);
	}
	mq->nr_order = muqss_fill_order(this, nr_cpu_ids, mq->loc, mq->order);
	mq->nr_look = 0;
	for (i = 0; i < mq->nr_order; i++) {
		q = muqss_queue(cpu_rq(mq->order[i]));
		if (q == mq->share)
			continue;
		for (j = 0; j < mq->nr_look; j++) {
			if (muqss_queue(cpu_rq(mq->look[j])) == q)
				break;
		}
		if (j == mq->nr_look)
			mq->look[mq->nr_look++] = mq->order[i];
	}
}

/*
 * A CPU joins or leaves @rq's root domain: every CPU of it rebuilds its
 * order at its next pick, as the domain's span grows one CPU at a time.
 */
static void muqss_orders_stale(struct rq *rq)
{
	int cpu;

	for_each_cpu(cpu, rq->rd->span)
		WRITE_ONCE(cpu_rq(cpu)->muqss.order_stale, true);
}

/* rqshare= or kernel.sched_muqss_rqshare: the sharing asked for. */
static int muqss_share_mode = -1;
/* The sharing in effect: none unless MuQSS runs the normal tasks. */
static enum muqss_share muqss_share_active = MUQSS_SHARE_NONE;
/* Serialises the two above and every regrouping. */
static DEFINE_MUTEX(muqss_share_mutex);

static void muqss_share_workfn(struct work_struct *work);
static DECLARE_WORK(muqss_share_work, muqss_share_workfn);

static int __init muqss_share_setup(char *str)
{
	int mode = muqss_share_parse(str);

	if (mode < 0) {
		pr_warn("sched: muqss: unknown rqshare=\"%s\" (known: none smt llc mc smp all), keeping %s\n",
			str, muqss_share_mode < 0 ? CONFIG_SCHED_MUQSS_RQSHARE_DEFAULT :
			muqss_share_name(muqss_share_mode));
		return 0;
	}
	muqss_share_mode = mode;
	return 0;
}
early_param("rqshare", muqss_share_setup);

/*
 * @leader[cpu]: the CPU whose queue @cpu is to use under @mode. CPUs that
 * are offline keep their own. Context: CPU hotplug read-locked.
 */
static void muqss_share_plan(enum muqss_share mode, u16 *leader, u8 *loc)
{
	int this, cpu;

	for_each_possible_cpu(this) {
		leader[this] = this;
		if (mode == MUQSS_SHARE_NONE || !cpu_online(this))
			continue;
		for (cpu = 0; cpu < nr_cpu_ids; cpu++)
			loc[cpu] = cpu_online(cpu) ? muqss_locality(this, cpu) : MUQSS_LOC_NONE;
		leader[this] = muqss_share_leader(mode, nr_cpu_ids, loc);
	}
}

/* Holds the queued tasks while the queues are regrouped. */
static struct muqss_sl muqss_share_tmp;

/*
 * Regroup the queues as @data (the plan) says: every queued task is taken
 * out and listed again, under its key, in the queue its CPU now uses.
 * Every CPU spins in the stopper with IRQs off and holds no runqueue lock,
 * so no lock pointer changes under a holder.
 */
static int muqss_share_stop(void *data)
{
	const u16 *leader = data;
	struct muqss_sl *tmp = &muqss_share_tmp;
	struct muqss_sl_node *node;
	struct muqss_rq *mq, *q;
	struct rq *rq;
	int cpu;

	muqss_sl_init(tmp);
	for_each_possible_cpu(cpu) {
		mq = &cpu_rq(cpu)->muqss;
		while ((node = muqss_sl_first(&mq->sl))) {
			muqss_sl_delete(&mq->sl, node);
			muqss_sl_insert(tmp, node, node->key, node->level);
		}
		mq->share_nr = 0;
	}
	for_each_possible_cpu(cpu) {
		rq = cpu_rq(cpu);
		WRITE_ONCE(rq->muqss.share, &cpu_rq(leader[cpu])->muqss);
		WRITE_ONCE(rq->lockp, &cpu_rq(leader[cpu])->__lock);
	}
	while ((node = muqss_sl_first(tmp))) {
		muqss_sl_delete(tmp, node);
		q = muqss_queue(task_rq(muqss_node_task(node)));
		muqss_sl_insert(&q->sl, node, node->key, node->level);
	}
	for_each_possible_cpu(cpu) {
		mq = &cpu_rq(cpu)->muqss;
		mq->share->share_nr += mq->nr;
		WRITE_ONCE(mq->order_stale, true);
	}
	for_each_possible_cpu(cpu)
		muqss_publish(&cpu_rq(cpu)->muqss);
	return 0;
}

/*
 * Put @mode in effect: group the online CPUs' queues as the topology
 * says, unless they are grouped so already. Context: muqss_share_mutex,
 * may sleep.
 */
static void muqss_share_apply(enum muqss_share mode)
{
	unsigned int queues = 0, cpus = 0;
	bool same = true;
	u16 *leader;
	u8 *loc;
	int cpu;

	lockdep_assert_held(&muqss_share_mutex);
	leader = kcalloc(nr_cpu_ids, sizeof(*leader), GFP_KERNEL);
	loc = kcalloc(nr_cpu_ids, sizeof(*loc), GFP_KERNEL);
	if (!leader || !loc) {
		pr_warn("sched: muqss: no memory to regroup the queues, rqshare stays %s\n",
			muqss_share_name(muqss_share_active));
		goto out;
	}
	cpus_read_lock();
	muqss_share_plan(mode, leader, loc);
	for_each_possible_cpu(cpu) {
		if (muqss_queue(cpu_rq(cpu)) != &cpu_rq(leader[cpu])->muqss)
			same = false;
		if (cpu_online(cpu)) {
			cpus++;
			queues += leader[cpu] == cpu;
		}
	}
	if (!same)
		stop_machine_cpuslocked(muqss_share_stop, leader, NULL);
	cpus_read_unlock();
	if (!same || mode != muqss_share_active)
		pr_info("sched: muqss: rqshare=%s, %u queue%s for %u CPU%s\n",
			muqss_share_name(mode), queues, queues == 1 ? "" : "s",
			cpus, cpus == 1 ? "" : "s");
	muqss_share_active = mode;
out:
	kfree(leader);
	kfree(loc);
}

/* Share queues as asked while MuQSS runs the normal tasks, else none. */
static void muqss_share_update(void)
{
	lockdep_assert_held(&muqss_share_mutex);
	if (sched_class_is_normal(&muqss_sched_class))
		muqss_share_apply(muqss_share_mode);
	else
		muqss_share_apply(MUQSS_SHARE_NONE);
}

/*
 * A CPU came online: it joins its group's queue once hotplug is done; or
 * MuQSS stopped running the normal tasks: the queues are ungrouped.
 */
static void muqss_share_workfn(struct work_struct *work)
{
	mutex_lock(&muqss_share_mutex);
	if (muqss_share_active != MUQSS_SHARE_NONE)
		muqss_share_update();
	mutex_unlock(&muqss_share_mutex);
}

/* Hotplug thread of the CPU coming online; no runqueue lock held. */
static int muqss_share_cpu_online(unsigned int cpu)
{
	if (READ_ONCE(muqss_share_active) != MUQSS_SHARE_NONE)
		schedule_work(&muqss_share_work);
	return 0;
}

static void rq_online_muqss(struct rq *rq)
{
	muqss_orders_stale(rq);
	sched_class_rq_attach(rq, &muqss_sched_class, true);
}

static void rq_offline_muqss(struct rq *rq)
{
	sched_class_rq_attach(rq, &muqss_sched_class, false);
	muqss_orders_stale(rq);
	rq->muqss.nr_order = 0;
	rq->muqss.nr_look = 0;
}

/* kernel.sched_muqss_rqshare: reads the mode asked for, writes one. */
static int muqss_rqshare_handler(struct ctl_table *table, int write, void *buffer,
				 size_t *lenp, loff_t *ppos)
{
	char name[8];
	struct ctl_table t = { .data = name, .maxlen = sizeof(name) };
	int mode, ret;

	mutex_lock(&muqss_share_mutex);
	strscpy(name, muqss_share_name(muqss_share_mode), sizeof(name));
	ret = proc_dostring(&t, write, buffer, lenp, ppos);
	if (ret || !write)
		goto out;
	mode = muqss_share_parse(name);
	if (mode < 0) {
		pr_warn_ratelimited("sched: muqss: unknown rqshare \"%s\" (known: none smt llc mc smp all), keeping %s\n",
				    name, muqss_share_name(muqss_share_mode));
		ret = -EINVAL;
		goto out;
	}
	muqss_share_mode = mode;
	muqss_share_update();
out:
	mutex_unlock(&muqss_share_mutex);
	return ret;
}
#endif /* CONFIG_SMP */

/* Only a SCHED_IDLE task waits for good, behind one that is not. */
static bool task_behind_better_muqss(struct rq *rq, struct task_struct *p)
{
	struct task_struct *first = muqss_queue_first(rq);
	u64 best = first ? first->muqss.node.key : U64_MAX;

	lockdep_assert_rq_held(rq);
	if (muqss_task(rq_curr_locked(rq)))
		best = min(best, READ_ONCE(rq->muqss.curr_key));
	return (p->muqss.flags & MUQSS_F_LISTED) && muqss_waits_behind(p->muqss.node.key, best);
}

static void __init muqss_init(void);
static void muqss_proc_show_task(struct task_struct *p, struct seq_file *m);
static void muqss_normal_class_changed(void);
static void muqss_scheduler_tick(struct rq *rq);

static unsigned int muqss_nr_tasks(struct rq *rq)
{
	lockdep_assert_rq_held(rq);
	return rq->muqss.nr;
}

/* @init runs once, at boot: __refconst lets it be __init. */
static const struct sched_pluggable_ops muqss_pluggable __refconst = {
	.name		= "muqss",
	.init		= muqss_init,
	.init_rq	= muqss_init_rq,
	.init_task	= muqss_init_task,
	.normal_changed	= muqss_normal_class_changed,
	.show_task	= muqss_proc_show_task,
	.nr_tasks	= muqss_nr_tasks,
	.normal_tick	= muqss_scheduler_tick,
	.hrtick_lingers	= true,
	.iso_for_rt	= true,
};

DEFINE_SCHED_CLASS(muqss) = {
	.enqueue_task		= enqueue_task_muqss,
	.dequeue_task		= dequeue_task_muqss,
	.yield_task		= yield_task_muqss,
	.yield_to_task		= yield_to_task_muqss,
	.check_preempt_curr	= check_preempt_curr_muqss,
	.pick_next_task		= pick_next_task_muqss,
	.put_prev_task		= put_prev_task_muqss,
	.set_next_task		= set_next_task_muqss,
#ifdef CONFIG_SMP
	.balance		= balance_muqss,
	.select_task_rq		= select_task_rq_muqss,
	.set_cpus_allowed	= set_cpus_allowed_common,
	.rq_online		= rq_online_muqss,
	.rq_offline		= rq_offline_muqss,
	.task_woken		= task_woken_muqss,
#endif
	.task_tick		= task_tick_muqss,
	.task_fork		= task_fork_muqss,
	.prio_changed		= prio_changed_muqss,
	.switched_to		= switched_to_muqss,
	.get_rr_interval	= get_rr_interval_muqss,
	.update_curr		= update_curr_muqss,
	.task_behind_better	= task_behind_better_muqss,
	.pluggable		= &muqss_pluggable,
};

/*
 * SCHED_ISO's limit, at every tick whatever runs: realtime ticks and those
 * of an ISO task running as one count against iso_cpu; others, and the
 * ticks an idle CPU skipped, decay the count. Past the limit a running ISO
 * task gives up its slice and goes back as a normal one; once the CPU is
 * below it again, an ISO task running as normal is rescheduled to get its
 * ISO key back (task_running_tick()).
 *
 * Context: scheduler_tick(), @rq locked.
 */
static void muqss_scheduler_tick(struct rq *rq)
{
	struct task_struct *curr = rq_curr_locked(rq);
	unsigned int iso_cpu = READ_ONCE(sysctl_sched_muqss_iso_cpu);
	struct muqss_rq *mq = &rq->muqss;
	unsigned long now = jiffies;
	bool running_iso;

	lockdep_assert_rq_held(rq);
	if (!sched_class_is_normal(&muqss_sched_class))
		return;
	if (now - mq->iso_jiffies > 1)
		muqss_iso_other_ticks(&mq->iso_ticks, &mq->iso_refractory,
				      now - mq->iso_jiffies - 1, iso_cpu);
	mq->iso_jiffies = now;
	running_iso = muqss_task(curr) && mq->curr_key == MUQSS_ISO_KEY;
	if (rt_task(curr) || running_iso)
		muqss_iso_busy_tick(&mq->iso_ticks, &mq->iso_refractory, iso_cpu);
	else
		muqss_iso_other_ticks(&mq->iso_ticks, &mq->iso_refractory, 1, iso_cpu);

	if (!muqss_task(curr) || curr->policy != SCHED_ISO)
		return;
	if (running_iso && mq->iso_refractory) {
		curr->muqss.slice = 0;
		resched_curr(rq);
	} else if (!running_iso && !mq->iso_refractory) {
		resched_curr(rq);
	}
}

#ifdef CONFIG_SMP
static int muqss_queue_cpu(int cpu)
{
	struct muqss_rq *q = READ_ONCE(cpu_rq(cpu)->muqss.share);

	return cpu_of(container_of(q, struct rq, muqss));
}
#endif

/* MuQSS lines of /proc/<pid>/sched. */
static void muqss_proc_show_task(struct task_struct *p, struct seq_file *m)
{
	struct sched_muqss_entity *me = &p->muqss;
	s64 ahead = me->deadline - sched_clock_cpu(task_cpu(p));

	seq_printf(m, "%-45s:%21llu\n", "muqss.deadline_ns", me->deadline);
	seq_printf(m, "%-45s:%21lld\n", "muqss.deadline_in_us", div_s64(ahead, NSEC_PER_USEC));
	seq_printf(m, "%-45s:%21lld\n", "muqss.slice_us", div_s64(me->slice, NSEC_PER_USEC));
	seq_printf(m, "%-45s:%21u\n", "muqss.ratio", muqss_ratios[p->static_prio - MAX_RT_PRIO]);
#ifdef CONFIG_SMP
	/* The CPU whose queue the task's CPU uses (itself unless rqshare). */
	seq_printf(m, "%-45s:%21d\n", "muqss.queue_cpu", muqss_queue_cpu(task_cpu(p)));
#endif
	seq_printf(m, "%-45s:%21s\n", "muqss.queued",
		   (me->flags & MUQSS_F_LISTED) ? "yes" : (me->flags & MUQSS_F_RUNNING) ?
		   "running" : "no");
	/* The SCHED_ISO limit of the task's CPU: its use, percent, and state. */
	seq_printf(m, "%-45s:%21u\n", "muqss.cpu_iso_pct",
		   READ_ONCE(cpu_rq(task_cpu(p))->muqss.iso_ticks) / MUQSS_ISO_PERIOD);
	seq_printf(m, "%-45s:%21d\n", "muqss.cpu_iso_refractory",
		   READ_ONCE(cpu_rq(task_cpu(p))->muqss.iso_refractory));
}

static int muqss_rr_min = MUQSS_RR_MIN_MS;
static int muqss_rr_max = MUQSS_RR_MAX_MS;
static int muqss_yield_type_max = 2;
static int muqss_iso_cpu_max = 100;

static struct ctl_table muqss_sysctls[] = {
	SCHED_CLASS_KNOB("sched_muqss_rr_interval_ms", sysctl_sched_muqss_rr_interval,
			 &muqss_rr_min, &muqss_rr_max, sched_class_dointvec_minmax),
	SCHED_CLASS_KNOB("sched_muqss_kernel_boost", sysctl_sched_muqss_kernel_boost,
			 SYSCTL_ZERO, SYSCTL_ONE, sched_class_dointvec_minmax),
	SCHED_CLASS_KNOB("sched_muqss_interactive", sysctl_sched_muqss_interactive,
			 SYSCTL_ZERO, SYSCTL_ONE, sched_class_dointvec_minmax),
	SCHED_CLASS_KNOB("sched_muqss_yield_type", sysctl_sched_muqss_yield_type,
			 SYSCTL_ZERO, &muqss_yield_type_max, sched_class_dointvec_minmax),
#ifdef CONFIG_SMP
	{
		.procname	= "sched_muqss_rqshare",
		.maxlen		= 8,
		.mode		= 0644,
		.proc_handler	= muqss_rqshare_handler,
	},
#endif
	SCHED_CLASS_KNOB("sched_muqss_iso_cpu", sysctl_sched_muqss_iso_cpu,
			 SYSCTL_ZERO, &muqss_iso_cpu_max, sched_class_dointvec_minmax),
	{}
};

/*
 * From boot or a switch through kernel.sched_class (serialised by its
 * caller): group the queues as rqshare asks while MuQSS runs normal tasks.
 */
static void muqss_normal_class_changed(void)
{
#ifdef CONFIG_SMP
	/*
	 * A fallback to CFS runs here, and a task of the class it leaves may
	 * hold the mutex (or the hotplug lock) and not run until it is moved:
	 * the queues are ungrouped from a work item, after the fallback.
	 */
	if (!sched_class_is_normal(&muqss_sched_class)) {
		schedule_work(&muqss_share_work);
		return;
	}
	mutex_lock(&muqss_share_mutex);
	muqss_share_update();
	mutex_unlock(&muqss_share_mutex);
#endif
}

/* prio_ratios[] and the per-CPU locality arrays; sched_init() calls it. */
static void __init muqss_init(void)
{
#ifdef CONFIG_SMP
	int cpu;

	for_each_possible_cpu(cpu) {
		struct muqss_rq *mq = &cpu_rq(cpu)->muqss;

		mq->order = kcalloc(nr_cpu_ids, sizeof(*mq->order), GFP_NOWAIT);
		mq->look = kcalloc(nr_cpu_ids, sizeof(*mq->look), GFP_NOWAIT);
		mq->loc = kcalloc(nr_cpu_ids, sizeof(*mq->loc), GFP_NOWAIT);
		/* Without them the CPU runs only what is queued on it. */
		if (!mq->order || !mq->look || !mq->loc)
			pr_warn("sched: muqss: no memory for CPU %d's locality order\n", cpu);
	}
	if (muqss_share_mode < 0)
		muqss_share_mode = max(muqss_share_parse(CONFIG_SCHED_MUQSS_RQSHARE_DEFAULT),
				       (int)MUQSS_SHARE_NONE);
#endif
	muqss_fill_ratios(muqss_ratios);
}

static int __init muqss_late_init(void)
{
	register_sysctl_init("kernel", muqss_sysctls);
#ifdef CONFIG_SMP
	if (cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "sched/muqss:online",
				      muqss_share_cpu_online, NULL) < 0)
		pr_warn("sched: muqss: no hotplug state; a CPU brought online keeps its own queue\n");
#endif
	muqss_normal_class_changed();
	return 0;
}
late_initcall(muqss_late_init);

#ifdef CONFIG_SCHED_MUQSS_KUNIT_TEST
#include "muqss_test.c"
#endif
