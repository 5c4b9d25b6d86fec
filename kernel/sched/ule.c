// SPDX-License-Identifier: GPL-2.0
/*
 * ULE: FreeBSD's scheduler as a Linux scheduling class for SCHED_NORMAL,
 * SCHED_BATCH and SCHED_IDLE tasks, selected with CONFIG_SCHED_DEFAULT_ULE
 * or "sched=ule". Documentation/scheduler/ule.rst describes the design,
 * maps every class hook to its FreeBSD counterpart and lists deviations.
 *
 * Per CPU there are three runqueues: realtime (kernel threads and
 * interactive tasks, strict priority), timeshare (batch tasks in a
 * calendar queue that rotates so every batch task runs) and idle. A
 * task's ULE priority comes from its interactivity score (voluntary
 * sleep against run time over the last ~5 s) or, for batch tasks, from
 * its recent CPU use and nice. Placement follows sched_pickcpu() over
 * the sched domain tree; an idle CPU steals one task from the busiest
 * CPU nearby; a periodic balancer pairs donors with receivers, one task
 * each.
 *
 * Built as part of build_policy.c.
 */

#include "class_common.h"

#include <asm/irq_regs.h>

#define CREATE_TRACE_POINTS
#include <trace/events/ule.h>
#undef CREATE_TRACE_POINTS

/* Tunables (kernel.sched_ule_*), FreeBSD's kern.sched.* defaults. */
static int sysctl_sched_ule_interact = ULE_INTERACT_THRESH;
static int sysctl_sched_ule_slice_us = ULE_SLICE_DEFAULT_NS / NSEC_PER_USEC;
static int sysctl_sched_ule_slice_min_us =
	ULE_SLICE_DEFAULT_NS / ULE_SLICE_MIN_DIVISOR / NSEC_PER_USEC;
static int sysctl_sched_ule_preempt_thresh = ULE_PRI_MIN_KERN;
/* Set at boot to CFS's wakeup granularity, which scales with the CPUs. */
static int sysctl_sched_ule_wakeup_gran_us = 1000;
/* 1: FreeBSD's own preemption and requeue rules (ule_preempt_strict()). */
static int sysctl_sched_ule_strict;
#ifdef CONFIG_SMP
static int sysctl_sched_ule_balance_interval_ms = 1000;
static int sysctl_sched_ule_steal_thresh = 2;
/* 1: idle CPUs are woken to steal whenever a tick finds work to give. */
static int sysctl_sched_ule_always_steal;
#endif

static inline struct ule_rq *ule_rq_of(struct rq *rq)
{
	return &rq->ule;
}

static inline bool ule_task(struct task_struct *p)
{
	return p->sched_class == &ule_sched_class;
}

/* FreeBSD's PRI_TIMESHARE class: user tasks, neither kthreads nor idle. */
static inline bool ule_timeshare(struct task_struct *p)
{
	return p->policy != SCHED_IDLE && !(p->flags & PF_KTHREAD);
}

/* Tasks whose run and sleep history set their priority: kthreads too. */
static inline bool ule_scored(struct task_struct *p)
{
	return p->policy != SCHED_IDLE;
}

static inline u64 ule_slice(void)
{
	return (u64)READ_ONCE(sysctl_sched_ule_slice_us) * NSEC_PER_USEC;
}

static inline u64 ule_slice_min(void)
{
	return min_t(u64, (u64)READ_ONCE(sysctl_sched_ule_slice_min_us) * NSEC_PER_USEC,
		     ule_slice());
}

static u64 ule_rq_slice(struct rq *rq)
{
	return ule_slice_for_load(ule_rq_of(rq)->load, ule_slice(), ule_slice_min());
}

/* Clock differences that may cross CPUs: never negative. */
static inline u64 ule_since(u64 now, u64 then)
{
	return now > then ? now - then : 0;
}

/* sched_pctcpu_update(): slide the %CPU window to @now. */
static void ule_pct_update(struct sched_ule_entity *ue, u64 now, bool run)
{
	u64 span = ule_since(now, ue->pct_last);

	if (span >= ULE_PCT_TARGET) {
		ue->pct_run = 0;
		ue->pct_first = now - ULE_PCT_TARGET;
	} else if (ule_since(now, ue->pct_first) >= ULE_PCT_MAX) {
		u64 window = ule_since(ue->pct_last, ue->pct_first);
		u64 keep = ule_since(ue->pct_last, now - ULE_PCT_TARGET);

		ue->pct_run = window ? mul_u64_u64_div_u64(ue->pct_run, keep, window) : 0;
		ue->pct_first = now - ULE_PCT_TARGET;
	}
	if (run)
		ue->pct_run += span;
	ue->pct_last = now;
}

static unsigned int ule_score(struct task_struct *p)
{
	return ule_interact_score(p->ule.runtime, p->ule.slptime);
}

/*
 * sched_priority(). Linux has no sleep priorities, so kernel threads take
 * FreeBSD's kernel band by nice (80-119, as FreeBSD's kernel processes
 * run there) until they loop for a whole slice (ule_kthread_prio()), and
 * SCHED_IDLE tasks its idle band; SCHED_BATCH tasks are timeshare but
 * never interactive.
 */
static unsigned int ule_own_prio(struct task_struct *p)
{
	struct sched_ule_entity *ue = &p->ule;
	unsigned int interact = READ_ONCE(sysctl_sched_ule_interact);
	int nice = task_nice(p);
	unsigned int prio;

	if (p->policy == SCHED_IDLE)
		return ULE_PRI_MIN_IDLE + (nice + ULE_NICE_HALF) * 31 / 39;
	prio = ule_timeshare_prio(ule_prio_score(ue->runtime, ue->slptime, interact),
				  nice,
				  ule_pri_ticks(ue->pct_run,
						ule_since(ue->pct_last, ue->pct_first)),
				  p->policy == SCHED_BATCH ? 0 : interact);
	if (p->flags & PF_KTHREAD)
		return ule_kthread_prio(nice, ue->flags & ULE_F_KSPENT, prio);
	return prio;
}

/*
 * The priority @p runs at: its own, or a better one lent by the ULE task
 * blocked on an rt_mutex (PI futex) that @p holds, as FreeBSD's turnstiles
 * lend with sched_lend_prio(). The core sets pi_top_task under @p's
 * pi_lock and rq lock, one of which every caller holds.
 */
static unsigned int ule_compute_prio(struct task_struct *p)
{
	struct task_struct *top = p->pi_top_task;
	unsigned int prio = ule_boosted_prio(ule_own_prio(p), p->ule.flags);

	if (top && top->sched_class == &ule_sched_class)
		prio = min_t(unsigned int, prio, READ_ONCE(top->ule.prio));
	return prio;
}

/* Set @p's ULE priority; trace a timeshare thread changing band. */
static void ule_set_prio(struct task_struct *p, unsigned int prio)
{
	unsigned int old = p->ule.prio;
	bool was_interactive = old < ULE_PRI_MIN_BATCH;
	bool interactive = prio < ULE_PRI_MIN_BATCH;

	if (trace_ule_interactive_enabled() && ule_timeshare(p) &&
	    was_interactive != interactive)
		trace_ule_interactive(p, ule_score(p), old, prio, interactive);
	p->ule.prio = prio;
}

/* sched_shouldpreempt(). */
static bool ule_should_preempt(int pri, int cpri, bool remote)
{
	int thresh = READ_ONCE(sysctl_sched_ule_preempt_thresh);

	if (pri >= cpri)
		return false;
	if (cpri >= ULE_PRI_MIN_IDLE)
		return true;
	if (!thresh)
		return false;
	if (pri <= thresh)
		return true;
	/* An interactive task preempts remote batch work. */
	return remote && pri <= ULE_PRI_MAX_INTERACT && cpri > ULE_PRI_MAX_INTERACT;
}

static inline bool ule_can_migrate(struct task_struct *p)
{
	return p->nr_cpus_allowed > 1 && !is_migration_disabled(p);
}

static void ule_runq_init(struct ule_runq *q)
{
	int i;

	bitmap_zero(q->bits, ULE_RQ_NQS);
	for (i = 0; i < ULE_RQ_NQS; i++)
		INIT_LIST_HEAD(&q->queue[i]);
}

static struct ule_runq *ule_runq_of(struct ule_rq *ule, unsigned int id)
{
	switch (id) {
	case ULE_RUNQ_REALTIME:
		return &ule->realtime;
	case ULE_RUNQ_TIMESHARE:
		return &ule->timeshare;
	default:
		return &ule->idle;
	}
}

static inline bool ule_on_runq(struct task_struct *p)
{
	return p->ule.runq != ULE_RUNQ_NONE;
}

/*
 * tdq_runq_add(): a preempted task goes to the head of its list (for
 * batch tasks, of the slot being drained) to finish its slice first;
 * see enum ule_add for the others.
 */
static void ule_runq_add(struct rq *rq, struct task_struct *p, enum ule_add how)
{
	struct ule_rq *ule = ule_rq_of(rq);
	struct sched_ule_entity *ue = &p->ule;
	unsigned int pri = ue->prio, index, id = ule_runq_for(pri);
	struct ule_runq *q;

	lockdep_assert_rq_held(rq);
	SCHED_WARN_ON(ule_on_runq(p) || !(ue->flags & ULE_F_QUEUED));
	if (ule_can_migrate(p)) {
		ule->transferable++;
		ue->flags |= ULE_F_XFERABLE;
	}
	SCHED_WARN_ON(ule->transferable > ule->load);
	index = ule_add_index(how, pri, ule->idx, ule->ridx, ue->rqindex);
	q = ule_runq_of(ule, id);
	if (how == ULE_ADD_PREEMPTED)
		list_add(&ue->run_list, &q->queue[index]);
	else
		list_add_tail(&ue->run_list, &q->queue[index]);
	__set_bit(index, q->bits);
	ue->runq = id;
	ue->rqindex = index;
}

/*
 * Back in its queue after a priority change (sched_thread_priority()):
 * @ridx is the removal index before it left, restored for a task kept in
 * the slot being drained, which its leaving had moved on.
 */
static void ule_requeue(struct rq *rq, struct task_struct *p, enum ule_add how, u8 ridx)
{
	struct ule_rq *ule = ule_rq_of(rq);

	if (how == ULE_ADD_KEEP && ule_runq_for(p->ule.prio) == ULE_RUNQ_TIMESHARE &&
	    p->ule.rqindex == ridx)
		ule->ridx = ridx;
	ule_runq_add(rq, p, how);
}

