// SPDX-License-Identifier: GPL-2.0
/*
 * BMQ: Alfred Chen's BitMap Queue scheduler (Project C) as a Linux
 * scheduling class for SCHED_NORMAL, SCHED_BATCH and SCHED_IDLE tasks,
 * selected with CONFIG_SCHED_DEFAULT_BMQ or "sched=bmq".
 * Documentation/scheduler/bmq.rst describes the design and lists where it
 * differs from Project C, which replaces the whole core scheduler.
 *
 * Per CPU, a bitmap of 27 levels with a FIFO per level; the running task
 * stays listed and the first task of the best level runs. A task's level
 * is its priority plus a boost that improves when it sleeps after a short
 * run or for long, and worsens each time it uses up a 4 ms slice. No
 * fairness, no load tracking: wakeups go to an idle core, an idle CPU or
 * a CPU running worse BMQ work, closest to where the task last ran, and a
 * CPU with nothing to run pulls waiting tasks from its neighbours.
 *
 * Built as part of build_policy.c.
 */

#include "class_common.h"

/* Slice length in ns: "sched_timeslice=2" halves it. */
static u64 bmq_slice_ns __read_mostly = (u64)BMQ_SLICE_DEFAULT_MS << BMQ_SLICE_SHIFT;

/* kernel.sched_bmq_yield_type: 0 no-op, 1 worst boost, 2 skip once. */
static int sysctl_sched_bmq_yield_type = 1;

/*
 * kernel.sched_bmq_wakeup_gran_us: CFS's 1 ms before its scaling by the
 * CPU count, which reaches BMQ's 4 ms slice at 8 CPUs. 0 is Project C.
 */
static int sysctl_sched_bmq_wakeup_gran_us = 1000;

/*
 * kernel.sched_bmq_kernel_boost: 1, a user task preempted in kernel code
 * waits at the level of the work that preempted it until it is back in
 * user space (bmq_kernel_level()); 0, Project C, where it waits at its
 * own level and a lock it holds may wait with it for good.
 */
static int sysctl_sched_bmq_kernel_boost = 1;

/* Entity flags. */
#define BMQ_F_LISTED	0x01	/* on a level list of its CPU */
#define BMQ_F_SLEPT	0x02	/* dequeued to sleep while running */
#define BMQ_F_SAVED	0x04	/* dequeued for a change, still listed */
#define BMQ_F_WOKEN	0x08	/* wakeup boost decided in select_task_rq() */
#define BMQ_F_KERNEL	0x10	/* preempted in kernel code, at kernel_level */

static int __init bmq_setup_timeslice(char *str)
{
	unsigned int ms;

	if (bmq_parse_timeslice(str, &ms)) {
		pr_warn("sched: sched_timeslice=%s: want 2 or 4 (ms), keeping %d\n",
			str ?: "", BMQ_SLICE_DEFAULT_MS);
		return 0;
	}
	bmq_slice_ns = (u64)ms << BMQ_SLICE_SHIFT;
	return 0;
}
early_param("sched_timeslice", bmq_setup_timeslice);

static inline bool bmq_task(struct task_struct *p)
{
	return p->sched_class == &bmq_sched_class;
}

static inline unsigned int bmq_task_level(struct task_struct *p)
{
	unsigned int level = bmq_level(p->prio, p->bmq.boost);

	if (p->bmq.flags & BMQ_F_KERNEL)
		return min_t(unsigned int, level, p->bmq.kernel_level);
	return level;
}

/* The best non-empty level: the next pick, and the CPU's watermark. */
static void bmq_update_prio(struct bmq_rq *bmq)
{
	unsigned long first = bmq->bitmap ? __ffs(bmq->bitmap) : BMQ_LEVELS;

	WRITE_ONCE(bmq->prio, first);
}

static void bmq_list_add(struct rq *rq, struct task_struct *p, bool head)
{
	struct bmq_rq *bmq = &rq->bmq;
	unsigned int level = bmq_task_level(p);

	lockdep_assert_rq_held(rq);
	p->bmq.level = level;
	if (head)
		list_add(&p->bmq.run_list, &bmq->queue[level]);
	else
		list_add_tail(&p->bmq.run_list, &bmq->queue[level]);
	__set_bit(level, &bmq->bitmap);
	p->bmq.flags |= BMQ_F_LISTED;
	bmq_update_prio(bmq);
}

static void bmq_list_del(struct rq *rq, struct task_struct *p)
{
	struct bmq_rq *bmq = &rq->bmq;

	lockdep_assert_rq_held(rq);
	list_del_init(&p->bmq.run_list);
	if (list_empty(&bmq->queue[p->bmq.level]))
		__clear_bit(p->bmq.level, &bmq->bitmap);
	p->bmq.flags &= ~BMQ_F_LISTED;
	bmq_update_prio(bmq);
}

/* Back at the tail of its (possibly new) level. */
static void bmq_requeue(struct rq *rq, struct task_struct *p)
{
	bmq_list_del(rq, p);
	bmq_list_add(rq, p, false);
}

static inline bool bmq_first_of_level(struct rq *rq, struct task_struct *p)
{
	return rq->bmq.queue[p->bmq.level].next == &p->bmq.run_list;
}

#ifdef CONFIG_SMP
/* CPUs with a BMQ task waiting (bmq_has_waiter()): idle CPUs pull there. */
static struct cpumask bmq_pending_mask;

static void bmq_kick_idle(struct rq *rq, int budget);
static void bmq_kick_smt(struct rq *rq);

static inline void bmq_set_pending(struct rq *rq)
{
	lockdep_assert_rq_held(rq);
	if (bmq_has_waiter(rq->bmq.nr, rq->nr_running)) {
		if (!cpumask_test_cpu(cpu_of(rq), &bmq_pending_mask))
			cpumask_set_cpu(cpu_of(rq), &bmq_pending_mask);
	} else if (cpumask_test_cpu(cpu_of(rq), &bmq_pending_mask)) {
		cpumask_clear_cpu(cpu_of(rq), &bmq_pending_mask);
	}
}

