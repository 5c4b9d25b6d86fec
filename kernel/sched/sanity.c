// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler sanity checker: the invariant of "The Linux Scheduler: a Decade
 * of Wasted Cores" (EuroSys 2016, Algorithm 2). No CPU may stay idle while
 * another CPU has two or more runnable tasks of which a waiting one is
 * allowed to run on the idle CPU.
 *
 * Every interval (kernel.sched_sanity_interval_ms, 1 s) the checker looks
 * for idle CPUs and for waiting tasks elsewhere that could run on them. Such a
 * pair is looked at again kernel.sched_sanity_confirm_ms (100 ms) later; if
 * the CPU (or, once it took other work, another idle CPU the waiters may
 * use) is still idle and a task seen waiting the first time still waits,
 * the violation is confirmed: logged once, listed in /proc/sched_sanity, a
 * flight recording of sched events is frozen, and the pair is re-checked
 * every confirm interval until it no longer holds, so the report says how
 * long it lasted and why it ended.
 *
 * No scheduler fast path is touched: the checker reads runqueues from a
 * kthread worker of its own ("sched_sanity"), so when it is off (the
 * default) it costs nothing, and when on, interrupts are off only while it
 * holds one runqueue's lock to walk that runqueue.
 *
 * Locking: sanity_lock (a mutex) guards the watches, the reports and the
 * counters; runqueue locks nest inside it, one at a time. sanity_ctl_mutex
 * serialises switching the checker on and off.
 */
#include <linux/kthread.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched/clock.h>
#include <linux/sched/cputime.h>
#include <linux/sched/events.h>
#include <linux/sched/isolation.h>
#include <linux/seq_file.h>
#include <linux/sort.h>
#include <linux/sysctl.h>
#include <trace/events/sched_events.h>

#include "sched.h"
#include "class_common.h"

#define SANITY_MAX_WATCH	16	/* pairs followed at once */
#define SANITY_MAX_WAITERS	4	/* waiting tasks kept per report */
#define SANITY_MAX_REPORTS	64	/* newest reports kept */
#define SANITY_WALK_MAX		256	/* queued tasks looked at per runqueue */

enum sanity_end {
	SANITY_ONGOING,
	SANITY_END_MIGRATED,	/* a task of the busy CPU was moved elsewhere */
	SANITY_END_EXITED,	/* the waiting tasks exited */
	SANITY_END_SLEPT,	/* the waiting tasks blocked */
	SANITY_END_RAN,		/* they ran where they were; no waiter left */
	SANITY_END_IDLE_BUSY,	/* the idle CPU took other work; no other could */
	SANITY_END_OFF,		/* the checker was switched off */
};

static const char * const sanity_end_names[] = {
	[SANITY_ONGOING]	= "ongoing",
	[SANITY_END_MIGRATED]	= "migrated",
	[SANITY_END_EXITED]	= "exited",
	[SANITY_END_SLEPT]	= "slept",
	[SANITY_END_RAN]	= "ran",
	[SANITY_END_IDLE_BUSY]	= "idle-cpu-busy",
	[SANITY_END_OFF]	= "checker-off",
};

struct sanity_waiter {
	pid_t pid;		/* in the initial pid namespace */
	u64 start_time;		/* tells a reused pid apart */
	int prio;
	const char *class;
	char comm[TASK_COMM_LEN];
};

struct sanity_report {
	unsigned int id;	/* 0: slot unused */
	u64 start_ns;		/* first seen (local_clock, as dmesg) */
	u64 end_ns;		/* 0 while ongoing */
	int idle_cpu;
	int busy_cpu;
	unsigned int nr_running;
	unsigned int nr_waiters;
	enum sanity_end end;
	bool events_frozen;
	bool no_domain;		/* no sched domain of the busy CPU spans the idle one */
	struct sanity_waiter waiter[SANITY_MAX_WAITERS];
};

struct sanity_watch {
	bool active;
	int idle_cpu;
	int busy_cpu;
	u64 start_ns;
	u64 next_look;		/* local_clock() time of the next look */
	unsigned int nr_running;
	unsigned int nr_waiters;
	bool no_domain;
	struct sanity_waiter waiter[SANITY_MAX_WAITERS];
	struct sanity_waiter running;	/* the busy CPU's task at the last look */
	struct sanity_report *report;	/* set once confirmed; never reused while set */
	u64 idle_busy_ns;	/* the look that first found no idle CPU, or 0 */
};

/* A confirmation, printed once sanity_lock is dropped. */
struct sanity_msg {
	int idle_cpu;
	int busy_cpu;
	u64 ms;
	unsigned int nr_running;
	unsigned int id;
	bool no_domain;
	pid_t pid;
	char comm[TASK_COMM_LEN];
};