/* tdq_runq_rem(): draining the removal slot moves it on. */
static void ule_runq_rem(struct rq *rq, struct task_struct *p)
{
	struct ule_rq *ule = ule_rq_of(rq);
	struct sched_ule_entity *ue = &p->ule;
	struct ule_runq *q = ule_runq_of(ule, ue->runq);
	unsigned int index = ue->rqindex;

	lockdep_assert_rq_held(rq);
	/* A priority change requeues: a task waits in its own band. */
	SCHED_WARN_ON(ue->runq != ule_runq_for(ue->prio));
	if (ue->flags & ULE_F_XFERABLE) {
		ule->transferable--;
		ue->flags &= ~ULE_F_XFERABLE;
	}
	list_del_init(&ue->run_list);
	if (list_empty(&q->queue[index])) {
		__clear_bit(index, q->bits);
		if (ue->runq == ULE_RUNQ_TIMESHARE && ule->idx != ule->ridx &&
		    ule->ridx == index)
			ule->ridx = (index + 1) % ULE_RQ_NQS;
	}
	ue->runq = ULE_RUNQ_NONE;
}

static struct task_struct *ule_first(struct ule_runq *q, unsigned int index)
{
	return list_first_entry(&q->queue[index], struct task_struct, ule.run_list);
}

/* tdq_choose(): realtime, then the calendar from ridx, then idle. */
static struct task_struct *ule_choose(struct ule_rq *ule)
{
	unsigned int index;

	index = find_first_bit(ule->realtime.bits, ULE_RQ_NQS);
	if (index < ULE_RQ_NQS)
		return ule_first(&ule->realtime, index);
	index = find_next_bit(ule->timeshare.bits, ULE_RQ_NQS, ule->ridx);
	if (index >= ULE_RQ_NQS)
		index = find_first_bit(ule->timeshare.bits, ULE_RQ_NQS);
	if (index < ULE_RQ_NQS)
		return ule_first(&ule->timeshare, index);
	index = find_first_bit(ule->idle.bits, ULE_RQ_NQS);
	if (index < ULE_RQ_NQS)
		return ule_first(&ule->idle, index);
	return NULL;
}

/* tdq_setlowpri(). */
static void ule_set_lowpri(struct rq *rq)
{
	struct ule_rq *ule = ule_rq_of(rq);
	struct task_struct *next, *curr;
	unsigned int pri = ULE_PRI_MAX_IDLE;

	lockdep_assert_rq_held(rq);
	next = ule_choose(ule);
	curr = rq_curr_locked(rq);
	if (ule_task(curr) && (curr->ule.flags & ULE_F_QUEUED))
		pri = curr->ule.prio;
	if (next && next->ule.prio < pri)
		pri = next->ule.prio;
	WRITE_ONCE(ule->lowpri, pri);
}

/* The running @p takes @prio; its CPU's best priority follows. */
static void ule_curr_set_prio(struct rq *rq, struct task_struct *p, unsigned int prio)
{
	ule_set_prio(p, prio);
	ule_set_lowpri(rq);
}

static void ule_load_add(struct rq *rq, struct task_struct *p)
{
	struct ule_rq *ule = ule_rq_of(rq);

	lockdep_assert_rq_held(rq);
	SCHED_WARN_ON(p->ule.flags & ULE_F_QUEUED);
	WRITE_ONCE(ule->load, ule->load + 1);
	p->ule.flags |= ULE_F_QUEUED;
	add_nr_running(rq, 1);
}

static void ule_load_rem(struct rq *rq, struct task_struct *p)
{
	struct ule_rq *ule = ule_rq_of(rq);

	lockdep_assert_rq_held(rq);
	SCHED_WARN_ON(!ule->load || !(p->ule.flags & ULE_F_QUEUED) || ule_on_runq(p));
	WRITE_ONCE(ule->load, ule->load - 1);
	p->ule.flags &= ~ULE_F_QUEUED;
	sub_nr_running(rq, 1);
}

#ifdef CONFIG_SMP
static void ule_kick_idle(struct rq *rq);

/*
 * ULE's utilisation is part of cpu_util_cfs(); tell schedutil when it
 * moved, as CFS does, or the frequency would not follow ULE's load.
 */
static inline void ule_update_util(struct rq *rq, int running)
{
	if (update_pluggable_rq_load_avg(rq_clock_pelt(rq), rq, running))
		cpufreq_update_util(rq, 0);
}
#else
static inline void ule_kick_idle(struct rq *rq) { }
static inline void ule_update_util(struct rq *rq, int running) { }
#endif

/* Charge the running task: exact run time where FreeBSD samples ticks. */
static void update_curr_ule(struct rq *rq)
{
	struct task_struct *curr = rq_curr_locked(rq);
	struct sched_ule_entity *ue = &curr->ule;
	u64 delta = sched_class_update_curr(rq, &ule_sched_class);

	if (!delta)
		return;
	ue->slice_used += delta;
	if (ule_scored(curr))
		ue->runtime += delta;
	ule_pct_update(ue, rq_clock(rq), true);
}

/* sched_wakeup(): credit the sleep in ticks; any sleep restarts the slice. */
static void ule_account_sleep(struct task_struct *p, u64 now)
{
	struct sched_ule_entity *ue = &p->ule;
	u64 slept;

	if (!ue->sleep_start)
		return;
	slept = ule_sleep_credit(ue->sleep_start, now);
	ue->sleep_start = 0;
	ue->slice_used = 0;
	ue->flags = ule_boost_update(ue->flags, ULE_EV_WAKEUP, p->flags & PF_KTHREAD);
	if (!slept)
		return;
	ue->slptime += slept;
	ule_interact_update(&ue->runtime, &ue->slptime);
	ule_pct_update(ue, now, false);
}

/* What a queued task's priority depends on that the core may change. */
static inline u32 ule_prio_key(struct task_struct *p)
{
	return (u32)p->policy << 16 | (u32)p->static_prio << 8 | (u32)p->prio;
}

static void enqueue_task_ule(struct rq *rq, struct task_struct *p, int flags)
{
	struct sched_ule_entity *ue = &p->ule;
	struct ule_rq *ule = ule_rq_of(rq);
	bool restore = ule->saved == p && (flags & ENQUEUE_RESTORE);
	unsigned int old = ue->prio;

	ule->saved = NULL;
	if (flags & ENQUEUE_WAKEUP)
		ule_account_sleep(p, rq_clock(rq));
	/* An affinity or group change leaves it as it was (sched_affinity()). */
	if (!restore || ule->saved_key != ule_prio_key(p))
		ule_set_prio(p, ule_compute_prio(p));
	ule_load_add(rq, p);
	/* Requeued by a nice, policy or lent priority change: see enum ule_add. */
	if (restore)
		ule_requeue(rq, p, ule_requeue_how(old, ue->prio), ule->saved_ridx);
	else
		ule_runq_add(rq, p, ULE_ADD_BY_PRIO);
	/*
	 * Busy from now on for placement, as FreeBSD's sched_add() raises the
	 * load at once: waiting for the switch would let the next fork count
	 * this CPU's core as idle and land on its sibling.
	 */
	sched_class_mark_idle(rq, false);
	if (ue->prio < ule_rq_of(rq)->lowpri)
		WRITE_ONCE(ule_rq_of(rq)->lowpri, ue->prio);
	/* A task back from I/O asks schedutil for a boost, as with CFS. */
	if (p->in_iowait)
		cpufreq_update_util(rq, SCHED_CPUFREQ_IOWAIT);
}

/*
 * A deferred preemption (see ule_preempt_now()) lapses when the task it
 * waits for leaves and nothing as good is next in line.
 */
static void ule_preempt_lapse(struct rq *rq, struct task_struct *p)
{
	struct ule_rq *ule = ule_rq_of(rq);
	struct task_struct *next;

	if (p->ule.prio > ule->preempt_pri)
		return;
	next = ule_choose(ule);
	if (!next || next->ule.prio > ule->preempt_pri)
		ule->preempt_pri = ULE_PRI_MAX_IDLE;
}

static void dequeue_task_ule(struct rq *rq, struct task_struct *p, int flags)
{
	struct sched_ule_entity *ue = &p->ule;

	if (task_current(rq, p))
		update_curr_ule(rq);
	if (ule_on_runq(p)) {
		u8 ridx = ule_rq_of(rq)->ridx;

		ule_runq_rem(rq, p);
		/* A requeue (DEQUEUE_SAVE) is not a departure. */
		if (flags & DEQUEUE_SAVE) {
			ule_rq_of(rq)->saved = p;
			ule_rq_of(rq)->saved_key = ule_prio_key(p);
			ule_rq_of(rq)->saved_ridx = ridx;
		} else {
			ule_preempt_lapse(rq, p);
		}
	}
	ule_load_rem(rq, p);
	if (flags & DEQUEUE_SLEEP) {
		ue->sleep_start = rq_clock(rq) ?: 1;
		ue->flags = ule_boost_update(ue->flags, ULE_EV_SLEEP, p->flags & PF_KTHREAD);
	}
	if (ue->prio <= ule_rq_of(rq)->lowpri)
		ule_set_lowpri(rq);
}

/* sched_relinquish(): back in the queue behind its equals. */
static void yield_task_ule(struct rq *rq)
{
	rq_curr_locked(rq)->ule.flags |= ULE_F_YIELD;
}

/* Time @curr has run since it last got the CPU. */
static u64 ule_ran_since_pick(struct task_struct *curr)
{
	return curr->se.sum_exec_runtime - curr->se.prev_sum_exec_runtime;
}

/*
 * A timeshare task preempting another (local wakeup, or interactive over
 * remote batch) waits until the running one has had wakeup_gran on the
 * CPU, as CFS's wakeup granularity does; the tick then preempts it.
 * Without it, every message of a pipe or socket load wakes a reader that
 * preempts the writer at once. Kernel priorities, priorities within
 * preempt_thresh and idle CPUs do not wait.
 */
static bool ule_preempt_now(struct rq *rq, struct task_struct *curr, int pri)
{
	u64 gran = (u64)READ_ONCE(sysctl_sched_ule_wakeup_gran_us) * NSEC_PER_USEC;

	if (pri < ULE_PRI_MIN_TIMESHARE || pri <= READ_ONCE(sysctl_sched_ule_preempt_thresh) ||
	    curr->ule.prio > ULE_PRI_MAX_TIMESHARE || ule_ran_since_pick(curr) >= gran)
		return true;
	ule_rq_of(rq)->preempt_pri = min_t(unsigned int, pri, ule_rq_of(rq)->preempt_pri);
	return false;
}