/* BMQ's utilisation is part of cpu_util_cfs(); tell schedutil it moved. */
static inline void bmq_update_util(struct rq *rq, int running)
{
	if (update_pluggable_rq_load_avg(rq_clock_pelt(rq), rq, running))
		cpufreq_update_util(rq, 0);
}
#else
static inline void bmq_set_pending(struct rq *rq) { }
static inline void bmq_update_util(struct rq *rq, int running) { }
static inline void bmq_kick_idle(struct rq *rq, int budget) { }
static inline void bmq_kick_smt(struct rq *rq) { }
#endif

#ifdef CONFIG_SCHED_HRTICK
/*
 * Expire the slice on time rather than at the next tick (sched_feat
 * HRTICK_BMQ, on by default as in Project C). Programming or
 * cancelling a timer at every switch and sleep cost more than the
 * scheduling (bmq.rst has the figures), so: a slice
 * that outlasts the next tick is left to that tick, which arms the hrtick
 * for the rest; a switch leaves it armed, and one due before the wanted
 * time plus BMQ_RESCHED_NS (what counts as a used-up slice anyway) stays.
 * Only a CPU going idle cancels it, so that it does not wake the CPU for
 * nothing. The core ignores it if it fires into another class's task
 * (hrtick_stale()).
 */
static void bmq_hrtick_start(struct rq *rq, struct task_struct *p)
{
	struct hrtimer *timer = &rq->hrtick_timer;
	s64 delay = max_t(s64, p->bmq.slice, BMQ_RESCHED_NS);
	u64 now = rq_clock(rq), tick = rq->bmq.next_tick;

	if (!sched_feat(HRTICK_BMQ) || !hrtick_enabled(rq) ||
	    (tick > now && now + delay > tick))
		return;
	if (hrtimer_is_queued(timer) &&
	    ktime_before(hrtimer_get_expires(timer),
			 ktime_add_ns(hrtimer_cb_get_time(timer), delay + BMQ_RESCHED_NS)))
		return;
	hrtick_start(rq, delay);
}

/* The tick after this one is due within TICK_NSEC. */
static inline void bmq_tick_seen(struct rq *rq)
{
	rq->bmq.next_tick = rq_clock(rq) + TICK_NSEC;
}
#else
static inline void bmq_hrtick_start(struct rq *rq, struct task_struct *p) { }
static inline void bmq_tick_seen(struct rq *rq) { }
#endif

/* Charge the running task's time to it and to its slice. */
static void update_curr_bmq(struct rq *rq)
{
	u64 delta = sched_class_update_curr(rq, &bmq_sched_class);

	if (delta)
		rq_curr_locked(rq)->bmq.slice -= delta;
}

/*
 * Project C's sched_task_ttwu(): the waker's CPU's task clock, as last
 * updated there, minus the task clock of the wakee's CPU when it last ran
 * (se.exec_start, updated by every accounting, as Project C's last_ran).
 * A stale or lagging clock makes the difference wrap, which counts as a
 * long sleep, as in Project C. Called with p->pi_lock held and @p off
 * every runqueue, or from its enqueue.
 */
static void bmq_ttwu_boost(struct task_struct *p)
{
	u64 now = READ_ONCE(this_rq()->clock_task);

	p->bmq.boost = bmq_wakeup_boost(p->bmq.boost, now - p->se.exec_start,
					bmq_slice_ns, p->policy);
}

static void enqueue_task_bmq(struct rq *rq, struct task_struct *p, int flags)
{
	struct sched_bmq_entity *be = &p->bmq;

	/* A task bound to one CPU is woken without select_task_rq(). */
	if ((flags & ENQUEUE_WAKEUP) && !(be->flags & BMQ_F_WOKEN))
		bmq_ttwu_boost(p);
	be->flags &= ~BMQ_F_WOKEN;
	if (be->flags & BMQ_F_SAVED) {
		SCHED_WARN_ON(!(flags & ENQUEUE_RESTORE));
		be->flags &= ~BMQ_F_SAVED;
		/* Project C requeues only a task whose level changed: at the tail. */
		if (bmq_task_level(p) != be->level)
			bmq_requeue(rq, p);
	} else {
		bmq_list_add(rq, p, false);
	}
	rq->bmq.nr++;
	if (p->nr_cpus_allowed > 1)
		rq->bmq.nr_movable++;
	add_nr_running(rq, 1);
	bmq_set_pending(rq);
	if (p->in_iowait)
		cpufreq_update_util(rq, SCHED_CPUFREQ_IOWAIT);
}

static void dequeue_task_bmq(struct rq *rq, struct task_struct *p, int flags)
{
	struct sched_bmq_entity *be = &p->bmq;
	bool curr = task_current(rq, p);

	if (curr)
		update_curr_bmq(rq);
	if ((flags & DEQUEUE_SLEEP) && curr) {
		be->boost = bmq_sleep_boost(be->boost, rq_clock(rq) - be->run_start,
					    bmq_slice_ns, p->policy);
		be->flags |= BMQ_F_SLEPT;
	}
	/* It left the CPU of its own accord: its kernel level ends. */
	if (flags & DEQUEUE_SLEEP)
		be->flags &= ~BMQ_F_KERNEL;
	if (rq->bmq.skip == p)
		rq->bmq.skip = NULL;
	/*
	 * A change of nice, policy, PI, affinity or group keeps the task's
	 * place in its list until enqueue_task() or switched_from_bmq()
	 * decides: nothing can pick from this queue before, as the rq lock
	 * is held from the dequeue until then.
	 */
	if (flags & DEQUEUE_SAVE) {
		SCHED_WARN_ON(be->flags & BMQ_F_SAVED);
		be->flags |= BMQ_F_SAVED;
	} else {
		bmq_list_del(rq, p);
	}
	rq->bmq.nr--;
	if (p->nr_cpus_allowed > 1)
		rq->bmq.nr_movable--;
	sub_nr_running(rq, 1);
	bmq_set_pending(rq);
}