static unsigned int sysctl_sched_sanity;
static unsigned int sysctl_sched_sanity_interval_ms = 1000;
static unsigned int sysctl_sched_sanity_confirm_ms = 100;

static DEFINE_MUTEX(sanity_ctl_mutex);	/* switching on and off; the worker */
static DEFINE_MUTEX(sanity_lock);	/* everything below */
static struct kthread_worker *sanity_worker;
static struct kthread_delayed_work sanity_work;
static bool sanity_running;
static u64 sanity_last_scan;
static struct sanity_watch sanity_watch[SANITY_MAX_WATCH];
static struct sanity_report sanity_reports[SANITY_MAX_REPORTS];
static unsigned int sanity_next_id = 1;
static struct cpumask sanity_idle;		/* scratch, under sanity_lock */
static struct cpumask sanity_claimed;
static struct cpumask sanity_reach;

static struct {
	u64 checks;
	u64 candidates;
	u64 transient;
	u64 repaired;		/* watches moved to another idle CPU */
	u64 violations;
	u64 dropped;		/* candidates not watched: all slots busy */
	u64 cost_ns;		/* CPU time of the checker's rounds, for overhead figures */
} sanity_stat;

/* Which runqueue walk found a waiter, and what it was looking for. */
struct sanity_walk {
	struct rq *rq;
	const struct cpumask *idle;	/* CPUs the waiter may move to */
	int target;			/* first such CPU found, or -1 */
	unsigned int nr;
	bool no_domain;
	struct sanity_waiter *waiter;
	struct sanity_waiter running;
};

/* The checker's own thread, which must not count as work on its CPU. */
static bool sanity_is_checker(struct task_struct *p)
{
	return sanity_worker && p == sanity_worker->task;
}

/* Runnable tasks on @rq, the checker itself left out. */
static unsigned int sanity_nr_running(struct rq *rq)
{
	unsigned int nr = READ_ONCE(rq->nr_running);

	return nr && sanity_is_checker(rcu_access_pointer(rq->curr)) ? nr - 1 : nr;
}

static void sanity_note(struct sanity_waiter *sw, struct task_struct *p)
{
	sw->pid = p->pid;
	sw->start_time = p->start_time;
	sw->prio = p->prio;
	sw->class = sched_class_name(p->sched_class);
	memcpy(sw->comm, p->comm, TASK_COMM_LEN);
}

/*
 * Is @p held back by CFS bandwidth control (cpu.max) on @src or @dst? A
 * throttled task stays queued but may not run before its group's quota is
 * refilled, on any CPU; the load balancer leaves such pairs alone too
 * (throttled_lb_pair()). Racy reads without @dst's lock, as idle_cpu().
 */
static bool sanity_throttled(struct task_struct *p, int src, int dst)
{
#ifdef CONFIG_CFS_BANDWIDTH
	struct task_group *tg;

	if (p->sched_class != &fair_sched_class)
		return false;
	tg = task_group(p);
	return READ_ONCE(tg->cfs_rq[src]->throttle_count) ||
	       READ_ONCE(tg->cfs_rq[dst]->throttle_count);
#else
	return false;
#endif
}

/* Idle, or running nothing but the checker. */
static bool sanity_cpu_idle(int cpu)
{
	struct rq *rq = cpu_rq(cpu);

	if (!cpu_active(cpu))
		return false;
	if (idle_cpu(cpu))
		return true;
	return sanity_is_checker(rcu_access_pointer(rq->curr)) && READ_ONCE(rq->nr_running) == 1 &&
	       !READ_ONCE(rq->ttwu_pending);
}

/*
 * The first CPU of @idle that @p may use, one that idles still if there
 * is one: @idle was taken a moment before, and a CPU busy for a moment (a
 * woken kernel thread placed on it) must not hide the others. The caller
 * checks the CPU again. nr_cpu_ids if @p may use none.
 */
static int sanity_idle_target(struct task_struct *p, const struct cpumask *idle)
{
	int cpu;

	for_each_cpu_and(cpu, p->cpus_ptr, idle) {
		if (sanity_cpu_idle(cpu))
			return cpu;
	}
	return cpumask_first_and(p->cpus_ptr, idle);
}

static bool sanity_movable(struct sanity_walk *w, struct task_struct *p)
{
	int cpu;

	if (task_current(w->rq, p) || is_migration_disabled(p) || sanity_is_checker(p))
		return false;

	cpu = w->target >= 0 ? w->target : sanity_idle_target(p, w->idle);
	if (cpu >= nr_cpu_ids || !cpumask_test_cpu(cpu, p->cpus_ptr) ||
	    sanity_throttled(p, cpu_of(w->rq), cpu))
		return false;

	w->target = cpu;
	if (w->nr < SANITY_MAX_WAITERS)
		sanity_note(&w->waiter[w->nr], p);
	w->nr++;
	return w->nr >= SANITY_MAX_WAITERS;
}