/*
 * FreeBSD's userret(): back at its own priority, and switching if asked to
 * (kernel.sched_ule_strict) or if a better task waits. The switch is made
 * here, as a voluntary one: a reschedule left pending would be taken at
 * the next preempt_enable() on the way out, which would count as kernel
 * code preempted, boost @p again and queue this work anew, round and round.
 *
 * Context: @p is current, on its way back to user space; no lock held,
 * may sleep.
 */
static void ule_resume_work(struct callback_head *work)
{
	struct task_struct *p = container_of(work, struct task_struct, ule.resume_work);
	struct sched_ule_entity *ue = &p->ule;
	bool switch_now = false;
	struct rq_flags rf;
	struct rq *rq;

	WRITE_ONCE(ue->resume_queued, false);
	rq = task_rq_lock(p, &rf);
	if (ule_task(p)) {
		if (ue->flags & ULE_F_KPREEMPT) {
			ue->flags = ule_boost_update(ue->flags, ULE_EV_USER, false);
			ule_curr_set_prio(rq, p, ule_compute_prio(p));
		}
		switch_now = (ue->flags & ULE_F_NEEDRESCHED) || ule_rq_of(rq)->lowpri < ue->prio;
		if (switch_now)
			ue->flags = ule_switch_for(ue->flags, ule_rq_of(rq)->lowpri);
	}
	task_rq_unlock(rq, p, &rf);
	if (switch_now)
		schedule();
}

/* Switch @curr out for a waiting ULE task of priority @pri. */
static void ule_resched_for(struct rq *rq, struct task_struct *curr, unsigned int pri)
{
	curr->ule.flags = ule_switch_for(curr->ule.flags, pri);
	resched_curr(rq);
}

/*
 * Have @p, the current task, pass through ule_resume_work() on its way
 * back to user space; false if it cannot (a kernel thread, an exiting
 * task).
 */
static bool ule_queue_resume(struct task_struct *p)
{
	return sched_queue_resume(p, &p->ule.resume_work, &p->ule.resume_queued,
				  ule_resume_work);
}

/*
 * kernel.sched_ule_strict, FreeBSD's sched_setpreempt() and tdq_notify():
 * a preemption sched_shouldpreempt() allows takes the CPU at once, even in
 * the kernel (td_owepreempt; SW_PREEMPT puts @curr back at the head of its
 * list). Any other better priority on the waking CPU only asks for a
 * switch (TDF_NEEDRESCHED): a user task waking another from a system call
 * switches on its way back to user space, and goes to the tail of its
 * list. No wakeup granularity.
 */
static void ule_preempt_strict(struct rq *rq, struct task_struct *curr, int pri, bool remote)
{
	struct sched_ule_entity *ue = &curr->ule;

	if (pri >= ue->prio)
		return;
	if (ule_should_preempt(pri, ue->prio, remote)) {
		resched_curr(rq);
		return;
	}
	if (remote)
		return;
	ue->flags |= ULE_F_NEEDRESCHED;
	if (in_task() && curr == current && ule_queue_resume(curr))
		return;
	resched_curr(rq);
}

/*
 * ULE's preemption rules: on the waking CPU a better priority reschedules
 * (FreeBSD's TDF_NEEDRESCHED); on another CPU only sched_shouldpreempt()
 * does: idle CPUs, priorities at or above preempt_thresh, and interactive
 * over batch. Timeshare never preempts timeshare remotely.
 */
static void check_preempt_curr_ule(struct rq *rq, struct task_struct *p, int flags)
{
	struct task_struct *curr = rq_curr_locked(rq);
	int waker = p->ule.waker_cpu;
	bool remote;

	if (!ule_task(curr))
		return;
	remote = (waker >= 0 ? waker : smp_processor_id()) != cpu_of(rq);
	if (READ_ONCE(sysctl_sched_ule_strict)) {
		ule_preempt_strict(rq, curr, p->ule.prio, remote);
		return;
	}
	if (remote ? !ule_should_preempt(p->ule.prio, curr->ule.prio, true) :
		     p->ule.prio >= curr->ule.prio)
		return;
	update_curr_ule(rq);
	if (ule_preempt_now(rq, curr, p->ule.prio))
		ule_resched_for(rq, curr, p->ule.prio);
}

static void set_next_task_ule(struct rq *rq, struct task_struct *p, bool first)
{
	struct sched_ule_entity *ue = &p->ule;

	if (ule_on_runq(p))
		ule_runq_rem(rq, p);
	sched_class_mark_idle(rq, false);
	p->se.exec_start = rq_clock_task(rq);
	/*
	 * A new pick restarts wakeup_gran and settles any deferred preemption;
	 * the running task set again after a nice or policy change keeps both.
	 */
	if (first) {
		p->se.prev_sum_exec_runtime = p->se.sum_exec_runtime;
		ule_rq_of(rq)->preempt_pri = ULE_PRI_MAX_IDLE;
	}
	ule_pct_update(ue, rq_clock(rq), false);
	WRITE_ONCE(ule_rq_of(rq)->lowpri, min_t(unsigned int, ue->prio,
						ule_rq_of(rq)->lowpri));
	if (rq_curr_locked(rq)->sched_class != &ule_sched_class)
		ule_update_util(rq, 0);
}

/* The first task of @q's lists from @index on, but @skip. */
static struct task_struct *ule_first_but(struct ule_runq *q, unsigned int index,
					 struct task_struct *skip)
{
	struct task_struct *p;

	for_each_set_bit_from(index, q->bits, ULE_RQ_NQS) {
		list_for_each_entry(p, &q->queue[index], ule.run_list) {
			if (p != skip)
				return p;
		}
	}
	return NULL;
}

/* ule_choose() passing over @skip (debugfs sched/inject_stall_pid). */
static struct task_struct *ule_choose_but(struct ule_rq *ule, struct task_struct *skip)
{
	struct task_struct *p;

	p = ule_first_but(&ule->realtime, 0, skip);
	if (!p)
		p = ule_first_but(&ule->timeshare, ule->ridx, skip);
	if (!p)
		p = ule_first_but(&ule->timeshare, 0, skip);
	if (!p)
		p = ule_first_but(&ule->idle, 0, skip);
	return p;
}

/* What this CPU runs next; no side effects, as a pick_task(). */
static struct task_struct *pick_task_ule(struct rq *rq)
{
	struct task_struct *p = ule_choose(ule_rq_of(rq));

	lockdep_assert_rq_held(rq);
	if (p && sched_stall_injected(p))
		p = ule_choose_but(ule_rq_of(rq), p);
	return p;
}

static struct task_struct *pick_next_task_ule(struct rq *rq)
{
	struct task_struct *p = pick_task_ule(rq);

	if (!p) {
		WRITE_ONCE(ule_rq_of(rq)->lowpri, ULE_PRI_MAX_IDLE);
		sched_class_mark_idle(rq, true);
		return NULL;
	}
	WRITE_ONCE(ule_rq_of(rq)->lowpri, p->ule.prio);
	set_next_task_ule(rq, p, true);
	return p;
}

/*
 * A runnable task leaves the CPU: preempted in the middle of kernel code
 * it keeps or gains ULE_F_KPREEMPT until its return to user space,
 * otherwise it loses it.
 */
static void ule_switch_boost(struct rq *rq, struct task_struct *p)
{
	struct sched_ule_entity *ue = &p->ule;
	u8 flags = ule_boost_update(ue->flags, rq->sched_kernel_preempt ? ULE_EV_PREEMPT_KERNEL :
				    ULE_EV_SWITCH, p->flags & PF_KTHREAD);

	if (flags == ue->flags)
		return;
	/* The tick ends a boost whose task_work cannot be queued. */
	if ((flags & ULE_F_KPREEMPT) && p == current)
		ule_queue_resume(p);
	ue->flags = flags;
	ule_set_prio(p, ule_compute_prio(p));
}

/*
 * sched_switch(): a task that is still runnable goes back to its queue,
 * at the head if it was preempted with slice left.
 */
static void put_prev_task_ule(struct rq *rq, struct task_struct *p)
{
	struct sched_ule_entity *ue = &p->ule;

	update_curr_ule(rq);
	ule_update_util(rq, 1);
	ue->last_ran = rq_clock(rq);
	if ((ue->flags & ULE_F_QUEUED) && !ule_on_runq(p)) {
		ule_switch_boost(rq, p);
		ule_runq_add(rq, p, ule_requeue_head(ue->flags) ?
			     ULE_ADD_PREEMPTED : ULE_ADD_BY_PRIO);
		if (ue->prio < ule_rq_of(rq)->lowpri)
			WRITE_ONCE(ule_rq_of(rq)->lowpri, ue->prio);
	}
	ue->flags &= ~(ULE_F_SLICEEND | ULE_F_YIELD | ULE_F_NEEDRESCHED);
}

/* One calendar step per FreeBSD stathz tick, so batch tasks all run. */
static void ule_calendar_tick(struct rq *rq)
{
	struct ule_rq *ule = ule_rq_of(rq);
	u64 now = rq_clock(rq);

	if (ule_since(now, ule->calendar_clock) < ULE_STAT_TICK_NS)
		return;
	ule->calendar_clock = now;
	if (ule->idx == ule->ridx) {
		ule->idx = (ule->idx + 1) % ULE_RQ_NQS;
		if (list_empty(&ule->timeshare.queue[ule->ridx]))
			ule->ridx = ule->idx;
	}
}

/*
 * sched_clock(): history, priority and slice expiry of the running task.
 *
 * Context: the tick (hardirq), @rq locked.
 */
static void task_tick_ule(struct rq *rq, struct task_struct *p, int queued)
{
	struct sched_ule_entity *ue = &p->ule;
	struct pt_regs *regs = get_irq_regs();
	bool kthread = p->flags & PF_KTHREAD;
	u8 flags = ue->flags;
	unsigned int prio;

	update_curr_ule(rq);
	ule_update_util(rq, 1);
	ule_calendar_tick(rq);
	/* In user space: a boost for kernel work is over (ule_boost_update()). */
	if (regs && user_mode(regs))
		ue->flags = ule_boost_update(ue->flags, ULE_EV_USER, kthread);
	if (ule_scored(p))
		ule_interact_update(&ue->runtime, &ue->slptime);
	if (ue->slice_used >= ule_rq_slice(rq)) {
		ue->slice_used = 0;
		ue->flags = ule_boost_update(ue->flags | ULE_F_SLICEEND, ULE_EV_SLICE_END,
					     kthread);
		resched_curr(rq);
	}
	if (ule_scored(p) || flags != ue->flags) {
		prio = ule_compute_prio(p);
		if (prio != ue->prio) {
			ule_curr_set_prio(rq, p, prio);
			/* The work the boost was for is done: a better task goes first. */
			if ((flags & ~ue->flags & ULE_F_KPREEMPT) && ule_rq_of(rq)->lowpri < prio)
				ule_resched_for(rq, p, ule_rq_of(rq)->lowpri);
		}
	}
	if (!(ue->flags & ULE_F_SLICEEND) && ule_rq_of(rq)->preempt_pri < ue->prio &&
	    ule_preempt_now(rq, p, ule_rq_of(rq)->preempt_pri)) {
		/* A wakeup's preemption waited for wakeup_gran. */
		ule_resched_for(rq, p, ule_rq_of(rq)->preempt_pri);
	}
	ule_kick_idle(rq);
}