static void yield_task_bmq(struct rq *rq)
{
	struct task_struct *curr = rq_curr_locked(rq);

	switch (READ_ONCE(sysctl_sched_bmq_yield_type)) {
	case 1:
		/*
		 * Worst boost, used from its next requeue on: the task keeps
		 * its place, so it runs on if it is still the first waiter.
		 */
		curr->bmq.boost = BMQ_MAX_ADJ;
		break;
	case 2:
		if (rq->bmq.nr > 1)
			rq->bmq.skip = curr;
		break;
	}
}

/* Time @curr has run since it last got the CPU. */
static u64 bmq_ran_since_pick(struct task_struct *curr)
{
	return curr->se.sum_exec_runtime - curr->se.prev_sum_exec_runtime;
}

/*
 * Only a strictly better level preempts; equals wait their turn. The
 * preemption waits until the running task has had wakeup_gran on the CPU
 * since its pick, as CFS's wakeup granularity does; until then the tick
 * re-checks (a timer per deferral cost more timer interrupts than the
 * switches it saved). Without it, each message of a pipe or socket load
 * wakes a receiver one level better that preempts the sender at once.
 */
static void bmq_preempt_after_gran(struct rq *rq, struct task_struct *curr)
{
	u64 gran = (u64)READ_ONCE(sysctl_sched_bmq_wakeup_gran_us) * NSEC_PER_USEC;

	if (bmq_ran_since_pick(curr) >= gran)
		resched_curr(rq);
}

static void check_preempt_curr_bmq(struct rq *rq, struct task_struct *p, int flags)
{
	struct task_struct *curr = rq_curr_locked(rq);

	if (!bmq_task(curr) || p->bmq.level >= curr->bmq.level)
		return;
	update_curr_bmq(rq);
	bmq_preempt_after_gran(rq, curr);
}

static void set_next_task_bmq(struct rq *rq, struct task_struct *p, bool first)
{
	p->se.exec_start = rq_clock_task(rq);
	/* A hog that sleeps just after a re-pick has not run briefly. */
	if (first) {
		bool repick = task_current(rq, p);

		if (!repick)
			p->se.prev_sum_exec_runtime = p->se.sum_exec_runtime;
		p->bmq.run_start = bmq_run_window(p->bmq.run_start, repick, rq_clock(rq));
	}
	sched_class_mark_idle(rq, false);
	bmq_set_pending(rq);	/* a higher class may have left */
	bmq_hrtick_start(rq, p);
	if (rq_curr_locked(rq)->sched_class != &bmq_sched_class)
		bmq_update_util(rq, 0);
}

/*
 * What this CPU runs next: the first task of the best level, the task
 * that yielded (skip) only if nothing else waits. No side effects, as a
 * pick_task().
 */
static struct task_struct *pick_task_bmq(struct rq *rq)
{
	struct bmq_rq *bmq = &rq->bmq;
	struct task_struct *skip = bmq->skip, *p;
	unsigned long level;

	lockdep_assert_rq_held(rq);
	for_each_set_bit(level, &bmq->bitmap, BMQ_LEVELS) {
		list_for_each_entry(p, &bmq->queue[level], bmq.run_list) {
			if (p != skip && !sched_stall_injected(p))
				return p;
		}
	}
	if (skip && !sched_stall_injected(skip))
		return skip;
	return NULL;
}

static struct task_struct *pick_next_task_bmq(struct rq *rq)
{
	struct task_struct *p = pick_task_bmq(rq);

	/* A yield skips one pick. */
	rq->bmq.skip = NULL;
	if (!p) {
		sched_class_mark_idle(rq, true);
		sched_class_hrtick_cancel(rq);
		return NULL;
	}
	set_next_task_bmq(rq, p, true);
	return p;
}

/* A slice ran out: a fresh one, and worse boost if it stays queued. */
static void bmq_expire(struct rq *rq, struct task_struct *p)
{
	p->bmq.slice = bmq_slice_ns;
	p->bmq.boost = bmq_expire_boost(p->bmq.boost, p->bmq.flags & BMQ_F_LISTED);
	if (p->bmq.flags & BMQ_F_LISTED)
		bmq_requeue(rq, p);
}

/*
 * @p leaves its kernel level: back in user space, or out of the class.
 * Returns whether @p, running, now waits behind better work.
 */
static bool bmq_kernel_end(struct rq *rq, struct task_struct *p)
{
	struct sched_bmq_entity *be = &p->bmq;

	lockdep_assert_rq_held(rq);
	if (!(be->flags & BMQ_F_KERNEL))
		return false;
	be->flags &= ~BMQ_F_KERNEL;
	/* A saved task is placed by its ENQUEUE_RESTORE. */
	if ((be->flags & (BMQ_F_LISTED | BMQ_F_SAVED)) != BMQ_F_LISTED ||
	    bmq_task_level(p) == be->level)
		return false;
	bmq_requeue(rq, p);
	return task_current(rq, p) && rq->bmq.prio < be->level;
}

/*
 * On its way back to user space @p, the current task, leaves its kernel
 * level, and the CPU too if better work waits: by a switch of its own, as
 * ULE's, so that the switch is not a preemption in kernel code that
 * would give the level back.
 *
 * Context: task_work of @p; no lock held.
 */
static void bmq_resume_work(struct callback_head *work)
{
	struct task_struct *p = container_of(work, struct task_struct, bmq.resume_work);
	bool switch_now = false;
	struct rq_flags rf;
	struct rq *rq;

	WRITE_ONCE(p->bmq.resume_queued, false);
	rq = task_rq_lock(p, &rf);
	if (bmq_task(p))
		switch_now = bmq_kernel_end(rq, p);
	task_rq_unlock(rq, p, &rf);
	if (switch_now)
		schedule();
}

/*
 * @p, the user task being switched out, was preempted in kernel code and
 * waits: it waits at bmq_kernel_level() until it is back in user space
 * or sleeps, so that a lock it holds does not wait with it for good.
 */