#ifdef CONFIG_SCHED_CLASS_SWITCH
/*
 * The classes between CFS and idle, which can run normal tasks, list every
 * task that waits on @w->rq, longest waiting first, on rq->sched_runnable
 * (kept for the stall watchdog).
 */
static bool sanity_find_class_waiters(struct sanity_walk *w, int *budget)
{
	struct task_struct *p;

	list_for_each_entry(p, &w->rq->sched_runnable, sched_runnable_node) {
		if (sanity_movable(w, p) || !--*budget)
			return true;
	}
	return false;
}
#else
static inline bool sanity_find_class_waiters(struct sanity_walk *w, int *budget)
{
	return false;
}
#endif

/*
 * Find waiting tasks on @w->rq that may run on a CPU of @w->idle. Each class
 * keeps its queued tasks its own way; the fair class and the classes below it
 * list all of them, RT and deadline list those that can move ("pushable").
 *
 * Context: @w->rq locked, interrupts off; at most SANITY_WALK_MAX tasks.
 */
static void sanity_find_waiters(struct sanity_walk *w)
{
	struct rq *rq = w->rq;
	struct task_struct *p;
	struct rb_node *node;
	int budget = SANITY_WALK_MAX;

	lockdep_assert_rq_held(rq);

	list_for_each_entry(p, &rq->cfs_tasks, se.group_node) {
		if (sanity_movable(w, p) || !--budget)
			return;
	}
	if (sanity_find_class_waiters(w, &budget))
		return;
	plist_for_each_entry(p, &rq->rt.pushable_tasks, pushable_tasks) {
		if (sanity_movable(w, p) || !--budget)
			return;
	}
	for (node = rb_first_cached(&rq->dl.pushable_dl_tasks_root); node;
	     node = rb_next(node)) {
		p = rb_entry(node, struct task_struct, pushable_dl_tasks);
		if (sanity_movable(w, p) || !--budget)
			return;
	}
}

/* The live task a waiter record names, or NULL once it exits. Under RCU. */
static struct task_struct *sanity_lookup(const struct sanity_waiter *w)
{
	struct task_struct *p = find_task_by_pid_ns(w->pid, &init_pid_ns);

	if (!p || p->start_time != w->start_time || p->exit_state ||
	    (p->flags & PF_EXITING))
		return NULL;
	return p;
}

/*
 * Did one of the tasks seen waiting at the first look wait all along? It is
 * still queued on the busy CPU, not running and not throttled. Without
 * this, two unrelated short waits M apart would pass for one long one.
 */
static bool sanity_same_waiter(struct sanity_watch *sw)
{
	struct task_struct *p;
	bool same = false;
	unsigned int i;

	rcu_read_lock();
	for (i = 0; i < sw->nr_waiters && !same; i++) {
		p = sanity_lookup(&sw->waiter[i]);
		same = p && task_cpu(p) == sw->busy_cpu && task_on_rq_queued(p) &&
		       !task_curr(p) && !sanity_throttled(p, sw->busy_cpu, sw->idle_cpu);
	}
	rcu_read_unlock();
	return same;
}

/* Does a sched domain of @busy span @idle, so that balancing could move work? */
static bool sanity_share_domain(int busy, int idle)
{
	struct sched_domain *sd;
	bool shared = false;

	rcu_read_lock();
	for_each_domain(busy, sd) {
		if (cpumask_test_cpu(idle, sched_domain_span(sd))) {
			shared = true;
			break;
		}
	}
	rcu_read_unlock();
	return shared;
}

/*
 * The CPUs of @idle that the administrator left open to @rq's tasks: none
 * if @rq's CPU is isolated from scheduling domains (isolcpus=domain), else
 * the non-isolated ones in the same root domain. A cpuset partition (or
 * sched_load_balance groups in cgroup v1) gets a root domain of its own,
 * and the kernel never balances across root domains by design.
 */
static const struct cpumask *sanity_reachable(struct rq *rq, const struct cpumask *idle)
{
	lockdep_assert_held(&sanity_lock);
	lockdep_assert_rq_held(rq);

	if (!housekeeping_cpu(cpu_of(rq), HK_TYPE_DOMAIN)) {
		cpumask_clear(&sanity_reach);
	} else {
		cpumask_and(&sanity_reach, idle, rq->rd->span);
		cpumask_and(&sanity_reach, &sanity_reach, housekeeping_cpumask(HK_TYPE_DOMAIN));
	}
	return &sanity_reach;
}