/*
 * A new process is sched_fork(): the child inherits its parent's history
 * cut to 0.5 s and a short first slice; the parent pays one stathz tick.
 * A new thread is sched_fork_thread() alone: its creator's whole history
 * and the short slice, at no cost to the creator.
 */
static void task_fork_ule(struct task_struct *p)
{
	struct sched_ule_entity *ue = &p->ule, *pue = &current->ule;
	/* Not thread_group_leader(): copy_process() sets exit_signal later. */
	bool process = p->group_leader == p;
	struct rq_flags rf;
	struct rq *rq;

	rq = this_rq();
	rq_lock(rq, &rf);
	update_rq_clock(rq);
	if (ule_task(current)) {
		update_curr_ule(rq);
		if (process)
			ule_pct_update(pue, rq_clock(rq), true);
	}
	ue->runtime = pue->runtime;
	ue->slptime = pue->slptime;
	ue->pct_run = pue->pct_run;
	ue->pct_first = pue->pct_first;
	ue->pct_last = pue->pct_last;
	if (process)
		ule_interact_fork(&ue->runtime, &ue->slptime);
	ue->slice_used = ule_rq_slice(rq) - ule_slice_min();
	ue->prio = ule_compute_prio(p);
	if (process && ule_task(current)) {
		pue->runtime += ULE_STAT_TICK_NS;
		ule_interact_update(&pue->runtime, &pue->slptime);
	}
	rq_unlock(rq, &rf);
}

/*
 * Add @runtime to @to's history if @to is a live timeshare ULE task.
 * Returns false, giving nothing, if @to is exiting and passed its own
 * history on already (ULE_F_EXITED): its heir is then the one to credit.
 */
static bool ule_give_runtime(struct task_struct *to, u64 runtime)
{
	struct rq_flags rf;
	bool given = true;
	struct rq *rq;

	rq = task_rq_lock(to, &rf);
	if (to->ule.flags & ULE_F_EXITED) {
		given = false;
	} else if (ule_task(to) && ule_timeshare(to)) {
		to->ule.runtime += runtime;
		ule_interact_update(&to->ule.runtime, &to->ule.slptime);
	}
	task_rq_unlock(rq, to, &rf);
	return given;
}

/* FreeBSD's FIRST_THREAD_IN_PROC(): @p's oldest thread not exiting. */
static struct task_struct *ule_first_thread(struct task_struct *p)
{
	struct task_struct *t;

	for_each_thread(p, t)
		if (!(READ_ONCE(t->flags) & PF_EXITING))
			return t;
	return NULL;
}

/*
 * Who inherits exiting @p's run time, with a reference: the oldest thread
 * of its process still alive (FreeBSD's thread_exit()), else, @p being
 * the last, the oldest of its parent's process (sched_exit()), or of the
 * next process up whose threads are not all exiting too.
 */
static struct task_struct *ule_get_heir(struct task_struct *p)
{
	struct task_struct *heir;

	rcu_read_lock();
	for (heir = ule_first_thread(p); !heir; heir = ule_first_thread(p))
		p = rcu_dereference(p->real_parent);
	if (!refcount_inc_not_zero(&heir->usage))
		heir = NULL;
	rcu_read_unlock();
	return heir;
}

/*
 * sched_exit() / sched_exit_thread(): an exiting task's run time goes to
 * the oldest live thread of its process or, from the last one, of its
 * parent's, before the parent can reap it, so a shell that starts CPU
 * hogs looks less interactive and its next children start as batch.
 */
static void task_exit_ule(struct task_struct *p)
{
	struct task_struct *heir;
	struct rq_flags rf;
	struct rq *rq;
	u64 runtime;

	SCHED_WARN_ON(p != current || !(p->flags & PF_EXITING));
	rq = task_rq_lock(p, &rf);
	if (!ule_task(p) || !ule_timeshare(p)) {
		task_rq_unlock(rq, p, &rf);
		return;
	}
	update_rq_clock(rq);
	update_curr_ule(rq);
	/* From here gifts to @p are refused: their givers look again. */
	p->ule.flags |= ULE_F_EXITED;
	runtime = p->ule.runtime;
	task_rq_unlock(rq, p, &rf);
	if (!runtime)
		return;
	/* A refusing heir is exiting: the next look passes it over. */
	while ((heir = ule_get_heir(p))) {
		bool given = ule_give_runtime(heir, runtime);

		put_task_struct(heir);
		if (given)
			break;
	}
}

/* The running @p now has @prio: a better queued task takes the CPU. */
static void ule_curr_prio_changed(struct rq *rq, struct task_struct *p, unsigned int prio)
{
	ule_curr_set_prio(rq, p, prio);
	if (ule_rq_of(rq)->lowpri < prio)
		ule_resched_for(rq, p, ule_rq_of(rq)->lowpri);
}

/*
 * A nice or policy change. FreeBSD's sched_nice() and rtp_to_pri() give
 * the running task its new priority without asking for a switch: a better
 * task waiting gets the CPU at the end of the slice or the next sleep.
 */
static void prio_changed_ule(struct rq *rq, struct task_struct *p, int oldprio)
{
	if (!task_on_rq_queued(p))
		return;
	if (task_current(rq, p))
		ule_curr_set_prio(rq, p, ule_compute_prio(p));
	else
		check_preempt_curr_ule(rq, p, 0);
}

/*
 * rt_mutex_setprio() left p->prio alone (two normal tasks), but @p's top
 * waiter changed and with it the priority ULE lends: requeue @p at it.
 */
static void ule_pi_changed(struct rq *rq, struct task_struct *p)
{
	unsigned int prio = ule_compute_prio(p);
	enum ule_add how;
	u8 ridx;

	if (prio == p->ule.prio)
		return;
	if (!task_on_rq_queued(p)) {
		ule_set_prio(p, prio);
		return;
	}
	if (task_current(rq, p)) {
		ule_curr_prio_changed(rq, p, prio);
		return;
	}
	how = ule_requeue_how(p->ule.prio, prio);
	ridx = ule_rq_of(rq)->ridx;
	ule_runq_rem(rq, p);
	ule_set_prio(p, prio);
	ule_requeue(rq, p, how, ridx);
	ule_set_lowpri(rq);
	check_preempt_curr_ule(rq, p, 0);
}

#ifdef CONFIG_SMP
/* The wakeup is over, whether or not check_preempt_curr() read the waker. */
static void task_woken_ule(struct rq *rq, struct task_struct *p)
{
	p->ule.waker_cpu = -1;
}
#endif

static void switched_to_ule(struct rq *rq, struct task_struct *p)
{
	if (!task_on_rq_queued(p) || task_current(rq, p))
		return;
	if (!ule_task(rq_curr_locked(rq)))
		resched_curr(rq);
	else
		check_preempt_curr_ule(rq, p, 0);
}

static void switched_from_ule(struct rq *rq, struct task_struct *p)
{
	/* Saved on its way out of the class: no ENQUEUE_RESTORE here follows. */
	if (ule_rq_of(rq)->saved == p)
		ule_rq_of(rq)->saved = NULL;
}

static unsigned int get_rr_interval_ule(struct rq *rq, struct task_struct *task)
{
	return nsecs_to_jiffies(ule_rq_slice(rq));
}

#ifdef CONFIG_SMP
static void ule_steal_ipi(void *info);
#endif

static void ule_init_rq(struct rq *rq)
{
	struct ule_rq *ule = &rq->ule;

	ule_runq_init(&ule->realtime);
	ule_runq_init(&ule->timeshare);
	ule_runq_init(&ule->idle);
	ule->lowpri = ULE_PRI_MAX_IDLE;
	ule->preempt_pri = ULE_PRI_MAX_IDLE;
#ifdef CONFIG_SMP
	INIT_CSD(&ule->steal_csd, ule_steal_ipi, rq);
	WARN_ON_ONCE(!zalloc_cpumask_var(&ule->steal_mask, GFP_KERNEL));
#endif
}

/* A new task (from __sched_fork()): no queue, no stale flags. */
static void ule_init_task(struct task_struct *p)
{
	INIT_LIST_HEAD(&p->ule.run_list);
	p->ule.runq = ULE_RUNQ_NONE;
	p->ule.flags = 0;
	p->ule.sleep_start = 0;
	p->ule.waker_cpu = -1;
	p->ule.resume_queued = false;
}

#ifdef CONFIG_SMP
/* ULE priority of whatever runs on @rq's CPU, for remote readers. */
static int ule_cpu_lowpri(int cpu)
{
	struct rq *rq = cpu_rq(cpu);

	if (READ_ONCE(rq->rt.rt_nr_running) || READ_ONCE(rq->dl.dl_nr_running))
		return ULE_PRI_MIN_REALTIME;
	return READ_ONCE(rq->ule.lowpri);
}

/* FreeBSD's sched_random(): a per-CPU LCG is plenty for tie-breaks. */
static DEFINE_PER_CPU(u32, ule_random_state);

static u32 ule_random(void)
{
	/* Any CPU's state will do: callers may be preemptible. */
	u32 *state = raw_cpu_ptr(&ule_random_state);

	*state = *state * 69069 + 5;
	return *state >> 16;
}

/* What cpu_search() looks for and what it found. */
struct ule_search {
	const struct cpumask	*mask;
	int			pri;	/* lowest: CPU's lowpri must be worse */
	int			limit;	/* lowest: max load; highest: min load */
	int			trans;	/* highest: min transferable tasks */
	int			prefer;	/* lowest: favoured CPU */
	int			cpu;
	int			score;
};