static void bmq_preempted_in_kernel(struct rq *rq, struct task_struct *p)
{
	struct sched_bmq_entity *be = &p->bmq;
	unsigned int level = bmq_kernel_level(be->level, rq->bmq.prio);

	lockdep_assert_rq_held(rq);
	if (!READ_ONCE(sysctl_sched_bmq_kernel_boost) || level == be->level || p != current ||
	    !sched_queue_resume(p, &be->resume_work, &be->resume_queued, bmq_resume_work))
		return;
	be->kernel_level = level;
	be->flags |= BMQ_F_KERNEL;
	bmq_requeue(rq, p);
}

/*
 * RT or DL holds @rq's CPU above its waiting BMQ tasks: no BMQ tick runs
 * here until they leave, so wake idle CPUs now to take the BMQ tasks
 * (Project C's idle CPUs find such a CPU pending the next time they
 * schedule).
 */
static void bmq_kick_behind_rt_dl(struct rq *rq)
{
	lockdep_assert_rq_held(rq);
	if (!sched_rt_runnable(rq) && !sched_dl_runnable(rq))
		return;
	bmq_set_pending(rq);
	bmq_kick_idle(rq, min(rq->bmq.nr, rq->bmq.nr_movable));
}

static void put_prev_task_bmq(struct rq *rq, struct task_struct *p)
{
	/* A task saved for a change is neither expired nor requeued. */
	bool waits = (p->bmq.flags & (BMQ_F_LISTED | BMQ_F_SAVED)) == BMQ_F_LISTED;

	update_curr_bmq(rq);
	bmq_update_util(rq, 1);
	if ((waits || (p->bmq.flags & BMQ_F_SLEPT)) && p->bmq.slice < BMQ_RESCHED_NS)
		bmq_expire(rq, p);
	p->bmq.flags &= ~BMQ_F_SLEPT;
	if (waits && rq->sched_kernel_preempt)
		bmq_preempted_in_kernel(rq, p);
	if (waits)
		bmq_kick_behind_rt_dl(rq);
}

/*
 * Tick, and the hrtick with @queued set. The expiry itself is in put_prev.
 *
 * Context: hardirq, @rq locked.
 */
static void task_tick_bmq(struct rq *rq, struct task_struct *p, int queued)
{
	update_curr_bmq(rq);
	bmq_update_util(rq, 1);
	if (!queued)
		bmq_tick_seen(rq);
	if (p->bmq.slice < BMQ_RESCHED_NS) {
		resched_curr(rq);
	} else {
		if (rq->bmq.prio < p->bmq.level)
			bmq_preempt_after_gran(rq, p);
		bmq_hrtick_start(rq, p);
	}
	if (!queued) {
		bmq_kick_idle(rq, min(rq->bmq.nr - 1, rq->bmq.nr_movable));
		bmq_kick_smt(rq);
	}
}

/*
 * Fork: the child starts at the worst boost and with half the parent's
 * remaining slice, so forking does not buy CPU time.
 */
static void task_fork_bmq(struct task_struct *p)
{
	struct task_struct *parent = current;
	struct rq_flags rf;
	struct rq *rq;

	p->bmq.boost = BMQ_MAX_ADJ;
	p->bmq.slice = bmq_slice_ns;
	rq = this_rq();
	rq_lock(rq, &rf);
	update_rq_clock(rq);
	if (bmq_task(parent)) {
		update_curr_bmq(rq);
		if (bmq_fork_split(&parent->bmq.slice, &p->bmq.slice, bmq_slice_ns))
			resched_curr(rq);
		else
			bmq_hrtick_start(rq, parent);
	}
	rq_unlock(rq, &rf);
}

/*
 * Nice or PI changed p->prio; enqueue_task() has moved it if its level
 * changed. A running task that is no longer first yields at once, as in
 * Project C: it may have gone to the tail of an occupied level.
 */
static void prio_changed_bmq(struct rq *rq, struct task_struct *p, int oldprio)
{
	if (!task_on_rq_queued(p))
		return;
	if (task_current(rq, p)) {
		if (rq->bmq.prio < p->bmq.level || !bmq_first_of_level(rq, p))
			resched_curr(rq);
	} else {
		check_preempt_curr_bmq(rq, p, 0);
	}
}

static void switched_to_bmq(struct rq *rq, struct task_struct *p)
{
	if (p->bmq.slice < BMQ_RESCHED_NS)
		p->bmq.slice = bmq_slice_ns;
	if (!task_on_rq_queued(p) || task_current(rq, p))
		return;
	if (!bmq_task(rq_curr_locked(rq)))
		resched_curr(rq);
	else
		check_preempt_curr_bmq(rq, p, 0);
}

static void switched_from_bmq(struct rq *rq, struct task_struct *p)
{
	/* Saved on its way out of the class: no ENQUEUE_RESTORE here follows. */
	if (p->bmq.flags & BMQ_F_SAVED) {
		p->bmq.flags &= ~BMQ_F_SAVED;
		bmq_list_del(rq, p);
	}
	p->bmq.flags &= ~BMQ_F_KERNEL;
	/*
	 * The running task became RT or DL (sched_setscheduler(), a PI boost):
	 * no BMQ task was preempted, so put_prev_task_bmq() told no idle CPU
	 * about the ones that now wait behind it.
	 */
	if (task_current(rq, p) && rq->bmq.nr)
		bmq_kick_behind_rt_dl(rq);
}

/*
 * Project C reports the slice in ns; the class interface counts jiffies,
 * so the nearest, and at least one: 0 would read as no limit at all.
 */
static unsigned int get_rr_interval_bmq(struct rq *rq, struct task_struct *task)
{
	return max_t(u64, 1, DIV_ROUND_CLOSEST_ULL(bmq_slice_ns, TICK_NSEC));
}

#ifdef CONFIG_SMP
static void bmq_pull_ipi(void *info);
static int bmq_active_balance_stop(void *data);
#endif