/**
 * sanity_probe - look on @busy for waiters that could run on @idle
 * @busy: the CPU whose runqueue is walked
 * @idle: candidate idle CPUs
 * @wt: the walk's result
 * @waiter: SANITY_MAX_WAITERS slots for the waiters found
 *
 * Context: process context, sanity_lock held. Takes @busy's runqueue lock
 * with interrupts off for the walk: the checker's only such section.
 * Return: the number of waiters noted.
 */
static unsigned int sanity_probe(int busy, const struct cpumask *idle, struct sanity_walk *wt,
				 struct sanity_waiter *waiter)
{
	struct rq *rq = cpu_rq(busy);
	unsigned long flags;

	lockdep_assert_held(&sanity_lock);

	wt->rq = rq;
	wt->target = -1;
	wt->nr = 0;
	wt->waiter = waiter;

	raw_spin_rq_lock_irqsave(rq, flags);
	if (sanity_nr_running(rq) >= 2 && cpu_active(busy)) {
		wt->idle = sanity_reachable(rq, idle);
		if (!cpumask_empty(wt->idle)) {
			sanity_find_waiters(wt);
			sanity_note(&wt->running, rq_curr_locked(rq));
		}
	}
	raw_spin_rq_unlock_irqrestore(rq, flags);

	if (wt->nr)
		wt->no_domain = !sanity_share_domain(busy, wt->target);
	return min_t(unsigned int, wt->nr, SANITY_MAX_WAITERS);
}

static struct sanity_watch *sanity_free_watch(void)
{
	int i;

	for (i = 0; i < SANITY_MAX_WATCH; i++)
		if (!sanity_watch[i].active)
			return &sanity_watch[i];
	return NULL;
}

/*
 * sanity_claimed: the CPUs of the active watches other than @self;
 * sanity_idle: the idle CPUs among the rest, so none is offered twice.
 * Returns whether any is left.
 */
static bool sanity_free_idle(const struct sanity_watch *self)
{
	int cpu, i;

	lockdep_assert_held(&sanity_lock);

	cpumask_clear(&sanity_claimed);
	for (i = 0; i < SANITY_MAX_WATCH; i++) {
		if (sanity_watch[i].active && &sanity_watch[i] != self) {
			__cpumask_set_cpu(sanity_watch[i].idle_cpu, &sanity_claimed);
			__cpumask_set_cpu(sanity_watch[i].busy_cpu, &sanity_claimed);
		}
	}
	cpumask_clear(&sanity_idle);
	for_each_online_cpu(cpu)
		if (!cpumask_test_cpu(cpu, &sanity_claimed) && sanity_cpu_idle(cpu))
			__cpumask_set_cpu(cpu, &sanity_idle);
	return !cpumask_empty(&sanity_idle);
}

/* The periodic check: pair busy CPUs with idle CPUs their waiters may use. */
static void sanity_scan(u64 now, u64 confirm_ns)
{
	struct sanity_waiter waiter[SANITY_MAX_WAITERS];
	struct sanity_walk wt;
	struct sanity_watch *sw;
	unsigned int nr;
	int cpu;

	lockdep_assert_held(&sanity_lock);

	sanity_stat.checks++;
	if (!sanity_free_idle(NULL))
		return;

	for_each_online_cpu(cpu) {
		if (sanity_nr_running(cpu_rq(cpu)) < 2 ||
		    cpumask_test_cpu(cpu, &sanity_claimed))
			continue;

		nr = sanity_probe(cpu, &sanity_idle, &wt, waiter);
		cond_resched();
		if (!nr)
			continue;

		sanity_stat.candidates++;
		sw = sanity_free_watch();
		if (!sw) {
			sanity_stat.dropped++;
			return;
		}
		if (!sanity_cpu_idle(wt.target))
			continue;	/* woke up meanwhile: nothing to watch */

		sw->active = true;
		sw->idle_cpu = wt.target;
		sw->busy_cpu = cpu;
		sw->start_ns = now;
		sw->next_look = now + confirm_ns;
		sw->nr_running = sanity_nr_running(cpu_rq(cpu));
		sw->nr_waiters = nr;
		sw->no_domain = wt.no_domain;
		sw->idle_busy_ns = 0;
		memcpy(sw->waiter, waiter, sizeof(waiter));
		sw->running = wt.running;
		sw->report = NULL;
		trace_sanity_violation(0, SCHED_SANITY_WATCH, sw->idle_cpu, cpu);

		__cpumask_clear_cpu(wt.target, &sanity_idle);
		if (cpumask_empty(&sanity_idle))
			return;
	}
}

/*
 * Why did a confirmed violation end? Looks the tasks of the last look up by
 * pid. The task running then counts for "migrated" too: a class that rotates
 * its tasks every few ms (BMQ) may have moved it, waiting by then, while the
 * waiters of the last look stayed.
 */
static enum sanity_end sanity_why_ended(struct sanity_watch *sw, bool idle_still)
{
	enum sanity_end why = SANITY_END_RAN;
	struct task_struct *p;
	unsigned int i, exited = 0;