/* One CPU as a leaf of cpu_search(): returns its load score. */
static int ule_search_cpu(int cpu, struct ule_search *low, struct ule_search *high)
{
	struct rq *rq = cpu_rq(cpu);
	int nr = READ_ONCE(rq->ule.load);
	int load = nr * 256, rnd = ule_random() % 32;

	sched_ev_seen_cpu(cpu);
	if (low) {
		int l = cpu == low->prefer ? load - 64 : load;

		if (ule_cpu_lowpri(cpu) > low->pri && nr <= low->limit &&
		    cpumask_test_cpu(cpu, low->mask)) {
			low->cpu = cpu;
			low->score = l - rnd;
		}
		load = l;
	}
	if (high && nr >= high->limit && READ_ONCE(rq->ule.transferable) >= high->trans &&
	    cpumask_test_cpu(cpu, high->mask)) {
		high->cpu = cpu;
		high->score = load - rnd;
	}
	return load;
}

/* The domain one level below @sd that covers @sg, or NULL to go flat. */
static struct sched_domain *ule_child_domain(struct sched_domain *sd, struct sched_group *sg)
{
	struct sched_domain *child = sd->child, *csd;
	int cpu;

	if (!child)
		return NULL;
	if (cpumask_subset(sched_domain_span(child), sched_group_span(sg)))
		return child;
	cpu = cpumask_first(sched_group_span(sg));
	for (csd = rcu_dereference(cpu_rq(cpu)->sd); csd; csd = csd->parent) {
		if (csd->level == child->level)
			return cpumask_equal(sched_domain_span(csd), sched_group_span(sg)) ?
				csd : NULL;
	}
	return NULL;
}

static int ule_search(struct sched_domain *sd, const struct cpumask *span,
		      struct ule_search *low, struct ule_search *high);

/* Per-child state of one cpu_search() level. */
struct ule_search_level {
	struct ule_search	*low, *high;
	struct ule_search	l, h;
	int			lbest, hbest, total;
};

static void ule_level_start(struct ule_search_level *lv, struct ule_search *low,
			    struct ule_search *high)
{
	lv->low = low;
	lv->high = high;
	lv->lbest = INT_MAX;
	lv->hbest = INT_MIN;
	lv->total = 0;
}

/* Fresh copies of the search for the next child. */
static void ule_level_child(struct ule_search_level *lv)
{
	if (lv->low) {
		lv->l = *lv->low;
		lv->l.cpu = -1;
	}
	if (lv->high) {
		lv->h = *lv->high;
		lv->h.cpu = -1;
	}
}

/* Keep the child's CPU if its path is less (more) loaded, or ties better. */
static void ule_level_merge(struct ule_search_level *lv, int load)
{
	struct ule_search *low = lv->low, *high = lv->high;

	lv->total += load;
	if (low && lv->l.cpu >= 0 &&
	    (load < lv->lbest || (load == lv->lbest && lv->l.score < low->score))) {
		lv->lbest = load;
		low->cpu = lv->l.cpu;
		low->score = lv->l.score;
	}
	if (high && lv->h.cpu >= 0 &&
	    (load > lv->hbest || (load == lv->hbest && lv->h.score > high->score))) {
		lv->hbest = load;
		high->cpu = lv->h.cpu;
		high->score = lv->h.score;
	}
}

/*
 * cpu_search(): the least (most) loaded CPU on the least (most) loaded
 * path through the tree, which balances caches and nodes rather than
 * single CPUs. Ties between groups go to the better CPU score.
 */
static int ule_search_group(struct sched_domain *sd, struct ule_search *low,
			    struct ule_search *high)
{
	struct sched_group *sg = sd->groups;
	struct ule_search_level lv;

	ule_level_start(&lv, low, high);
	do {
		ule_level_child(&lv);
		ule_level_merge(&lv, ule_search(ule_child_domain(sd, sg), sched_group_span(sg),
						low ? &lv.l : NULL, high ? &lv.h : NULL));
		sg = sg->next;
	} while (sg != sd->groups);
	return lv.total;
}

/* Search @sd, or the CPUs of @span one by one when there is no domain. */
static int ule_search(struct sched_domain *sd, const struct cpumask *span,
		      struct ule_search *low, struct ule_search *high)
{
	struct ule_search_level lv;
	int cpu;

	if (sd)
		return ule_search_group(sd, low, high);
	ule_level_start(&lv, low, high);
	for_each_cpu_and(cpu, span, cpu_active_mask) {
		ule_level_child(&lv);
		ule_level_merge(&lv, ule_search_cpu(cpu, low ? &lv.l : NULL,
						    high ? &lv.h : NULL));
	}
	return lv.total;
}

/* sched_lowest(): the least loaded allowed CPU running worse than @pri. */
static int ule_lowest(struct sched_domain *sd, const struct cpumask *span,
		      const struct cpumask *mask, int pri, int maxload, int prefer)
{
	struct ule_search low = {
		.mask = mask, .pri = pri, .limit = maxload, .prefer = prefer,
		.cpu = -1, .score = INT_MAX,
	};

	ule_search(sd, span, &low, NULL);
	return low.cpu;
}

/* sched_highest(): the most loaded CPU with at least @mintrans to give. */
static int ule_highest(struct sched_domain *sd, const struct cpumask *span,
		       const struct cpumask *mask, int minload, int mintrans)
{
	struct ule_search high = {
		.mask = mask, .limit = minload, .trans = mintrans,
		.cpu = -1, .score = INT_MIN,
	};

	ule_search(sd, span, NULL, &high);
	return high.cpu;
}

static struct sched_domain *ule_top_domain(int cpu)
{
	struct sched_domain *sd = rcu_dereference(cpu_rq(cpu)->sd);

	while (sd && sd->parent)
		sd = sd->parent;
	return sd;
}

/* SCHED_AFFINITY(): did @p run recently enough to find its cache warm? */
static bool ule_affine(struct task_struct *p, u64 now, int level)
{
	return ule_since(now, p->ule.last_ran) < (u64)level * ULE_TICK_NS;
}

/* @cpu runs nothing better than ULE's idle band: a remote read. */
static bool ule_cpu_idle(int cpu)
{
	sched_ev_seen_cpu(cpu);
	return ule_cpu_lowpri(cpu) >= ULE_PRI_MIN_IDLE;
}

/*
 * An idle CPU of @span (in @prev's root domain) in @allowed, on an idle
 * core if @core, the first from @prev on. Candidates come from the root
 * domain's idle mask, so only CPUs marked idle are read.
 */
static int ule_idle_in(const struct cpumask *allowed, const struct cpumask *span, int prev,
		       bool core)
{
	const struct cpumask *idle = sched_class_idle_mask(prev);
	int cpu;

	for_each_cpu_wrap(cpu, span, prev) {
		if (!cpumask_test_cpu(cpu, idle) || !cpumask_test_cpu(cpu, allowed) ||
		    !cpu_active(cpu) || (core && !sched_class_core_in(cpu, idle)))
			continue;
		/* The mask is a hint; the siblings' lowpri is what they run. */
		if (core ? sched_class_core_idle(cpu, ule_cpu_idle) : ule_cpu_idle(cpu))
			return cpu;
	}
	return -1;
}

/* An idle CPU of @span for @p, on an idle core first when SMT is on. */
static int ule_idle_cpu(struct task_struct *p, const struct cpumask *span, int prev)
{
	int cpu = -1;

	if (sched_smt_active())
		cpu = ule_idle_in(p->cpus_ptr, span, prev, true);
	return cpu >= 0 ? cpu : ule_idle_in(p->cpus_ptr, span, prev, false);
}

/*
 * cpu_search()'s least loaded path where idle CPUs are concerned: from
 * @sd down, the group with the most CPUs marked idle (ties: @prev's),
 * counted with bit operations instead of reading every runqueue. NULL
 * when no CPU of @sd is marked idle.
 */
static const struct cpumask *ule_idlest_span(struct sched_domain *sd, int prev)
{
	const struct cpumask *span = sched_domain_span(sd), *idle = sched_class_idle_mask(prev);

	if (!cpumask_intersects(span, idle))
		return NULL;
	while (sd) {
		struct sched_group *sg = sd->groups, *best = NULL;
		unsigned int most = 0;

		do {
			const struct cpumask *gspan = sched_group_span(sg);
			unsigned int n = cpumask_weight_and(gspan, idle);

			if (n > most || (n && n == most && cpumask_test_cpu(prev, gspan))) {
				most = n;
				best = sg;
			}
			sg = sg->next;
		} while (sg != sd->groups);
		if (!best)
			break;
		span = sched_group_span(best);
		sd = ule_child_domain(sd, best);
	}
	return span;
}

/* The least loaded allowed CPU of @llc running worse than @pri. */
static int ule_lowest_llc(struct sched_domain *llc, struct task_struct *p, int pri, int prev)
{
	if (!llc)
		return ule_lowest(NULL, cpu_active_mask, p->cpus_ptr, pri, INT_MAX, prev);
	return ule_lowest(llc, NULL, p->cpus_ptr, pri, INT_MAX, prev);
}

/*
 * No CPU @p may use is idle. FreeBSD then searches the whole machine for
 * the least loaded CPU running worse work, then for the least loaded
 * CPU. To bound the cost, this compares two last-level caches, @prev's
 * and one picked at random, which over many wakeups still finds the less
 * loaded caches; idle stealing and the balancer do the rest.
 */
static int ule_busy_pick(struct task_struct *p, struct sched_domain *llc, int prev, int pri)
{
	struct sched_domain *far = NULL;
	int cpu, other, tries;

	if (llc) {
		for_each_cpu_wrap(cpu, cpu_active_mask, ule_random() % nr_cpu_ids) {
			if (cpumask_test_cpu(cpu, sched_domain_span(llc)) ||
			    !cpumask_test_cpu(cpu, p->cpus_ptr))
				continue;
			far = rcu_dereference(per_cpu(sd_llc, cpu));
			break;
		}
	}
	for (tries = 0; tries < 2; tries++, pri = -1) {
		cpu = ule_lowest_llc(llc, p, pri, prev);
		other = far ? ule_lowest_llc(far, p, pri, prev) : -1;
		if (other >= 0 && (cpu < 0 || READ_ONCE(cpu_rq(other)->ule.load) <
					      READ_ONCE(cpu_rq(cpu)->ule.load)))
			cpu = other;
		if (cpu >= 0)
			return cpu;
	}
	return -1;
}

/*
 * sched_pickcpu(): the previous CPU if it is idle and the cache is warm
 * (its whole core, on SMT); else an idle CPU of the last level cache
 * while the cache is warm; else an idle CPU on the least loaded path of
 * the machine; else the least loaded CPU running worse priority work,
 * else the least loaded CPU, of two caches. The waking CPU wins if it
 * runs worse work and is not busier than that choice plus one. Bounded:
 * idle CPUs are found from a mask and only two caches are searched.
 */