static void bmq_init_rq(struct rq *rq)
{
	struct bmq_rq *bmq = &rq->bmq;
	int i;

	for (i = 0; i < BMQ_LEVELS; i++)
		INIT_LIST_HEAD(&bmq->queue[i]);
	bmq->bitmap = 0;
	bmq->prio = BMQ_LEVELS;
#ifdef CONFIG_SMP
	INIT_CSD(&bmq->pull_csd, bmq_pull_ipi, rq);
#endif
}

/* A new task (from __sched_fork()): a full slice at the worst boost. */
static void bmq_init_task(struct task_struct *p)
{
	INIT_LIST_HEAD(&p->bmq.run_list);
	p->bmq.slice = bmq_slice_ns;
	p->bmq.boost = BMQ_MAX_ADJ;
	p->bmq.flags = 0;
	p->bmq.resume_queued = false;
}

#ifdef CONFIG_SMP
/* Per-CPU scratch masks for placement, which runs with interrupts off. */
static DEFINE_PER_CPU(struct cpumask, bmq_idle_cpus);
static DEFINE_PER_CPU(struct cpumask, bmq_cand_cpus);
static DEFINE_PER_CPU(struct cpumask, bmq_kick_mask);

static bool bmq_idle_cpu(int cpu)
{
	sched_ev_seen_cpu(cpu);
	if (available_idle_cpu(cpu))
		return true;
	return false;
}

/*
 * The CPU of @mask closest to @prev: @prev itself, then the first CPU of
 * each wider sched domain of @prev, then the first of @mask.
 */
static int bmq_closest(int prev, const struct cpumask *mask)
{
	struct sched_domain *sd;
	int cpu;

	if (cpumask_test_cpu(prev, mask))
		return prev;
	for_each_domain(prev, sd) {
		cpu = cpumask_first_and(sched_domain_span(sd), mask);
		if (cpu < nr_cpu_ids)
			return cpu;
	}
	return cpumask_first(mask);
}

/*
 * @cpu runs nothing of ours, or BMQ work no better than @level: a task of
 * @level preempts it, or waits only behind equals (bmq_wake_target()).
 */
static bool bmq_wake_target_cpu(int cpu, unsigned int level)
{
	struct rq *rq = cpu_rq(cpu);
	/* Lockless: callers run with preemption off, an RCU-sched reader. */
	struct task_struct *curr = rcu_dereference_sched(rq->curr);

	sched_ev_seen_cpu(cpu);
	if (READ_ONCE(rq->rt.rt_nr_running) || READ_ONCE(rq->dl.dl_nr_running))
		return false;
	if (curr->sched_class != &bmq_sched_class && curr != rq->idle)
		return false;
	return bmq_wake_target(READ_ONCE(rq->bmq.prio), level);
}

/*
 * The CPU of @mask closest to @prev that is idle indeed (with its SMT
 * siblings, if @core). @mask holds CPUs marked idle, so a try costs one
 * remote read; a stale mark is dropped from @mask and the next one tried.
 */
static int bmq_closest_idle(int prev, struct cpumask *mask, bool core)
{
	while (!cpumask_empty(mask)) {
		int cpu = bmq_closest(prev, mask);

		if (bmq_idle_cpu(cpu) &&
		    (!core || sched_class_core_idle(cpu, sched_class_cpu_idle)))
			return cpu;
		__cpumask_clear_cpu(cpu, mask);
	}
	return -1;
}

/*
 * Project C's select_task_rq(): an idle core, else an idle CPU, else a
 * CPU whose BMQ work is no better than the task (@prev first, then within
 * the last-level cache of @prev, to bound the cost), else @prev or the
 * closest allowed CPU. Idle
 * candidates come from the idle mask by bit operations, as Project C's
 * idle masks do; only the chosen ones are read.
 */
static int bmq_select_cpu(struct task_struct *p, int prev)
{
	struct cpumask *idle = this_cpu_ptr(&bmq_idle_cpus);
	struct cpumask *cand = this_cpu_ptr(&bmq_cand_cpus);
	const struct cpumask *hint = sched_class_idle_mask(prev);
	unsigned int level = bmq_task_level(p);
	struct sched_domain *sd;
	int cpu;

	if (!cpumask_and(cand, p->cpus_ptr, cpu_active_mask))
		return prev;
	if (cpumask_and(idle, cand, hint)) {
		if (sched_smt_active()) {
			cpumask_clear(cand);
			for_each_cpu(cpu, idle) {
				if (sched_class_core_in(cpu, hint))
					__cpumask_set_cpu(cpu, cand);
			}
			cpu = bmq_closest_idle(prev, cand, true);
			if (cpu >= 0)
				return cpu;
		}
		cpu = bmq_closest_idle(prev, idle, false);
		if (cpu >= 0)
			return cpu;
		cpumask_and(cand, p->cpus_ptr, cpu_active_mask);
	}
	if (cpumask_test_cpu(prev, cand) && bmq_wake_target_cpu(prev, level))
		return prev;
	sd = rcu_dereference(per_cpu(sd_llc, prev));
	if (sd) {
		for_each_cpu_and(cpu, sched_domain_span(sd), cand) {
			if (cpu != prev && bmq_wake_target_cpu(cpu, level))
				return cpu;
		}
	}
	return bmq_closest(prev, cand);
}

static int select_task_rq_bmq(struct task_struct *p, int prev, int wake_flags)
{
	int cpu;

	/* Project C does no exec balancing: sched_exec() leaves the task. */
	if (wake_flags & WF_EXEC)
		return prev;
	if (wake_flags & WF_TTWU) {
		bmq_ttwu_boost(p);
		p->bmq.flags |= BMQ_F_WOKEN;
	}
	rcu_read_lock();
	cpu = sched_ev_search(SCHED_EV_BMQ_SELECT, p->pid, bmq_select_cpu(p, prev));
	rcu_read_unlock();
	return cpu;
}

static bool bmq_may_pull(struct rq *src, struct task_struct *p, int cpu)
{
	return !is_migration_disabled(p) && cpumask_test_cpu(cpu, p->cpus_ptr);
}

