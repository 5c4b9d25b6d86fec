/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Mechanism shared by the classes that can run normal tasks instead of
 * CFS (ULE, BMQ, MuQSS); policy stays in each class.
 */
#ifndef _KERNEL_SCHED_CLASS_COMMON_H
#define _KERNEL_SCHED_CLASS_COMMON_H

#include <linux/printk.h>
#include <linux/sysctl.h>
#include <linux/task_work.h>

/*
 * Have @fn run as @p, the current task, returns to user space, unless it
 * is already queued (*@queued, which @fn clears first): how a class ends
 * the boost of a task preempted in kernel code. False if it cannot run
 * there (a kernel thread, an exiting task).
 */
static inline bool sched_queue_resume(struct task_struct *p, struct callback_head *work,
				      bool *queued, task_work_func_t fn)
{
	if (p->flags & PF_KTHREAD)
		return false;
	if (READ_ONCE(*queued))
		return true;
	init_task_work(work, fn);
	if (task_work_add(p, work, TWA_RESUME))
		return false;
	WRITE_ONCE(*queued, true);
	return true;
}

/*
 * proc_dointvec_minmax() for a class's integer knobs (extra1 and extra2
 * its bounds), with one line that says what a refused write may be:
 * EINVAL alone does not.
 */
static inline int sched_class_dointvec_minmax(struct ctl_table *table, int write,
					      void *buffer, size_t *lenp, loff_t *ppos)
{
	int ret = proc_dointvec_minmax(table, write, buffer, lenp, ppos);

	if (write && ret == -EINVAL)
		pr_warn_ratelimited("sched: kernel.%s takes an integer from %d to %d\n",
				    table->procname, *(int *)table->extra1,
				    *(int *)table->extra2);
	return ret;
}

/*
 * An integer knob of /proc/sys/kernel bounded by *@min and *@max, which
 * @handler (usually sched_class_dointvec_minmax()) enforces.
 */
#define SCHED_CLASS_KNOB(name, var, min, max, handler)			\
	{								\
		.procname	= (name),				\
		.data		= &(var),				\
		.maxlen		= sizeof(var),				\
		.mode		= 0644,					\
		.proc_handler	= (handler),				\
		.extra1		= (min),				\
		.extra2		= (max),				\
	}

/* @class runs normal tasks now (it may change at any time after). */
static inline bool sched_class_is_normal(const struct sched_class *class)
{
	return READ_ONCE(sched_normal_class) == class;
}

/* A task of a class above the normal ones is runnable here and will be picked. */
static inline bool sched_class_above_runnable(struct rq *rq)
{
	return sched_stop_runnable(rq) || sched_dl_runnable(rq) || sched_rt_runnable(rq);
}

/*
 * Charge @rq's current task, if @class runs it, for the time since it
 * started or was last charged: exec_max, the runtime tracepoint, its
 * cputime and its cgroup's, as update_curr_common() does in later
 * kernels. Returns the time charged, 0 if none.
 */
static inline u64 sched_class_update_curr(struct rq *rq, const struct sched_class *class)
{
	struct task_struct *curr = rq_curr_locked(rq);
	u64 now, delta;

	if (curr->sched_class != class)
		return 0;
	now = rq_clock_task(rq);
	delta = now - curr->se.exec_start;
	if (unlikely((s64)delta <= 0))
		return 0;
	schedstat_set(curr->stats.exec_max, max(curr->stats.exec_max, delta));
	trace_sched_stat_runtime(curr, delta, 0);
	update_current_exec_runtime(curr, now, delta);
	return delta;
}

/* available_idle_cpu() as a predicate for sched_class_core_idle(). */
static inline bool sched_class_cpu_idle(int cpu)
{
	return available_idle_cpu(cpu);
}

/* Every SMT sibling of @cpu (itself included) passes @idle. */
static __always_inline bool sched_class_core_idle(int cpu, bool (*idle)(int cpu))
{
#ifdef CONFIG_SCHED_SMT
	int sibling;

	for_each_cpu(sibling, cpu_smt_mask(cpu)) {
		if (!idle(sibling))
			return false;
	}
#endif
	return true;
}