static int ule_pickcpu(struct task_struct *p, int prev, int wake_flags)
{
	int self = smp_processor_id(), pri, cpu = -1;
	struct sched_domain *llc, *top;
	u64 now = sched_clock_cpu(self);

	if (wake_flags & WF_EXEC)
		return prev;
	p->ule.waker_cpu = self;
	if (wake_flags & WF_TTWU) {
		ule_account_sleep(p, now);
		ule_set_prio(p, ule_compute_prio(p));
	}
	pri = p->ule.prio;

	if (cpumask_test_cpu(prev, p->cpus_ptr) && cpu_active(prev) && ule_cpu_idle(prev) &&
	    ule_affine(p, now, 2) && sched_class_core_idle(prev, ule_cpu_idle))
		return prev;

	rcu_read_lock();
	llc = rcu_dereference(per_cpu(sd_llc, prev));
	top = ule_top_domain(prev);
	if (llc && llc != top && ule_affine(p, now, 3))
		cpu = ule_idle_cpu(p, sched_domain_span(llc), prev);
	if (cpu < 0 && top) {
		const struct cpumask *idlest = ule_idlest_span(top, prev);

		/* The idlest path may hold no CPU @p may use: then any. */
		if (idlest)
			cpu = ule_idle_cpu(p, idlest, prev);
		if (idlest && cpu < 0)
			cpu = ule_idle_cpu(p, sched_domain_span(top), prev);
	}
	if (cpu < 0)
		cpu = ule_busy_pick(p, llc, prev, pri);
	rcu_read_unlock();
	if (cpu < 0)
		return prev;

	if (cpumask_test_cpu(self, p->cpus_ptr) && cpu_active(self) &&
	    ule_cpu_lowpri(self) > pri && ule_cpu_lowpri(cpu) < ULE_PRI_MIN_IDLE &&
	    READ_ONCE(this_rq()->ule.load) <= READ_ONCE(cpu_rq(cpu)->ule.load) + 1)
		cpu = self;
	return cpu;
}

/* The CPUs sched_pickcpu() looked at go to the cpus_considered tracepoint. */
static int select_task_rq_ule(struct task_struct *p, int prev, int wake_flags)
{
	return sched_ev_search(SCHED_EV_ULE_PICKCPU, p->pid, ule_pickcpu(p, prev, wake_flags));
}

/* @p, queued on @src, may move to @cpu now. */
static bool ule_may_take(struct rq *src, struct task_struct *p, int cpu)
{
	return ule_can_migrate(p) && cpumask_test_cpu(cpu, p->cpus_ptr) && !task_on_cpu(src, p);
}

/*
 * tdq_steal(): the first task that may move to @cpu, in pick order; of
 * the calendar, not the one about to run unless it is the only choice.
 * Unlike FreeBSD it looks at sysctl_sched_nr_migrate tasks at most, as
 * mainline's walks with interrupts off do: a queue of thousands that
 * may not move here is not walked at every idle entry.
 */
static struct task_struct *ule_steal_task(struct rq *src, int cpu)
{
	int budget = READ_ONCE(sysctl_sched_nr_migrate);
	struct ule_rq *ule = ule_rq_of(src);
	struct task_struct *p, *first = NULL;
	unsigned int i, index;

	lockdep_assert_rq_held(src);
	for_each_set_bit(index, ule->realtime.bits, ULE_RQ_NQS) {
		list_for_each_entry(p, &ule->realtime.queue[index], ule.run_list) {
			if (ule_may_take(src, p, cpu))
				return p;
			if (--budget <= 0)
				return NULL;
		}
	}
	for (i = 0; i < ULE_RQ_NQS; i++) {
		index = (ule->ridx + i) % ULE_RQ_NQS;
		if (!test_bit(index, ule->timeshare.bits))
			continue;
		list_for_each_entry(p, &ule->timeshare.queue[index], ule.run_list) {
			bool ok = ule_may_take(src, p, cpu);

			if (first && ok)
				return p;
			if (!first)
				first = ok ? p : ERR_PTR(-EINVAL);
			if (--budget <= 0)
				goto calendar_done;
		}
	}
calendar_done:
	if (!IS_ERR_OR_NULL(first))
		return first;
	if (budget <= 0)
		return NULL;
	for_each_set_bit(index, ule->idle.bits, ULE_RQ_NQS) {
		list_for_each_entry(p, &ule->idle.queue[index], ule.run_list) {
			if (ule_may_take(src, p, cpu))
				return p;
			if (--budget <= 0)
				return NULL;
		}
	}
	return NULL;
}

/* tdq_notify(): the remote preemption rules for a task moved to @rq. */
static void ule_notify(struct rq *rq, struct task_struct *p)
{
	struct task_struct *curr = rq_curr_locked(rq);

	if (!ule_task(curr)) {
		if (sched_class_above(&ule_sched_class, curr->sched_class))
			resched_curr(rq);
		return;
	}
	if (ule_should_preempt(p->ule.prio, curr->ule.prio, true))
		resched_curr(rq);
}

/* Move queued @p from @src to @dst; both locked, clocks updated. */
static void ule_move_task(struct rq *src, struct rq *dst, struct task_struct *p,
			  enum sched_migrate_reason reason)
{
	lockdep_assert_rq_held(src);
	lockdep_assert_rq_held(dst);
	SCHED_WARN_ON(task_on_cpu(src, p) || task_rq(p) != src);
	trace_ule_transfer(p, cpu_of(src), cpu_of(dst), src->ule.load, dst->ule.load,
			   reason == SCHED_MIGRATE_IDLE_BALANCE);
	deactivate_task(src, p, DEQUEUE_NOCLOCK);
	set_task_cpu_reason(p, cpu_of(dst), reason);
	activate_task(dst, p, ENQUEUE_NOCLOCK);
}

/* Move one task from @src to @dst; both locked, clocks updated. */
static struct task_struct *ule_move_one(struct rq *src, struct rq *dst,
					enum sched_migrate_reason reason)
{
	struct task_struct *p = ule_steal_task(src, cpu_of(dst));

	if (p)
		ule_move_task(src, dst, p, reason);
	return p;
}

/* Fresh searches after reading a CPU's load stale (FreeBSD: no limit). */
#define ULE_STEAL_RESTARTS	2

/* @src still has what an idle steal wants: a load of @thresh, one to give. */
static bool ule_can_give(struct rq *src, int thresh)
{
	return READ_ONCE(src->ule.load) >= thresh && READ_ONCE(src->ule.transferable);
}

/*
 * tdq_idled(): a CPU about to idle takes one task from the most loaded
 * CPU sharing its smallest domain that has one to give, widening to the
 * whole machine. A CPU with nothing this one may run (affinity) is left
 * out and the same domain searched again; a load read stale restarts
 * from the smallest domain. FreeBSD first tries tdq_trysteal() (two
 * levels, a trylock) on the way out of sched_switch() and runs this full
 * search from the idle thread right after; here the full search runs at
 * once.
 *
 * Context: balance() or the steal IPI, IRQs off, @this_rq locked and
 * unpinned; double_lock_balance() may drop and retake that lock.
 */
static bool ule_idle_steal(struct rq *this_rq)
{
	int this_cpu = cpu_of(this_rq), thresh = READ_ONCE(sysctl_sched_ule_steal_thresh);
	struct cpumask *cand;
	struct sched_domain *sd;
	int restarts = 0;
	bool moved = false;

	lockdep_assert_rq_held(this_rq);
	if (!thresh || !cpu_active(this_cpu) || !cpumask_available(this_rq->ule.steal_mask))
		return false;
	cand = this_rq->ule.steal_mask;
	cpumask_andnot(cand, cpu_active_mask, cpumask_of(this_cpu));
	rcu_read_lock();
restart:
	sd = rcu_dereference(this_rq->sd);
	while (sd && !moved) {
		struct rq *src;
		bool stale;
		int cpu;

		cpu = sched_ev_search(SCHED_EV_ULE_STEAL, this_cpu,
				      ule_highest(sd, NULL, cand, thresh, 1));
		if (this_rq->ule.load)
			break;
		if (cpu < 0) {
			sd = sd->parent;
			continue;
		}
		src = cpu_rq(cpu);
		stale = !ule_can_give(src, thresh);
		if (!stale) {
			double_lock_balance(this_rq, src);
			stale = !ule_can_give(src, thresh);
			if (!stale && !this_rq->ule.load) {
				/* double_lock_balance() marked both clocks stale. */
				update_rq_clock(this_rq);
				update_rq_clock(src);
				moved = !!ule_move_one(src, this_rq, SCHED_MIGRATE_IDLE_BALANCE);
				/* Nothing there this CPU may run: the same level without it. */
				if (!moved)
					__cpumask_clear_cpu(cpu, cand);
			}
			double_unlock_balance(this_rq, src);
		}
		if (this_rq->ule.load)
			break;
		if (stale) {
			if (restarts++ >= ULE_STEAL_RESTARTS)
				break;
			goto restart;
		}
	}
	rcu_read_unlock();
	return moved;
}

/*
 * FreeBSD's idle loop runs tdq_idled() after a switch; with
 * kern.sched.always_steal (off by default) also whenever an interrupt
 * wakes the CPU. A tickless Linux CPU sleeps until told, so with
 * kernel.sched_ule_always_steal a CPU whose tick finds tasks to give
 * wakes as many idle CPUs nearby as it has transferable tasks, and each
 * steals for itself from this IPI.
 *
 * Context: hardirq on the idle CPU; takes its rq lock.
 */
static void ule_steal_ipi(void *info)
{
	struct rq *rq = info;
	struct rq_flags rf;

	atomic_set(&rq->ule.steal_kicked, 0);
	rq_lock(rq, &rf);
	if (!rq->ule.load && ule_cpu_lowpri(cpu_of(rq)) >= ULE_PRI_MIN_IDLE) {
		update_rq_clock(rq);
		rq_unpin_lock(rq, &rf);
		if (ule_idle_steal(rq))
			resched_curr(rq);
		rq_repin_lock(rq, &rf);
	}
	rq_unlock(rq, &rf);
}

/* A CPU with no ULE task, and with @cores one whose siblings have none either. */
static bool ule_steal_wanted(int cpu, void *cores)
{
	return !READ_ONCE(cpu_rq(cpu)->ule.load) &&
	       (!*(bool *)cores || sched_class_core_idle(cpu, ule_cpu_idle));
}

static bool ule_steal_kick(int cpu)
{
	struct rq *rq = cpu_rq(cpu);

	return sched_class_kick(cpu, &rq->ule.steal_csd, &rq->ule.steal_kicked);
}

/*
 * Nearest first, and with SMT whole idle cores before idle siblings of
 * busy ones, as sched_pickcpu() would place the stolen task.
 *
 * Context: the tick (hardirq), @rq locked.
 */