	rcu_read_lock();
	p = sanity_lookup(&sw->running);
	if (p && task_on_rq_queued(p) && task_cpu(p) != sw->busy_cpu)
		why = SANITY_END_MIGRATED;
	for (i = 0; i < sw->nr_waiters && why != SANITY_END_MIGRATED; i++) {
		p = sanity_lookup(&sw->waiter[i]);
		if (!p) {
			exited++;
			continue;
		}
		if (task_cpu(p) != sw->busy_cpu) {
			why = SANITY_END_MIGRATED;
			break;
		}
		if (!task_on_rq_queued(p))
			why = SANITY_END_SLEPT;
	}
	rcu_read_unlock();

	if (why != SANITY_END_MIGRATED && exited == sw->nr_waiters)
		why = SANITY_END_EXITED;
	if (!idle_still && why != SANITY_END_MIGRATED)
		why = SANITY_END_IDLE_BUSY;
	return why;
}

/*
 * A slot for a new report: an unused one, else the oldest finished one. A
 * report still followed by a watch keeps its slot, however many newer ones
 * there are; there are fewer watches than slots, so one is always free.
 */
static struct sanity_report *sanity_report_slot(void)
{
	struct sanity_report *r, *best = NULL;

	lockdep_assert_held(&sanity_lock);
	BUILD_BUG_ON(SANITY_MAX_WATCH >= SANITY_MAX_REPORTS);

	for (r = sanity_reports; r < sanity_reports + SANITY_MAX_REPORTS; r++) {
		if (!r->id)
			return r;
		if (r->end != SANITY_ONGOING && (!best || r->id < best->id))
			best = r;
	}
	SCHED_WARN_ON(!best);
	return best;
}

static struct sanity_report *sanity_new_report(struct sanity_watch *sw)
{
	struct sanity_report *r = sanity_report_slot();

	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->id = sanity_next_id++;
	r->start_ns = sw->start_ns;
	r->idle_cpu = sw->idle_cpu;
	r->busy_cpu = sw->busy_cpu;
	r->nr_running = sw->nr_running;
	r->nr_waiters = sw->nr_waiters;
	r->no_domain = sw->no_domain;
	memcpy(r->waiter, sw->waiter, sizeof(r->waiter));
	r->end = SANITY_ONGOING;
	return r;
}

static void sanity_end(struct sanity_watch *sw, u64 now, enum sanity_end why)
{
	SCHED_WARN_ON(sw->report->end != SANITY_ONGOING);
	sw->report->end = why;
	sw->report->end_ns = now;
	trace_sanity_violation(sw->report->id, SCHED_SANITY_END, sw->idle_cpu, sw->busy_cpu);
	sw->report = NULL;
	sw->active = false;
}

/*
 * @sw's idle CPU took other work, often a kernel thread for a moment. The
 * violation goes on if the busy CPU's waiters may run on another idle CPU
 * no other watch holds: follow that one instead of ending and finding the
 * same violation again at the next scan. Returns the waiters found.
 */
static unsigned int sanity_repair(struct sanity_watch *sw, struct sanity_walk *wt,
				  struct sanity_waiter *waiter)
{
	unsigned int nr;

	if (!sanity_free_idle(sw))
		return 0;
	nr = sanity_probe(sw->busy_cpu, &sanity_idle, wt, waiter);
	if (!nr || !sanity_cpu_idle(wt->target))
		return 0;
	sw->idle_cpu = wt->target;
	if (sw->report)
		sw->report->idle_cpu = wt->target;
	else	/* a trace names the pair that is confirmed */
		trace_sanity_violation(0, SCHED_SANITY_WATCH, sw->idle_cpu, sw->busy_cpu);
	sanity_stat.repaired++;
	return nr;
}

/*
 * Re-examine the watched pairs whose look is due: confirm, keep following,
 * or let go. Confirmations are noted in @msg for printing after the lock
 * is dropped; returns how many.
 */