/*
 * Take up to half of @src's tasks (at most sysctl_sched_nr_migrate),
 * best levels first, onto @dst. Both locked, clocks updated.
 */
static int bmq_pull_from(struct rq *src, struct rq *dst)
{
	int budget = bmq_pull_budget(src->nr_running, sysctl_sched_nr_migrate);
	struct task_struct *p, *n;
	unsigned long level;
	int moved = 0;

	lockdep_assert_rq_held(src);
	lockdep_assert_rq_held(dst);
	for_each_set_bit(level, &src->bmq.bitmap, BMQ_LEVELS) {
		list_for_each_entry_safe(p, n, &src->bmq.queue[level], bmq.run_list) {
			/* The running task is listed but costs no try. */
			if (task_on_cpu(src, p))
				continue;
			if (budget-- <= 0)
				return moved;
			if (!bmq_may_pull(src, p, cpu_of(dst)))
				continue;
			deactivate_task(src, p, DEQUEUE_NOCLOCK);
			set_task_cpu_reason(p, cpu_of(dst), SCHED_MIGRATE_IDLE_BALANCE);
			activate_task(dst, p, ENQUEUE_NOCLOCK);
			moved++;
		}
	}
	return moved;
}

/*
 * An idle CPU pulls from a CPU with waiting tasks, nearest first, and
 * stops at the first that gave any (returned, or -1; *@moved tasks).
 * Everything is rechecked under both locks.
 *
 * Context: balance() or the pull IPI, IRQs off, @this_rq locked and
 * unpinned; double_lock_balance() may drop and retake that lock.
 */
static int bmq_idle_pull(struct rq *this_rq, int *moved)
{
	int this_cpu = cpu_of(this_rq), cpu;
	struct sched_domain *sd;

	lockdep_assert_rq_held(this_rq);
	*moved = 0;
	if (!cpu_active(this_cpu) || cpumask_empty(&bmq_pending_mask))
		return -1;
	rcu_read_lock();
	for_each_domain(this_cpu, sd) {
		for_each_cpu_and(cpu, sched_domain_span(sd), &bmq_pending_mask) {
			struct rq *src = cpu_rq(cpu);

			sched_ev_seen_cpu(cpu);
			if (cpu == this_cpu ||
			    !bmq_has_waiter(READ_ONCE(src->bmq.nr), READ_ONCE(src->nr_running)))
				continue;
			double_lock_balance(this_rq, src);
			if (!this_rq->bmq.nr && bmq_has_waiter(src->bmq.nr, src->nr_running)) {
				/* double_lock_balance() marked both clocks stale. */
				update_rq_clock(this_rq);
				update_rq_clock(src);
				*moved = bmq_pull_from(src, this_rq);
			}
			double_unlock_balance(this_rq, src);
			if (*moved)
				goto out;
			if (this_rq->bmq.nr) {
				cpu = -1;
				goto out;
			}
		}
	}
	cpu = -1;
out:
	rcu_read_unlock();
	return cpu;
}

/* Tasks pulled onto @this_rq; the search is a cpus_considered event. */
static int bmq_pull(struct rq *this_rq)
{
	int moved;

	sched_ev_search(SCHED_EV_BMQ_PULL, cpu_of(this_rq), bmq_idle_pull(this_rq, &moved));
	return moved;
}

/*
 * The CPUs of @sd that its child domain does not span: scanning domain by
 * domain from the smallest visits the nearest CPUs first, each once.
 */
static inline bool bmq_new_in_domain(struct sched_domain *sd, int cpu)
{
	return !sd->child || !cpumask_test_cpu(cpu, sched_domain_span(sd->child));
}

/*
 * Whether every sibling of @cpu's core runs one BMQ task, and if so have
 * the stopper of @cpu move its task to @dst_cpu. Returns whether it will.
 */
static bool bmq_smt_take(int dst_cpu, int cpu)
{
	struct rq *src = cpu_rq(cpu);
	struct task_struct *p;
	struct rq_flags rf;
	int sibling;

	if (cpumask_weight(cpu_smt_mask(cpu)) < 2)
		return false;
	for_each_cpu(sibling, cpu_smt_mask(cpu)) {
		if (READ_ONCE(cpu_rq(sibling)->bmq.nr) != 1 || available_idle_cpu(sibling))
			return false;
	}
	rq_lock_irqsave(src, &rf);
	p = rq_curr_locked(src);
	if (!bmq_task(p) || src->bmq.nr != 1 || src->bmq.active_balance ||
	    is_migration_disabled(p) || !cpumask_test_cpu(dst_cpu, p->cpus_ptr)) {
		rq_unlock_irqrestore(src, &rf);
		return false;
	}
	src->bmq.active_balance = 1;
	src->bmq.active_dst = dst_cpu;
	get_task_struct(p);
	src->bmq.active_task = p;
	rq_unlock_irqrestore(src, &rf);
	/* Never wake a stopper under an rq lock. */
	if (!stop_one_cpu_nowait(cpu, bmq_active_balance_stop, src, &src->bmq.active_work)) {
		WRITE_ONCE(src->bmq.active_balance, 0);
		put_task_struct(p);
	}
	return true;
}

/*
 * SMT active balance: @this_rq's core is idle while another core has
 * every sibling busy with one BMQ task each; the stopper of one of them
 * moves its task here. The nearest such core first, then wider up to the
 * whole machine, as Project C looks at every online CPU.
 *
 * Context: the pull IPI (hardirq), no rq lock held; takes the source's.
 */
static void bmq_smt_balance(struct rq *this_rq)
{
	int this_cpu = cpu_of(this_rq), cpu;
	struct sched_domain *sd;

	if (!sched_smt_active() || !sched_class_core_idle(this_cpu, sched_class_cpu_idle))
		return;
	rcu_read_lock();
	for_each_domain(this_cpu, sd) {
		for_each_cpu(cpu, sched_domain_span(sd)) {
			if (!bmq_new_in_domain(sd, cpu) ||
			    cpumask_test_cpu(cpu, cpu_smt_mask(this_cpu)))
				continue;
			if (bmq_smt_take(this_cpu, cpu))
				goto out;
		}
	}
out:
	rcu_read_unlock();
}