static void ule_kick_idle(struct rq *rq)
{
	int this_cpu = cpu_of(rq), thresh = READ_ONCE(sysctl_sched_ule_steal_thresh);
	int budget = min(rq->ule.transferable, rq->ule.load - 1);
	const struct cpumask *idle = sched_class_idle_mask(this_cpu);
	bool cores = sched_smt_active();

	if (!READ_ONCE(sysctl_sched_ule_always_steal) || !thresh || rq->ule.load < thresh ||
	    budget <= 0 || cpumask_empty(idle))
		return;
	rcu_read_lock();
	budget = sched_class_kick_near(this_cpu, idle, budget, ule_steal_wanted, ule_steal_kick,
				       &cores);
	if (cores && budget > 0) {
		cores = false;
		sched_class_kick_near(this_cpu, idle, budget, ule_steal_wanted, ule_steal_kick,
				      &cores);
	}
	rcu_read_unlock();
}

/*
 * The core calls this for every class below prev's, so a CPU going idle
 * under CFS passes here too: steal only while ULE runs normal tasks, or
 * each idle entry would scan the machine for ULE tasks that are not there.
 *
 * Context: __schedule(), IRQs off, @rq locked and pinned; the steal unpins
 * it and may drop and retake it.
 */
static int balance_ule(struct rq *rq, struct task_struct *prev, struct rq_flags *rf)
{
	if (!rq->ule.load && sched_class_is_normal(&ule_sched_class)) {
		rq_unpin_lock(rq, rf);
		ule_idle_steal(rq);
		rq_repin_lock(rq, rf);
	}
	return sched_class_above_runnable(rq) || rq->ule.load;
}

/*
 * sched_balance_pair(): one task from @high to @low if it still helps.
 *
 * Context: the balancer timer (softirq), no rq lock held; takes both.
 */
static bool ule_balance_pair(int high, int low)
{
	struct rq *hrq = cpu_rq(high), *lrq = cpu_rq(low);
	struct task_struct *p = NULL;
	unsigned long flags;

	local_irq_save(flags);
	double_rq_lock(hrq, lrq);
	if (cpu_active(low) && hrq->ule.transferable && hrq->ule.load > lrq->ule.load) {
		update_rq_clock(hrq);
		update_rq_clock(lrq);
		p = ule_move_one(hrq, lrq, SCHED_MIGRATE_BALANCE);
		if (p)
			ule_notify(lrq, p);
	}
	double_rq_unlock(hrq, lrq);
	local_irq_restore(flags);
	return p;
}

/*
 * An idle core of @cpu's LLC in @allowed for @cpu's lone running task, if
 * a sibling of @cpu is busy: the misplacement a re-pick repairs. -1 when
 * there is none or no SMT.
 */
static int ule_repick_target(const struct cpumask *allowed, int cpu)
{
	int target = -1;
#ifdef CONFIG_SCHED_SMT
	struct sched_domain *llc;
	int sibling;

	if (!sched_smt_active())
		return -1;
	for_each_cpu(sibling, cpu_smt_mask(cpu)) {
		if (sibling != cpu && !ule_cpu_idle(sibling))
			break;
	}
	if (sibling >= nr_cpu_ids)
		return -1;
	rcu_read_lock();
	llc = rcu_dereference(per_cpu(sd_llc, cpu));
	if (llc)
		target = ule_idle_in(allowed, sched_domain_span(llc), cpu, true);
	rcu_read_unlock();
#endif
	return target;
}

/*
 * Stopper of the CPU whose lone task was asked to pick again: that task
 * is queued now, so it can move; everything is checked again under both
 * locks, as the balancer's view was unlocked.
 *
 * Context: stopper of that CPU, no lock held; drops its rq lock to take
 * both.
 */
static int ule_repick_stop(void *data)
{
	struct rq *rq = data, *dst;
	struct task_struct *p;
	int target = -1;

	raw_spin_rq_lock_irq(rq);
	p = rq->ule.load == 1 ? ule_choose(ule_rq_of(rq)) : NULL;
	if (p && ule_can_migrate(p))
		target = ule_repick_target(p->cpus_ptr, cpu_of(rq));
	if (target < 0)
		goto out;
	raw_spin_rq_unlock(rq);
	dst = cpu_rq(target);
	double_rq_lock(rq, dst);
	if (rq->ule.load == 1 && ule_choose(ule_rq_of(rq)) == p && ule_can_migrate(p) &&
	    !dst->ule.load && cpu_active(target) && cpumask_test_cpu(target, p->cpus_ptr)) {
		update_rq_clock(rq);
		update_rq_clock(dst);
		ule_move_task(rq, dst, p, SCHED_MIGRATE_BALANCE);
		ule_notify(dst, p);
	}
	double_rq_unlock(rq, dst);
	raw_spin_rq_lock(rq);
out:
	rq->ule.repick_pending = false;
	raw_spin_rq_unlock_irq(rq);
	return 0;
}

/*
 * TDF_PICKCPU: the most loaded CPU runs one task and nothing waits
 * anywhere, so the balancer asks that task to pick a CPU again. Linux
 * moves a running task only from its own CPU, through the stopper; it is
 * queued only when the move would help (ule_repick_target()).
 *
 * Context: the balancer timer (softirq), no rq lock held.
 */
static void ule_repick_lone(int cpu)
{
	struct rq *rq = cpu_rq(cpu);
	struct task_struct *curr;
	unsigned long flags;
	bool queue = false;

	if (ule_repick_target(cpu_active_mask, cpu) < 0)
		return;
	raw_spin_rq_lock_irqsave(rq, flags);
	curr = rq_curr_locked(rq);
	if (!rq->ule.repick_pending && rq->ule.load == 1 && ule_task(curr) &&
	    ule_can_migrate(curr)) {
		rq->ule.repick_pending = true;
		queue = true;
	}
	raw_spin_rq_unlock_irqrestore(rq, flags);
	if (queue && !stop_one_cpu_nowait(cpu, ule_repick_stop, rq, &rq->ule.repick_work)) {
		raw_spin_rq_lock_irqsave(rq, flags);
		rq->ule.repick_pending = false;
		raw_spin_rq_unlock_irqrestore(rq, flags);
	}
}

/*
 * sched_balance_group() over one root domain, whose active CPUs are
 * @span and top sched domain @top: pair the most loaded CPU with the
 * least loaded one and move one task; a CPU gives or takes at most once
 * per run, so a big imbalance takes many runs to even out, as on FreeBSD.
 * When the most loaded CPU left runs a single task, that task picks again
 * and the run ends. Unlike FreeBSD a run ends after
 * sysctl_sched_nr_migrate pairings that moved nothing (affinity): each
 * locks two runqueues with interrupts off, and their number would grow
 * with the square of the CPUs, in a softirq.
 *
 * Context: the balancer timer (softirq), rcu_read_lock() held.
 */
static struct cpumask ule_bal_high, ule_bal_low;

static void ule_balance_root(struct sched_domain *top, const struct cpumask *span)
{
	int misses = READ_ONCE(sysctl_sched_nr_migrate);
	unsigned long flags;
	int high, low;
	bool anylow;

	cpumask_copy(&ule_bal_high, span);
	for (;;) {
		/* sched_ev_search()'s per-CPU mask needs interrupts off. */
		local_irq_save(flags);
		high = sched_ev_search(SCHED_EV_ULE_BALANCE, smp_processor_id(),
				       ule_highest(top, cpu_active_mask, &ule_bal_high, 1, 0));
		local_irq_restore(flags);
		if (high < 0)
			break;
		cpumask_clear_cpu(high, &ule_bal_high);
		cpumask_copy(&ule_bal_low, &ule_bal_high);
		if (cpumask_empty(&ule_bal_low))
			break;
		if (READ_ONCE(cpu_rq(high)->ule.load) == 1) {
			ule_repick_lone(high);
			break;
		}
		if (!READ_ONCE(cpu_rq(high)->ule.transferable))
			continue;
		anylow = true;
		for (;;) {
			low = ule_lowest(top, cpu_active_mask, &ule_bal_low, -1,
					 READ_ONCE(cpu_rq(high)->ule.load) - 1, high);
			if (low < 0)
				break;
			if (ule_balance_pair(high, low)) {
				/* A CPU that received cannot give this run. */
				cpumask_clear_cpu(low, &ule_bal_high);
				break;
			}
			/* Nothing on @high may run on @low: try another. */
			if (--misses <= 0)
				return;
			cpumask_clear_cpu(low, &ule_bal_low);
			anylow = false;
		}
		/* No CPU at all is less loaded: the machine is balanced. */
		if (low < 0 && anylow)
			break;
	}
}

/*
 * The periodic balancer runs from a timer, not from one CPU's tick, so it
 * keeps running when that CPU is idle or tickless. Each root domain (a
 * cpuset partition, or the whole machine) is balanced on its own, every
 * interval/2 + random(interval); the timer fires for the earliest.
 */
static void ule_balance_timer_fn(struct timer_list *timer);
static DEFINE_TIMER(ule_balance_timer, ule_balance_timer_fn);

static unsigned long ule_balance_delay(void)
{
	unsigned int ms = max(READ_ONCE(sysctl_sched_ule_balance_interval_ms), 1);

	return msecs_to_jiffies(max(ms / 2, 1U) + ule_random() % ms);
}

static struct cpumask ule_bal_span;

/*
 * Balance every root domain that is due, each visited from its first
 * active CPU; a domain with no sched domain (one CPU, or isolated CPUs)
 * has nothing to balance. Returns when the next one is due.
 */
static unsigned long ule_balance_due(void)
{
	unsigned long now = jiffies, next = now + ule_balance_delay(), due;
	struct root_domain *rd;
	struct sched_domain *top;
	int cpu;

	rcu_read_lock();
	for_each_cpu(cpu, cpu_active_mask) {
		rd = READ_ONCE(cpu_rq(cpu)->rd);
		if (!cpumask_and(&ule_bal_span, rd->span, cpu_active_mask) ||
		    cpumask_first(&ule_bal_span) != cpu)
			continue;
		due = READ_ONCE(rd->pluggable_next_balance);
		if (time_before(now, due)) {
			if (time_before(due, next))
				next = due;
			continue;
		}
		due = now + ule_balance_delay();
		WRITE_ONCE(rd->pluggable_next_balance, due);
		if (time_before(due, next))
			next = due;
		top = ule_top_domain(cpu);
		if (top)
			ule_balance_root(top, &ule_bal_span);
	}
	rcu_read_unlock();
	return next;
}