static unsigned int sanity_follow(u64 now, u64 confirm_ns, struct sanity_msg *msg)
{
	struct sanity_waiter waiter[SANITY_MAX_WAITERS];
	struct sanity_walk wt;
	struct sanity_watch *sw;
	struct sanity_report *r;
	unsigned int nr, nr_msg = 0;
	enum sanity_end why;
	bool idle_still;
	int i;

	lockdep_assert_held(&sanity_lock);

	for (i = 0; i < SANITY_MAX_WATCH; i++) {
		sw = &sanity_watch[i];
		if (!sw->active || (s64)(now - sw->next_look) < 0)
			continue;
		sw->next_look = now + confirm_ns;

		idle_still = sanity_cpu_idle(sw->idle_cpu);
		if (idle_still)
			nr = sanity_probe(sw->busy_cpu, cpumask_of(sw->idle_cpu), &wt, waiter);
		else
			nr = sanity_repair(sw, &wt, waiter);
		cond_resched();

		if (!sw->report) {
			if (!nr || !sanity_same_waiter(sw)) {
				sanity_stat.transient++;
				sw->active = false;
				continue;
			}
			sw->no_domain = wt.no_domain;
			r = sanity_new_report(sw);
			if (!r) {
				sw->active = false;
				continue;
			}
			sw->report = r;
			sanity_stat.violations++;
			/* Record the confirmation first so the frozen window holds it. */
			trace_sanity_violation(r->id, SCHED_SANITY_CONFIRM, sw->idle_cpu,
					       sw->busy_cpu);
			r->events_frozen = sched_events_freeze(r->id);
			msg[nr_msg++] = (struct sanity_msg) {
				.idle_cpu = sw->idle_cpu,
				.busy_cpu = sw->busy_cpu,
				.ms = div_u64(now - sw->start_ns, NSEC_PER_MSEC),
				.nr_running = sw->nr_running,
				.id = r->id,
				.no_domain = sw->no_domain,
				.pid = waiter[0].pid,
			};
			memcpy(msg[nr_msg - 1].comm, waiter[0].comm, TASK_COMM_LEN);
		}

		if (nr) {
			/* Still violated: remember the current waiters for the end. */
			sw->idle_busy_ns = 0;
			sw->nr_waiters = nr;
			memcpy(sw->waiter, waiter, sizeof(waiter));
			sw->running = wt.running;
			sw->report->no_domain = wt.no_domain;
			sw->report->nr_running = max(sw->report->nr_running,
						     sanity_nr_running(cpu_rq(sw->busy_cpu)));
			continue;
		}
		why = sanity_why_ended(sw, idle_still);
		/*
		 * Every idle CPU busy at once is often a moment's work: a
		 * kernel thread woken beside the work that took the watched
		 * CPU. Look once more before ending, and end as of this look.
		 */
		if (why == SANITY_END_IDLE_BUSY && !sw->idle_busy_ns) {
			sw->idle_busy_ns = now;
			continue;
		}
		sanity_end(sw, why == SANITY_END_IDLE_BUSY ? sw->idle_busy_ns : now, why);
	}
	return nr_msg;
}

static void sanity_print(const struct sanity_msg *m)
{
	pr_warn_ratelimited("sched_sanity: CPU %d idle for %llu ms while CPU %d has %u runnable, %s/%d could run there (report %u)%s\n",
			    m->idle_cpu, m->ms, m->busy_cpu, m->nr_running, m->comm, m->pid,
			    m->id, m->no_domain ? "; no sched domain spans both CPUs" : "");
}

/* When the work is next due: the next scan or the earliest look. */
static u64 sanity_next_due(u64 interval_ns)
{
	u64 next = sanity_last_scan + interval_ns;
	int i;

	lockdep_assert_held(&sanity_lock);

	for (i = 0; i < SANITY_MAX_WATCH; i++)
		if (sanity_watch[i].active && (s64)(sanity_watch[i].next_look - next) < 0)
			next = sanity_watch[i].next_look;
	return next;
}

/**
 * sanity_work_fn - one round of the checker
 * @work: sanity_work
 *
 * Looks at the watched pairs that are due and scans for new ones once the
 * interval since the last scan has passed, then queues itself for the next
 * of these. The intervals are read each round, so a changed sysctl applies
 * from the next round on (a write also runs a round at once).
 *
 * Context: the sched_sanity kthread worker; takes sanity_lock.
 */
static void sanity_work_fn(struct kthread_work *work)
{
	u64 interval_ns = (u64)READ_ONCE(sysctl_sched_sanity_interval_ms) * NSEC_PER_MSEC;
	u64 confirm_ns = (u64)READ_ONCE(sysctl_sched_sanity_confirm_ms) * NSEC_PER_MSEC;
	/* Off the stack; only this work, never run twice at once, uses it. */
	static struct sanity_msg msg[SANITY_MAX_WATCH];
	unsigned int i, nr_msg;
	u64 now, next, cpu_ns = task_sched_runtime(current);

	mutex_lock(&sanity_lock);
	if (!sanity_running) {
		mutex_unlock(&sanity_lock);
		return;
	}
	now = local_clock();
	nr_msg = sanity_follow(now, confirm_ns, msg);
	if ((s64)(now - (sanity_last_scan + interval_ns)) >= 0) {
		sanity_scan(now, confirm_ns);
		sanity_last_scan = now;
	}
	next = sanity_next_due(interval_ns);
	/* CPU time, not wall time: the round may be preempted. */
	sanity_stat.cost_ns += task_sched_runtime(current) - cpu_ns;
	mutex_unlock(&sanity_lock);

	for (i = 0; i < nr_msg; i++)
		sanity_print(&msg[i]);

	/* One jiffy more than the truncated delay, so the round is not early. */
	kthread_queue_delayed_work(sanity_worker, &sanity_work,
				   nsecs_to_jiffies(max_t(s64, next - now, 0)) + 1);
}