/*
 * Move the recorded task if nothing changed.
 *
 * Context: stopper of the busy CPU, no lock held; takes both rq locks in
 * turn.
 */
static int bmq_active_balance_stop(void *data)
{
	struct rq *src = data, *dst;
	struct task_struct *p;
	struct rq_flags rf;
	int dst_cpu;

	rq_lock_irq(src, &rf);
	p = src->bmq.active_task;
	dst_cpu = src->bmq.active_dst;
	src->bmq.active_task = NULL;
	dst = cpu_rq(dst_cpu);
	if (task_rq(p) != src || !task_on_rq_queued(p) || !bmq_task(p) ||
	    is_migration_disabled(p) || !cpumask_test_cpu(dst_cpu, p->cpus_ptr) ||
	    !cpu_active(dst_cpu) || !available_idle_cpu(dst_cpu)) {
		src->bmq.active_balance = 0;
		rq_unlock_irq(src, &rf);
		put_task_struct(p);
		return 0;
	}
	update_rq_clock(src);
	deactivate_task(src, p, DEQUEUE_NOCLOCK);
	set_task_cpu_reason(p, dst_cpu, SCHED_MIGRATE_ACTIVE_BALANCE);
	src->bmq.active_balance = 0;
	rq_unlock(src, &rf);

	rq_lock(dst, &rf);
	update_rq_clock(dst);
	activate_task(dst, p, ENQUEUE_NOCLOCK);
	check_preempt_curr(dst, p, 0);
	rq_unlock(dst, &rf);
	local_irq_enable();
	put_task_struct(p);
	return 0;
}

/*
 * A CPU whose tick finds waiting tasks wakes as many idle CPUs nearby;
 * each pulls for itself. Project C pulls only in __schedule(), which a
 * tickless idle Linux CPU does not pass through until woken.
 *
 * Context: hardirq on the idle CPU; takes its rq lock.
 */
static void bmq_pull_ipi(void *info)
{
	struct rq *rq = info;
	struct rq_flags rf;
	bool pulled = false;

	atomic_set(&rq->bmq.pull_kicked, 0);
	rq_lock(rq, &rf);
	if (!rq->bmq.nr && rq_curr_locked(rq) == rq->idle) {
		update_rq_clock(rq);
		rq_unpin_lock(rq, &rf);
		pulled = bmq_pull(rq) > 0;
		if (pulled)
			resched_curr(rq);
		rq_repin_lock(rq, &rf);
	}
	rq_unlock(rq, &rf);
	if (!pulled)
		bmq_smt_balance(rq);
}

/*
 * True whether or not an IPI went out: a CPU with one in flight pulls
 * too, so bmq_kick_idle()'s budget counts CPUs told.
 */
static bool bmq_kick_cpu(int cpu)
{
	struct rq *rq = cpu_rq(cpu);

	sched_class_kick(cpu, &rq->bmq.pull_csd, &rq->bmq.pull_kicked);
	return true;
}

/*
 * The CPUs that the waiting tasks a pull of @rq would try (the first
 * sysctl_sched_nr_migrate, in pull order) may run on: an idle CPU
 * outside them would be woken to pull nothing.
 */
static void bmq_wanted_cpus(struct rq *rq, struct cpumask *wanted)
{
	int budget = sysctl_sched_nr_migrate;
	struct task_struct *p;
	unsigned long level;

	lockdep_assert_rq_held(rq);
	cpumask_clear(wanted);
	for_each_set_bit(level, &rq->bmq.bitmap, BMQ_LEVELS) {
		list_for_each_entry(p, &rq->bmq.queue[level], bmq.run_list) {
			if (task_on_cpu(rq, p))
				continue;
			if (budget-- <= 0)
				return;
			if (p->nr_cpus_allowed > 1 && !is_migration_disabled(p))
				cpumask_or(wanted, wanted, p->cpus_ptr);
		}
	}
}

/* An idle CPU that a task bmq_kick_idle() counted may run on. */
static bool bmq_pull_wanted(int cpu, void *wanted)
{
	return cpumask_test_cpu(cpu, wanted) && available_idle_cpu(cpu);
}

/*
 * Wake up to @budget idle CPUs, nearest first, to pull from @rq; the
 * callers count only movable waiting tasks, and only CPUs one of them
 * may run on are woken.
 *
 * Context: @rq locked, from its tick or a switch.
 */
static void bmq_kick_idle(struct rq *rq, int budget)
{
	struct cpumask *wanted = this_cpu_ptr(&bmq_kick_mask);
	const struct cpumask *hint = sched_class_idle_mask(cpu_of(rq));

	if (budget <= 0 || cpumask_empty(hint))
		return;
	bmq_wanted_cpus(rq, wanted);
	if (!cpumask_intersects(wanted, hint))
		return;
	rcu_read_lock();
	sched_class_kick_near(cpu_of(rq), hint, budget, bmq_pull_wanted, bmq_kick_cpu, wanted);
	rcu_read_unlock();
}

/*
 * A CPU running one task beside a busy sibling, while a whole core that
 * task may run on idles: wake the nearest such core to take one of the
 * two over.
 */