static void ule_balance_timer_fn(struct timer_list *timer)
{
	unsigned long next = ule_balance_due();

	/* A switch away from ULE deletes the timer; do not re-arm it. */
	if (sched_class_is_normal(&ule_sched_class))
		mod_timer(timer, next);
}

/*
 * A new interval applies at once: every root domain draws its next pass
 * from it and a pending timer comes forward to the earliest, where
 * FreeBSD counts down what it drew from the old interval.
 *
 * Context: the sysctl write, process context. Racing the timer only
 * decides which of two fresh draws a root domain keeps; re-arming a timer
 * a class switch just deleted costs one pass over empty ULE queues.
 */
static void ule_balance_interval_changed(void)
{
	unsigned long next = MAX_JIFFY_OFFSET, due;
	struct root_domain *rd;
	int cpu;

	rcu_read_lock();
	for_each_cpu(cpu, cpu_active_mask) {
		rd = READ_ONCE(cpu_rq(cpu)->rd);
		if (cpumask_first_and(rd->span, cpu_active_mask) != cpu)
			continue;
		due = jiffies + ule_balance_delay();
		WRITE_ONCE(rd->pluggable_next_balance, due);
		if (next == MAX_JIFFY_OFFSET || time_before(due, next))
			next = due;
	}
	rcu_read_unlock();
	if (next != MAX_JIFFY_OFFSET && timer_pending(&ule_balance_timer))
		timer_reduce(&ule_balance_timer, next);
}

static void rq_online_ule(struct rq *rq)
{
	sched_class_rq_attach(rq, &ule_sched_class, true);
}

static void rq_offline_ule(struct rq *rq)
{
	sched_class_rq_attach(rq, &ule_sched_class, false);
}
#endif /* CONFIG_SMP */

/* The best priority on @rq, running or queued, waits @p behind it? */
static bool task_behind_better_ule(struct rq *rq, struct task_struct *p)
{
	struct task_struct *curr = rq_curr_locked(rq);
	struct task_struct *next = ule_choose(ule_rq_of(rq));
	unsigned int best = next ? next->ule.prio : p->ule.prio;

	lockdep_assert_rq_held(rq);
	if (ule_task(curr) && (curr->ule.flags & ULE_F_QUEUED))
		best = min_t(unsigned int, best, curr->ule.prio);
	return ule_on_runq(p) && ule_waits_behind(p->ule.prio, best);
}

static void ule_proc_show_task(struct task_struct *p, struct seq_file *m);
static void ule_normal_class_changed(void);

static unsigned int ule_nr_tasks(struct rq *rq)
{
	lockdep_assert_rq_held(rq);
	return rq->ule.load;
}

static const struct sched_pluggable_ops ule_pluggable = {
	.name		= "ule",
	.init_rq	= ule_init_rq,
	.init_task	= ule_init_task,
	.normal_changed	= ule_normal_class_changed,
	.show_task	= ule_proc_show_task,
	.nr_tasks	= ule_nr_tasks,
	.pi_changed	= ule_pi_changed,
};

DEFINE_SCHED_CLASS(ule) = {
	.enqueue_task		= enqueue_task_ule,
	.dequeue_task		= dequeue_task_ule,
	.yield_task		= yield_task_ule,
	.check_preempt_curr	= check_preempt_curr_ule,
	.pick_next_task		= pick_next_task_ule,
	.put_prev_task		= put_prev_task_ule,
	.set_next_task		= set_next_task_ule,
#ifdef CONFIG_SMP
	.balance		= balance_ule,
	.select_task_rq		= select_task_rq_ule,
	.task_woken		= task_woken_ule,
	.set_cpus_allowed	= set_cpus_allowed_common,
	.rq_online		= rq_online_ule,
	.rq_offline		= rq_offline_ule,
#endif
	.task_tick		= task_tick_ule,
	.task_fork		= task_fork_ule,
	.task_exit		= task_exit_ule,
	.prio_changed		= prio_changed_ule,
	.switched_from		= switched_from_ule,
	.switched_to		= switched_to_ule,
	.get_rr_interval	= get_rr_interval_ule,
	.update_curr		= update_curr_ule,
	.task_behind_better	= task_behind_better_ule,
	.pluggable		= &ule_pluggable,
#ifdef CONFIG_UCLAMP_TASK
	/* ULE's utilisation feeds schedutil, so task clamps apply as under CFS. */
	.uclamp_enabled		= 1,
#endif
};

static const char *const ule_runq_names[] = {
	[ULE_RUNQ_NONE] = "running",
	[ULE_RUNQ_REALTIME] = "realtime",
	[ULE_RUNQ_TIMESHARE] = "timeshare",
	[ULE_RUNQ_IDLE] = "idle",
};

/* The queue a priority belongs to, whether or not the task is queued. */
static const char *ule_queue_name(unsigned int prio)
{
	return ule_runq_names[ule_runq_for(prio)];
}

/* ULE lines of /proc/<pid>/sched. */
static void ule_proc_show_task(struct task_struct *p, struct seq_file *m)
{
	struct sched_ule_entity *ue = &p->ule;
	u64 window = ule_since(ue->pct_last, ue->pct_first);

	seq_printf(m, "%-45s:%21u\n", "ule.prio", ue->prio);
	seq_printf(m, "%-45s:%21u\n", "ule.score", ule_score(p));
	seq_printf(m, "%-45s:%21s\n", "ule.queue", ule_queue_name(ue->prio));
	seq_printf(m, "%-45s:%21llu\n", "ule.slice_us",
		   div_u64(ule_since(ule_slice(), ue->slice_used), NSEC_PER_USEC));
	seq_printf(m, "%-45s:%21llu\n", "ule.runtime_us", div_u64(ue->runtime, NSEC_PER_USEC));
	seq_printf(m, "%-45s:%21llu\n", "ule.slptime_us", div_u64(ue->slptime, NSEC_PER_USEC));
	seq_printf(m, "%-45s:%21llu\n", "ule.cpu_pct",
		   window ? div64_u64(ue->pct_run * 100, max_t(u64, window, NSEC_PER_SEC)) : 0);
}

/*
 * A new slice also sets the minimum slice, as FreeBSD's kern.sched.quantum
 * does; sched_ule_slice_min_us may be set on its own after it.
 */
static int ule_slice_sysctl(struct ctl_table *table, int write, void *buffer,
			    size_t *lenp, loff_t *ppos)
{
	static DEFINE_MUTEX(slice_mutex);
	int ret;

	mutex_lock(&slice_mutex);
	ret = sched_class_dointvec_minmax(table, write, buffer, lenp, ppos);
	if (!ret && write)
		WRITE_ONCE(sysctl_sched_ule_slice_min_us,
			   ule_slice_min_of(READ_ONCE(sysctl_sched_ule_slice_us)));
	mutex_unlock(&slice_mutex);
	return ret;
}

#ifdef CONFIG_SMP
static int ule_balance_sysctl(struct ctl_table *table, int write, void *buffer,
			      size_t *lenp, loff_t *ppos)
{
	static DEFINE_MUTEX(balance_mutex);
	int ret;

	mutex_lock(&balance_mutex);
	ret = sched_class_dointvec_minmax(table, write, buffer, lenp, ppos);
	if (!ret && write)
		ule_balance_interval_changed();
	mutex_unlock(&balance_mutex);
	return ret;
}
#endif

static int ule_interact_max = ULE_INTERACT_MAX;
static int ule_prio_max = ULE_PRI_MAX_IDLE;
static int ule_slice_us_min = 1000;
static int ule_slice_us_max = 1000000;
#ifdef CONFIG_SMP
static int ule_int_max = INT_MAX;
static int ule_balance_ms_min = 10;
static int ule_balance_ms_max = 60000;
#endif

static struct ctl_table ule_sysctls[] = {
	SCHED_CLASS_KNOB("sched_ule_interact", sysctl_sched_ule_interact,
			 SYSCTL_ZERO, &ule_interact_max, sched_class_dointvec_minmax),
	SCHED_CLASS_KNOB("sched_ule_slice_us", sysctl_sched_ule_slice_us,
			 &ule_slice_us_min, &ule_slice_us_max, ule_slice_sysctl),
	SCHED_CLASS_KNOB("sched_ule_slice_min_us", sysctl_sched_ule_slice_min_us,
			 SYSCTL_ONE, &ule_slice_us_max, sched_class_dointvec_minmax),
	SCHED_CLASS_KNOB("sched_ule_wakeup_gran_us", sysctl_sched_ule_wakeup_gran_us,
			 SYSCTL_ZERO, &ule_slice_us_max, sched_class_dointvec_minmax),
	SCHED_CLASS_KNOB("sched_ule_strict", sysctl_sched_ule_strict,
			 SYSCTL_ZERO, SYSCTL_ONE, sched_class_dointvec_minmax),
	SCHED_CLASS_KNOB("sched_ule_preempt_thresh", sysctl_sched_ule_preempt_thresh,
			 SYSCTL_ZERO, &ule_prio_max, sched_class_dointvec_minmax),
#ifdef CONFIG_SMP
	SCHED_CLASS_KNOB("sched_ule_balance_interval_ms", sysctl_sched_ule_balance_interval_ms,
			 &ule_balance_ms_min, &ule_balance_ms_max, ule_balance_sysctl),
	SCHED_CLASS_KNOB("sched_ule_steal_thresh", sysctl_sched_ule_steal_thresh,
			 SYSCTL_ZERO, &ule_int_max, sched_class_dointvec_minmax),
	SCHED_CLASS_KNOB("sched_ule_always_steal", sysctl_sched_ule_always_steal,
			 SYSCTL_ZERO, SYSCTL_ONE, sched_class_dointvec_minmax),
#endif
	{}
};

/*
 * The periodic balancer runs while ULE is the normal class: from boot, or
 * from a switch through kernel.sched_class (serialised by its caller).
 */
static void ule_normal_class_changed(void)
{
#ifdef CONFIG_SMP
	if (sched_class_is_normal(&ule_sched_class))
		mod_timer(&ule_balance_timer, jiffies + ule_balance_delay());
	else
		del_timer_sync(&ule_balance_timer);
#endif
}

/* Tunables exist whenever ULE is built: the class can be chosen at run time. */
static int __init ule_late_init(void)
{
	sysctl_sched_ule_wakeup_gran_us = sysctl_sched_wakeup_granularity / NSEC_PER_USEC;
	register_sysctl_init("kernel", ule_sysctls);
	ule_normal_class_changed();
	return 0;
}
late_initcall(ule_late_init);

#ifdef CONFIG_SCHED_ULE_KUNIT_TEST
#include "ule_test.c"
#endif