/*
 * Every SMT sibling of @cpu is in @mask (always, without SMT): whether a
 * core is idle, asked of a mask of idle CPUs with bit operations only.
 */
static inline bool sched_class_core_in(int cpu, const struct cpumask *mask)
{
#ifdef CONFIG_SCHED_SMT
	return cpumask_subset(cpu_smt_mask(cpu), mask);
#else
	return true;
#endif
}

#if defined(CONFIG_SMP) && defined(CONFIG_SCHED_CLASS_SWITCH)
/*
 * The CPUs of @cpu's root domain with nothing of the normal pluggable
 * class to run, where placement looks first and kicks go. Root domains
 * are freed after an RCU grace period: the caller is an RCU reader or
 * holds @cpu's rq lock.
 */
static inline struct cpumask *sched_class_idle_mask(int cpu)
{
	return cpu_rq(cpu)->rd->pluggable_idle;
}

/* @rq found (@idle) or got work of the normal class. */
static inline void sched_class_mark_idle(struct rq *rq, bool idle)
{
	struct cpumask *mask = rq->rd->pluggable_idle;
	int cpu = cpu_of(rq);

	lockdep_assert_rq_held(rq);
	/* Test first: most calls change nothing, and a write bounces the line. */
	if (cpumask_test_cpu(cpu, mask) == idle)
		return;
	if (idle)
		cpumask_set_cpu(cpu, mask);
	else
		cpumask_clear_cpu(cpu, mask);
}

/*
 * @class's rq_online (@online) or rq_offline: @rq joins or leaves a root
 * domain, by hotplug or a cpuset change, and its idle mark moves with it.
 * Every pluggable class is told; only the normal one sets a mark.
 */
static inline void sched_class_rq_attach(struct rq *rq, const struct sched_class *class,
					 bool online)
{
	lockdep_assert_rq_held(rq);
	if (!online)
		sched_class_mark_idle(rq, false);
	else if (sched_class_is_normal(class))
		sched_class_mark_idle(rq, !class->pluggable->nr_tasks(rq));
}
#else
static inline void sched_class_mark_idle(struct rq *rq, bool idle) { }
#endif

#ifdef CONFIG_SMP
/*
 * Send @csd to @cpu unless one is in flight: @pending is set here and
 * cleared by the handler first. Returns whether it was sent.
 */
static inline bool sched_class_kick(int cpu, call_single_data_t *csd, atomic_t *pending)
{
	if (atomic_xchg(pending, 1))
		return false;
	smp_call_function_single_async(cpu, csd);
	return true;
}

/*
 * The CPUs of @idle other than @this, nearest first by sched domain, each
 * once: @kick each active one that @want accepts, until @kick has
 * returned true @budget times. Returns the budget left.
 *
 * Context: RCU reader.
 */
static __always_inline int sched_class_kick_near(int this, const struct cpumask *idle,
						 int budget, bool (*want)(int cpu, void *arg),
						 bool (*kick)(int cpu), void *arg)
{
	struct sched_domain *sd;
	int cpu;

	for_each_domain(this, sd) {
		for_each_cpu_and(cpu, sched_domain_span(sd), idle) {
			if (cpu == this || !cpu_active(cpu) ||
			    (sd->child && cpumask_test_cpu(cpu, sched_domain_span(sd->child))) ||
			    !want(cpu, arg))
				continue;
			if (kick(cpu) && --budget <= 0)
				return 0;
		}
	}
	return budget;
}
#endif /* CONFIG_SMP */

#ifdef CONFIG_SCHED_HRTICK
/* @rq goes idle: its slice timer has nothing left to end. */
static inline void sched_class_hrtick_cancel(struct rq *rq)
{
	lockdep_assert_rq_held(rq);
	/* Not hrtimer_cancel(): the handler takes this rq's lock. */
	if (hrtimer_is_queued(&rq->hrtick_timer))
		hrtimer_try_to_cancel(&rq->hrtick_timer);
}
#else
static inline void sched_class_hrtick_cancel(struct rq *rq) { }
#endif

#endif /* _KERNEL_SCHED_CLASS_COMMON_H */