static void bmq_kick_smt(struct rq *rq)
{
	const struct cpumask *hint = sched_class_idle_mask(cpu_of(rq));
	int this_cpu = cpu_of(rq), sibling, cpu;
	struct task_struct *curr = rq_curr_locked(rq);
	struct sched_domain *sd;

	if (!sched_smt_active() || rq->bmq.nr != 1 || cpumask_empty(hint) ||
	    !bmq_task(curr) || curr->nr_cpus_allowed == 1 || is_migration_disabled(curr))
		return;
	for_each_cpu(sibling, cpu_smt_mask(this_cpu)) {
		if (READ_ONCE(cpu_rq(sibling)->bmq.nr) != 1)
			return;
	}
	if (cpumask_weight(cpu_smt_mask(this_cpu)) < 2)
		return;
	rcu_read_lock();
	for_each_domain(this_cpu, sd) {
		for_each_cpu_and(cpu, sched_domain_span(sd), hint) {
			if (!bmq_new_in_domain(sd, cpu) || !cpumask_test_cpu(cpu, curr->cpus_ptr) ||
			    !cpu_active(cpu) || !sched_class_core_idle(cpu, sched_class_cpu_idle))
				continue;
			bmq_kick_cpu(cpu);
			goto out;
		}
	}
out:
	rcu_read_unlock();
}

/*
 * As in ULE: a CPU going idle under another normal class does not pull.
 *
 * Context: __schedule(), IRQs off, @rq locked and pinned; the pull unpins
 * it and may drop and retake it.
 */
static int balance_bmq(struct rq *rq, struct task_struct *prev, struct rq_flags *rf)
{
	if (!rq->bmq.nr && sched_class_is_normal(&bmq_sched_class)) {
		rq_unpin_lock(rq, rf);
		bmq_pull(rq);
		rq_repin_lock(rq, rf);
	}
	return sched_class_above_runnable(rq) || rq->bmq.nr;
}

/*
 * Every sched-domain rebuild (cpuset changes, hotplug elsewhere) takes each
 * runqueue offline and back: restore its pending bit too, or a CPU whose
 * tasks never block stays invisible to idle pulls.
 */
static void rq_online_bmq(struct rq *rq)
{
	bmq_set_pending(rq);
	sched_class_rq_attach(rq, &bmq_sched_class, true);
}

static void rq_offline_bmq(struct rq *rq)
{
	cpumask_clear_cpu(cpu_of(rq), &bmq_pending_mask);
	sched_class_rq_attach(rq, &bmq_sched_class, false);
}
#endif /* CONFIG_SMP */

/* Levels are strict: a better one on @rq, running or queued, goes first. */
static bool task_behind_better_bmq(struct rq *rq, struct task_struct *p)
{
	lockdep_assert_rq_held(rq);
	return (p->bmq.flags & BMQ_F_LISTED) && bmq_waits_behind(p->bmq.level, rq->bmq.prio);
}

static void bmq_proc_show_task(struct task_struct *p, struct seq_file *m);

static unsigned int bmq_nr_tasks(struct rq *rq)
{
	lockdep_assert_rq_held(rq);
	return rq->bmq.nr;
}

static const struct sched_pluggable_ops bmq_pluggable = {
	.name		= "bmq",
	.init_rq	= bmq_init_rq,
	.init_task	= bmq_init_task,
	.show_task	= bmq_proc_show_task,
	.nr_tasks	= bmq_nr_tasks,
	.hrtick_lingers	= true,
};

DEFINE_SCHED_CLASS(bmq) = {
	.enqueue_task		= enqueue_task_bmq,
	.dequeue_task		= dequeue_task_bmq,
	.yield_task		= yield_task_bmq,
	.check_preempt_curr	= check_preempt_curr_bmq,
	.pick_next_task		= pick_next_task_bmq,
	.put_prev_task		= put_prev_task_bmq,
	.set_next_task		= set_next_task_bmq,
#ifdef CONFIG_SMP
	.balance		= balance_bmq,
	.select_task_rq		= select_task_rq_bmq,
	.set_cpus_allowed	= set_cpus_allowed_common,
	.rq_online		= rq_online_bmq,
	.rq_offline		= rq_offline_bmq,
#endif
	.task_tick		= task_tick_bmq,
	.task_fork		= task_fork_bmq,
	.prio_changed		= prio_changed_bmq,
	.switched_from		= switched_from_bmq,
	.switched_to		= switched_to_bmq,
	.get_rr_interval	= get_rr_interval_bmq,
	.update_curr		= update_curr_bmq,
	.task_behind_better	= task_behind_better_bmq,
	.pluggable		= &bmq_pluggable,
};

/* BMQ lines of /proc/<pid>/sched. */
static void bmq_proc_show_task(struct task_struct *p, struct seq_file *m)
{
	struct sched_bmq_entity *be = &p->bmq;

	seq_printf(m, "%-45s:%21d\n", "bmq.boost", be->boost);
	seq_printf(m, "%-45s:%21u\n", "bmq.level", bmq_task_level(p));
	seq_printf(m, "%-45s:%21u\n", "bmq.static_level", bmq_level(p->static_prio, 0));
	seq_printf(m, "%-45s:%21lld\n", "bmq.slice_us", div_s64(be->slice, NSEC_PER_USEC));
	seq_printf(m, "%-45s:%21s\n", "bmq.queued", (be->flags & BMQ_F_LISTED) ? "yes" : "no");
}

static int bmq_yield_type_max = 2;
static int bmq_wakeup_gran_us_max = USEC_PER_SEC;

static struct ctl_table bmq_sysctls[] = {
	SCHED_CLASS_KNOB("sched_bmq_yield_type", sysctl_sched_bmq_yield_type,
			 SYSCTL_ZERO, &bmq_yield_type_max, sched_class_dointvec_minmax),
	SCHED_CLASS_KNOB("sched_bmq_kernel_boost", sysctl_sched_bmq_kernel_boost,
			 SYSCTL_ZERO, SYSCTL_ONE, sched_class_dointvec_minmax),
	SCHED_CLASS_KNOB("sched_bmq_wakeup_gran_us", sysctl_sched_bmq_wakeup_gran_us,
			 SYSCTL_ZERO, &bmq_wakeup_gran_us_max, sched_class_dointvec_minmax),
	{}
};

static int __init bmq_late_init(void)
{
	register_sysctl_init("kernel", bmq_sysctls);
	return 0;
}
late_initcall(bmq_late_init);

#ifdef CONFIG_SCHED_BMQ_KUNIT_TEST
#include "bmq_test.c"
#endif