/* Run a round now, e.g. because an interval changed. Context: sanity_ctl_mutex. */
static void sanity_kick(void)
{
	lockdep_assert_held(&sanity_ctl_mutex);
	if (sanity_running)
		kthread_mod_delayed_work(sanity_worker, &sanity_work, 0);
}

static int sanity_set_enabled(bool on)
{
	int i, ret = 0;

	lockdep_assert_held(&sanity_ctl_mutex);
	if (on == READ_ONCE(sanity_running))
		goto out;

	if (on) {
		if (!sanity_worker) {
			struct kthread_worker *w = kthread_create_worker(0, "sched_sanity");

			if (IS_ERR(w)) {
				ret = PTR_ERR(w);
				goto out;
			}
			sanity_worker = w;
		}
		mutex_lock(&sanity_lock);
		/* The first scan at once. */
		sanity_last_scan = local_clock() -
			(u64)READ_ONCE(sysctl_sched_sanity_interval_ms) * NSEC_PER_MSEC;
		WRITE_ONCE(sanity_running, true);
		mutex_unlock(&sanity_lock);
		kthread_queue_delayed_work(sanity_worker, &sanity_work, 0);
		goto out;
	}

	mutex_lock(&sanity_lock);
	WRITE_ONCE(sanity_running, false);
	for (i = 0; i < SANITY_MAX_WATCH; i++) {
		if (!sanity_watch[i].active)
			continue;
		if (sanity_watch[i].report)
			sanity_end(&sanity_watch[i], local_clock(), SANITY_END_OFF);
		sanity_watch[i].active = false;
	}
	mutex_unlock(&sanity_lock);
	/* Without sanity_lock: the work takes it. It sees !sanity_running. */
	kthread_cancel_delayed_work_sync(&sanity_work);
out:
	return ret;
}

/*
 * The value is parsed and applied under sanity_ctl_mutex: two writers
 * racing must not leave the checker in one state and the file in the other.
 */
static int sanity_enable_handler(struct ctl_table *table, int write, void *buffer,
				 size_t *lenp, loff_t *ppos)
{
	struct ctl_table tmp = *table;
	unsigned int on;
	int ret;

	mutex_lock(&sanity_ctl_mutex);
	on = sysctl_sched_sanity;
	tmp.data = &on;
	ret = proc_douintvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (!ret && write) {
		ret = sanity_set_enabled(on);
		/* Without a worker thread the checker stays off. */
		WRITE_ONCE(sysctl_sched_sanity, ret ? 0 : on);
	}
	mutex_unlock(&sanity_ctl_mutex);
	return ret;
}

/* A new interval applies at once: a lowered one need not wait for the old. */
static int sanity_interval_handler(struct ctl_table *table, int write, void *buffer,
				   size_t *lenp, loff_t *ppos)
{
	int ret = proc_douintvec_minmax(table, write, buffer, lenp, ppos);

	if (!ret && write) {
		mutex_lock(&sanity_ctl_mutex);
		sanity_kick();
		mutex_unlock(&sanity_ctl_mutex);
	}
	return ret;
}

static unsigned int sanity_interval_min = 10, sanity_interval_max = 3600 * 1000;
static unsigned int sanity_confirm_min = 1, sanity_confirm_max = 60 * 1000;

static struct ctl_table sanity_sysctls[] = {
	SCHED_CLASS_KNOB("sched_sanity", sysctl_sched_sanity,
			 SYSCTL_ZERO, SYSCTL_ONE, sanity_enable_handler),
	SCHED_CLASS_KNOB("sched_sanity_interval_ms", sysctl_sched_sanity_interval_ms,
			 &sanity_interval_min, &sanity_interval_max, sanity_interval_handler),
	SCHED_CLASS_KNOB("sched_sanity_confirm_ms", sysctl_sched_sanity_confirm_ms,
			 &sanity_confirm_min, &sanity_confirm_max, sanity_interval_handler),
	{}
};

/*
 * A waiter as the reader may see it: the initial namespace sees every pid;
 * a reader in another pid namespace sees the pid the task has there, and
 * "0:-:0:?" for a task outside it or gone, as /proc/locks does.
 */
static void sanity_show_waiter(struct seq_file *m, const struct sanity_waiter *w,
			       struct pid_namespace *ns)
{
	struct task_struct *p;
	pid_t pid = w->pid;

	if (ns != &init_pid_ns) {
		rcu_read_lock();
		p = sanity_lookup(w);
		pid = p ? task_pid_nr_ns(p, ns) : 0;
		rcu_read_unlock();
		if (!pid) {
			seq_puts(m, "0:-:0:?");
			return;
		}
	}
	seq_printf(m, "%d:%s:%d:", pid, w->class, w->prio);
	seq_escape(m, w->comm, " ,\t\n\\");
}

static void sanity_show_report(struct seq_file *m, struct sanity_report *r, u64 now,
			       struct pid_namespace *ns)
{
	u64 end = r->end_ns ? r->end_ns : now;
	u64 secs = r->start_ns;
	u32 rem = do_div(secs, NSEC_PER_SEC);
	unsigned int i;

	seq_printf(m, "%u %llu.%06u %llu %d %d %u %s %s %s ", r->id, secs,
		   (u32)(rem / NSEC_PER_USEC), div_u64(end - r->start_ns, NSEC_PER_MSEC),
		   r->idle_cpu, r->busy_cpu, r->nr_running, sanity_end_names[r->end],
		   r->events_frozen ? "frozen" : "-", r->no_domain ? "none" : "shared");
	for (i = 0; i < min_t(unsigned int, r->nr_waiters, SANITY_MAX_WAITERS); i++) {
		if (i)
			seq_putc(m, ',');
		sanity_show_waiter(m, &r->waiter[i], ns);
	}
	seq_putc(m, '\n');
}

static int sanity_cmp_id(const void *a, const void *b)
{
	const struct sanity_report *ra = a, *rb = b;

	return ra->id < rb->id ? -1 : ra->id > rb->id;
}

static int sanity_show(struct seq_file *m, void *v)
{
	struct pid_namespace *ns = proc_pid_ns(file_inode(m->file)->i_sb);
	struct sanity_report *copy;
	unsigned int i, n = 0;
	u64 now;

	copy = kmalloc_array(SANITY_MAX_REPORTS, sizeof(*copy), GFP_KERNEL);
	if (!copy)
		return -ENOMEM;

	/* A mutex: the copy neither spins nor keeps interrupts off. */
	mutex_lock(&sanity_lock);
	now = local_clock();
	seq_printf(m, "enabled %u interval_ms %u confirm_ms %u\n", sanity_running,
		   READ_ONCE(sysctl_sched_sanity_interval_ms),
		   READ_ONCE(sysctl_sched_sanity_confirm_ms));
	seq_printf(m, "checks %llu candidates %llu transient %llu repaired %llu violations %llu dropped %llu cost_ns %llu\n",
		   sanity_stat.checks, sanity_stat.candidates, sanity_stat.transient,
		   sanity_stat.repaired,
		   sanity_stat.violations, sanity_stat.dropped, sanity_stat.cost_ns);
	for (i = 0; i < SANITY_MAX_REPORTS; i++)
		if (sanity_reports[i].id)
			copy[n++] = sanity_reports[i];
	mutex_unlock(&sanity_lock);

	sort(copy, n, sizeof(*copy), sanity_cmp_id, NULL);
	seq_puts(m, "id start_s duration_ms idle_cpu busy_cpu nr_running end events domain waiting\n");
	for (i = 0; i < n; i++)
		sanity_show_report(m, &copy[i], now, ns);
	kfree(copy);
	return 0;
}

static int sanity_open(struct inode *inode, struct file *file)
{
	return single_open(file, sanity_show, NULL);
}

/* Writing "clear" forgets reports and counters; violations being followed stay. */
static ssize_t sanity_write(struct file *file, const char __user *ubuf, size_t cnt,
			    loff_t *ppos)
{
	char buf[8];
	int i;

	if (cnt >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, cnt))
		return -EFAULT;
	buf[cnt] = '\0';
	if (strcmp(strim(buf), "clear"))
		return -EINVAL;

	mutex_lock(&sanity_lock);
	memset(&sanity_stat, 0, sizeof(sanity_stat));
	for (i = 0; i < SANITY_MAX_REPORTS; i++)
		if (sanity_reports[i].end != SANITY_ONGOING)
			sanity_reports[i].id = 0;
	mutex_unlock(&sanity_lock);
	return cnt;
}

static const struct proc_ops sanity_proc_ops = {
	.proc_open	= sanity_open,
	.proc_read	= seq_read,
	.proc_write	= sanity_write,
	.proc_lseek	= seq_lseek,
	.proc_release	= single_release,
};

static int __init sched_sanity_init(void)
{
	kthread_init_delayed_work(&sanity_work, sanity_work_fn);
	register_sysctl_init("kernel", sanity_sysctls);
	/* Root only: it names tasks of every pid namespace. */
	proc_create("sched_sanity", 0400, NULL, &sanity_proc_ops);
	return 0;
}
late_initcall(sched_sanity_init);
