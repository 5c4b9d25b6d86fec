// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler sanity checker: the invariant of "The Linux Scheduler: a Decade
 * of Wasted Cores" (EuroSys 2016, Algorithm 2). No CPU may stay idle while
 * another CPU has two or more runnable tasks of which a waiting one is
 * allowed to run on the idle CPU.
 *
 * Every interval (kernel.sched_sanity_interval_ms, 1 s) a timer looks for
 * idle CPUs and for waiting tasks elsewhere that could run on them. Such a
 * pair is looked at again kernel.sched_sanity_confirm_ms (100 ms) later; if
 * the CPU (or, once it took other work, another idle CPU the waiters may
 * use) is still idle and a task seen waiting the first time still waits,
 * the violation is confirmed: logged once, listed in /proc/sched_sanity, a
 * flight recording of sched events is frozen, and the pair is re-checked
 * every confirm interval until it no longer holds, so the report says how
 * long it lasted and why it ended.
 *
 * No scheduler fast path is touched: the checker reads runqueues from its
 * timer, so when it is off (the default) it costs nothing.
 */
#include <linux/proc_fs.h>
#include <linux/sched/clock.h>
#include <linux/sched/cputime.h>
#include <linux/sched/events.h>
#include <linux/seq_file.h>
#include <linux/sysctl.h>
#include <trace/events/sched_events.h>

#include "sched.h"

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
	pid_t pid;
	u64 start_time;		/* tells a reused pid apart */
	int prio;
	const char *class;
	char comm[TASK_COMM_LEN];
};

struct sanity_report {
	unsigned int id;
	u64 start_ns;		/* first seen (local_clock, as dmesg) */
	u64 end_ns;		/* 0 while ongoing */
	int idle_cpu;
	int busy_cpu;
	unsigned int nr_running;
	unsigned int nr_waiters;
	enum sanity_end end;
	bool events_frozen;
	struct sanity_waiter waiter[SANITY_MAX_WAITERS];
};

struct sanity_watch {
	bool active;
	int idle_cpu;
	int busy_cpu;
	u64 start_ns;
	unsigned int nr_running;
	unsigned int nr_waiters;
	struct sanity_waiter waiter[SANITY_MAX_WAITERS];
	struct sanity_waiter running;	/* the busy CPU's task at the last look */
	struct sanity_report *report;	/* set once confirmed */
};

static unsigned int sysctl_sched_sanity;
static unsigned int sysctl_sched_sanity_interval_ms = 1000;
static unsigned int sysctl_sched_sanity_confirm_ms = 100;

static DEFINE_MUTEX(sanity_mutex);		/* enable/disable */
static DEFINE_RAW_SPINLOCK(sanity_lock);	/* everything below */
static struct hrtimer sanity_timer;
static bool sanity_running;
static u64 sanity_next_check;
static struct sanity_watch sanity_watch[SANITY_MAX_WATCH];
static struct sanity_report sanity_reports[SANITY_MAX_REPORTS];
static unsigned int sanity_next_id = 1;
static struct cpumask sanity_idle;		/* scratch, under sanity_lock */
static struct cpumask sanity_claimed;

static struct {
	u64 checks;
	u64 candidates;
	u64 transient;
	u64 repaired;		/* watches moved to another idle CPU */
	u64 violations;
	u64 dropped;		/* candidates not watched: all slots busy */
	u64 cost_ns;		/* time spent in the timer, for overhead figures */
} sanity_stat;

/* Which runqueue walk found a waiter, and what it was looking for. */
struct sanity_walk {
	struct rq *rq;
	const struct cpumask *idle;	/* CPUs the waiter may move to */
	int target;			/* first such CPU found, or -1 */
	unsigned int nr;
	struct sanity_waiter *waiter;
	struct sanity_waiter running;
};

static void sanity_note(struct sanity_waiter *sw, struct task_struct *p)
{
	sw->pid = p->pid;
	sw->start_time = p->start_time;
	sw->prio = p->prio;
	sw->class = sched_class_name(p->sched_class);
	memcpy(sw->comm, p->comm, TASK_COMM_LEN);
}

static bool sanity_movable(struct sanity_walk *w, struct task_struct *p)
{
	int cpu;

	if (p == w->rq->curr || is_migration_disabled(p))
		return false;

	cpu = w->target >= 0 ? w->target : cpumask_first_and(p->cpus_ptr, w->idle);
	if (cpu >= nr_cpu_ids || !cpumask_test_cpu(cpu, p->cpus_ptr))
		return false;

	w->target = cpu;
	if (w->nr < SANITY_MAX_WAITERS)
		sanity_note(&w->waiter[w->nr], p);
	w->nr++;
	return w->nr >= SANITY_MAX_WAITERS;
}

#ifdef CONFIG_SCHED_ULE
/* ULE's realtime, timeshare and idle queues hold every queued ULE task. */
static bool sanity_find_ule_waiters(struct sanity_walk *w, int *budget)
{
	struct ule_runq *queues[] = {
		&w->rq->ule.realtime, &w->rq->ule.timeshare, &w->rq->ule.idle,
	};
	struct task_struct *p;
	unsigned int q, i;

	for (q = 0; q < ARRAY_SIZE(queues); q++) {
		for_each_set_bit(i, queues[q]->bits, ULE_RQ_NQS) {
			list_for_each_entry(p, &queues[q]->queue[i], ule.run_list) {
				if (sanity_movable(w, p) || !--*budget)
					return true;
			}
		}
	}
	return false;
}
#else
static inline bool sanity_find_ule_waiters(struct sanity_walk *w, int *budget)
{
	return false;
}
#endif

#ifdef CONFIG_SCHED_BMQ
/* BMQ's level lists hold every queued BMQ task, the running one too. */
static bool sanity_find_bmq_waiters(struct sanity_walk *w, int *budget)
{
	struct bmq_rq *bmq = &w->rq->bmq;
	struct task_struct *p;
	unsigned long level;

	for_each_set_bit(level, &bmq->bitmap, BMQ_LEVELS) {
		list_for_each_entry(p, &bmq->queue[level], bmq.run_list) {
			if (sanity_movable(w, p) || !--*budget)
				return true;
		}
	}
	return false;
}
#else
static inline bool sanity_find_bmq_waiters(struct sanity_walk *w, int *budget)
{
	return false;
}
#endif

/*
 * Find waiting tasks on @w->rq that may run on a CPU of @w->idle. Each class
 * keeps its queued tasks its own way; the fair class, ULE and BMQ list all of
 * them, RT and deadline list those that can move ("pushable"). Caller holds
 * the runqueue lock.
 */
static void sanity_find_waiters(struct sanity_walk *w)
{
	struct rq *rq = w->rq;
	struct task_struct *p;
	struct rb_node *node;
	int budget = SANITY_WALK_MAX;

	list_for_each_entry(p, &rq->cfs_tasks, se.group_node) {
		if (sanity_movable(w, p) || !--budget)
			return;
	}
	if (sanity_find_ule_waiters(w, &budget))
		return;
	if (sanity_find_bmq_waiters(w, &budget))
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

static bool sanity_cpu_idle(int cpu)
{
	return cpu_active(cpu) && idle_cpu(cpu);
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
 * still queued on the busy CPU and not running. Without this, two unrelated
 * short waits M apart would pass for one long one.
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
		       !task_curr(p);
	}
	rcu_read_unlock();
	return same;
}

/* Look on @busy for waiters that could run on @idle; fills @wt. */
static unsigned int sanity_probe(int busy, const struct cpumask *idle, struct sanity_walk *wt,
				 struct sanity_waiter *waiter)
{
	struct rq *rq = cpu_rq(busy);
	unsigned long flags;

	wt->rq = rq;
	wt->idle = idle;
	wt->target = -1;
	wt->nr = 0;
	wt->waiter = waiter;

	raw_spin_rq_lock_irqsave(rq, flags);
	if (rq->nr_running >= 2 && cpu_active(busy)) {
		sanity_find_waiters(wt);
		sanity_note(&wt->running, rq->curr);
	}
	raw_spin_rq_unlock_irqrestore(rq, flags);
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

/* The periodic check: pair busy CPUs with idle CPUs their waiters may use. */
/*
 * sanity_claimed: the CPUs of the active watches other than @self;
 * sanity_idle: the idle CPUs among the rest, so none is offered twice.
 * Returns whether any is left.
 */
static bool sanity_free_idle(const struct sanity_watch *self)
{
	int cpu, i;

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

static void sanity_scan(u64 now)
{
	struct sanity_waiter waiter[SANITY_MAX_WAITERS];
	struct sanity_walk wt;
	struct sanity_watch *sw;
	unsigned int nr;
	int cpu;

	sanity_stat.checks++;
	if (!sanity_free_idle(NULL))
		return;

	for_each_online_cpu(cpu) {
		if (READ_ONCE(cpu_rq(cpu)->nr_running) < 2 ||
		    cpumask_test_cpu(cpu, &sanity_claimed))
			continue;

		nr = sanity_probe(cpu, &sanity_idle, &wt, waiter);
		if (!nr)
			continue;

		sanity_stat.candidates++;
		sw = sanity_free_watch();
		if (!sw) {
			sanity_stat.dropped++;
			return;
		}
		if (!idle_cpu(wt.target))
			continue;	/* woke up meanwhile: nothing to watch */

		sw->active = true;
		sw->idle_cpu = wt.target;
		sw->busy_cpu = cpu;
		sw->start_ns = now;
		sw->nr_running = READ_ONCE(cpu_rq(cpu)->nr_running);
		sw->nr_waiters = nr;
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

static struct sanity_report *sanity_new_report(struct sanity_watch *sw)
{
	unsigned int id = sanity_next_id++;
	struct sanity_report *r = &sanity_reports[id % SANITY_MAX_REPORTS];

	memset(r, 0, sizeof(*r));
	r->id = id;
	r->start_ns = sw->start_ns;
	r->idle_cpu = sw->idle_cpu;
	r->busy_cpu = sw->busy_cpu;
	r->nr_running = sw->nr_running;
	r->nr_waiters = sw->nr_waiters;
	memcpy(r->waiter, sw->waiter, sizeof(r->waiter));
	r->end = SANITY_ONGOING;
	return r;
}

static void sanity_end(struct sanity_watch *sw, u64 now, enum sanity_end why)
{
	sw->report->end = why;
	sw->report->end_ns = now;
	trace_sanity_violation(sw->report->id, SCHED_SANITY_END, sw->idle_cpu, sw->busy_cpu);
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
	if (!nr || !idle_cpu(wt->target))
		return 0;
	sw->idle_cpu = wt->target;
	if (sw->report)
		sw->report->idle_cpu = wt->target;
	sanity_stat.repaired++;
	return nr;
}

/* Re-examine the watched pairs: confirm, keep following, or let go. */
static void sanity_follow(u64 now)
{
	struct sanity_waiter waiter[SANITY_MAX_WAITERS];
	struct sanity_walk wt;
	struct sanity_watch *sw;
	struct sanity_report *r;
	unsigned int nr;
	bool idle_still;
	int i;

	for (i = 0; i < SANITY_MAX_WATCH; i++) {
		sw = &sanity_watch[i];
		if (!sw->active)
			continue;

		idle_still = sanity_cpu_idle(sw->idle_cpu);
		if (idle_still)
			nr = sanity_probe(sw->busy_cpu, cpumask_of(sw->idle_cpu), &wt, waiter);
		else
			nr = sanity_repair(sw, &wt, waiter);

		if (!sw->report) {
			if (!nr || !sanity_same_waiter(sw)) {
				sanity_stat.transient++;
				sw->active = false;
				continue;
			}
			r = sanity_new_report(sw);
			sw->report = r;
			sanity_stat.violations++;
			/* Record the confirmation first so the frozen window holds it. */
			trace_sanity_violation(r->id, SCHED_SANITY_CONFIRM, sw->idle_cpu,
					       sw->busy_cpu);
			r->events_frozen = sched_events_freeze(r->id);
			pr_warn_ratelimited("sched_sanity: CPU %d idle for %llu ms while CPU %d has %u runnable, %s/%d could run there (report %u)\n",
					    sw->idle_cpu,
					    div_u64(now - sw->start_ns, NSEC_PER_MSEC),
					    sw->busy_cpu, sw->nr_running, waiter[0].comm,
					    waiter[0].pid, r->id);
		}

		if (nr) {
			/* Still violated: remember the current waiters for the end. */
			sw->nr_waiters = nr;
			memcpy(sw->waiter, waiter, sizeof(waiter));
			sw->running = wt.running;
			sw->report->nr_running = max(sw->report->nr_running,
						     READ_ONCE(cpu_rq(sw->busy_cpu)->nr_running));
			continue;
		}
		sanity_end(sw, now, sanity_why_ended(sw, idle_still));
	}
}

static bool sanity_watching(void)
{
	int i;

	for (i = 0; i < SANITY_MAX_WATCH; i++)
		if (sanity_watch[i].active)
			return true;
	return false;
}

static enum hrtimer_restart sanity_timer_fn(struct hrtimer *timer)
{
	u64 now = local_clock(), next;
	unsigned long flags;

	raw_spin_lock_irqsave(&sanity_lock, flags);
	if (sanity_watching())
		sanity_follow(now);
	if ((s64)(now - sanity_next_check) >= 0) {
		sanity_scan(now);
		sanity_next_check = now + (u64)READ_ONCE(sysctl_sched_sanity_interval_ms) *
					  NSEC_PER_MSEC;
	}
	next = sanity_next_check;
	if (sanity_watching())
		next = min(next, now + (u64)READ_ONCE(sysctl_sched_sanity_confirm_ms) *
				       NSEC_PER_MSEC);
	sanity_stat.cost_ns += local_clock() - now;
	raw_spin_unlock_irqrestore(&sanity_lock, flags);

	hrtimer_forward_now(timer, ns_to_ktime(next - now));
	return HRTIMER_RESTART;
}

static void sanity_set_enabled(bool on)
{
	unsigned long flags;
	int i;

	mutex_lock(&sanity_mutex);
	if (on == sanity_running)
		goto out;

	if (on) {
		sanity_next_check = local_clock();
		sanity_running = true;
		hrtimer_start(&sanity_timer,
			      ms_to_ktime(READ_ONCE(sysctl_sched_sanity_interval_ms)),
			      HRTIMER_MODE_REL);
		goto out;
	}

	hrtimer_cancel(&sanity_timer);
	sanity_running = false;
	raw_spin_lock_irqsave(&sanity_lock, flags);
	for (i = 0; i < SANITY_MAX_WATCH; i++) {
		if (!sanity_watch[i].active)
			continue;
		if (sanity_watch[i].report)
			sanity_end(&sanity_watch[i], local_clock(), SANITY_END_OFF);
		sanity_watch[i].active = false;
	}
	raw_spin_unlock_irqrestore(&sanity_lock, flags);
out:
	mutex_unlock(&sanity_mutex);
}

static int sanity_enable_handler(struct ctl_table *table, int write, void *buffer,
				 size_t *lenp, loff_t *ppos)
{
	int ret = proc_douintvec_minmax(table, write, buffer, lenp, ppos);

	if (!ret && write)
		sanity_set_enabled(sysctl_sched_sanity);
	return ret;
}

static unsigned int sanity_interval_min = 10, sanity_interval_max = 3600 * 1000;
static unsigned int sanity_confirm_min = 1, sanity_confirm_max = 60 * 1000;

static struct ctl_table sanity_sysctls[] = {
	{
		.procname	= "sched_sanity",
		.data		= &sysctl_sched_sanity,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= sanity_enable_handler,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "sched_sanity_interval_ms",
		.data		= &sysctl_sched_sanity_interval_ms,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &sanity_interval_min,
		.extra2		= &sanity_interval_max,
	},
	{
		.procname	= "sched_sanity_confirm_ms",
		.data		= &sysctl_sched_sanity_confirm_ms,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &sanity_confirm_min,
		.extra2		= &sanity_confirm_max,
	},
	{}
};

static void sanity_show_report(struct seq_file *m, struct sanity_report *r, u64 now)
{
	u64 end = r->end_ns ? r->end_ns : now;
	u64 secs = r->start_ns;
	u32 rem = do_div(secs, NSEC_PER_SEC);
	unsigned int i;

	seq_printf(m, "%u %llu.%06u %llu %d %d %u %s %s ", r->id, secs, (u32)(rem / NSEC_PER_USEC),
		   div_u64(end - r->start_ns, NSEC_PER_MSEC), r->idle_cpu, r->busy_cpu,
		   r->nr_running, sanity_end_names[r->end],
		   r->events_frozen ? "frozen" : "-");
	for (i = 0; i < min_t(unsigned int, r->nr_waiters, SANITY_MAX_WAITERS); i++) {
		seq_printf(m, "%s%d:%s:%d:", i ? "," : "", r->waiter[i].pid,
			   r->waiter[i].class, r->waiter[i].prio);
		seq_escape(m, r->waiter[i].comm, " ,\t\n\\");
	}
	seq_putc(m, '\n');
}

static int sanity_show(struct seq_file *m, void *v)
{
	struct sanity_report *copy;
	unsigned long flags;
	unsigned int id, first, n = 0;
	u64 now = local_clock();

	copy = kmalloc_array(SANITY_MAX_REPORTS, sizeof(*copy), GFP_KERNEL);
	if (!copy)
		return -ENOMEM;

	raw_spin_lock_irqsave(&sanity_lock, flags);
	seq_printf(m, "enabled %u interval_ms %u confirm_ms %u\n", sanity_running,
		   READ_ONCE(sysctl_sched_sanity_interval_ms),
		   READ_ONCE(sysctl_sched_sanity_confirm_ms));
	seq_printf(m, "checks %llu candidates %llu transient %llu repaired %llu violations %llu dropped %llu cost_ns %llu\n",
		   sanity_stat.checks, sanity_stat.candidates, sanity_stat.transient,
		   sanity_stat.repaired,
		   sanity_stat.violations, sanity_stat.dropped, sanity_stat.cost_ns);
	first = sanity_next_id > SANITY_MAX_REPORTS ? sanity_next_id - SANITY_MAX_REPORTS : 1;
	for (id = first; id < sanity_next_id; id++)
		if (sanity_reports[id % SANITY_MAX_REPORTS].id == id)
			copy[n++] = sanity_reports[id % SANITY_MAX_REPORTS];
	raw_spin_unlock_irqrestore(&sanity_lock, flags);

	seq_puts(m, "id start_s duration_ms idle_cpu busy_cpu nr_running end events waiting\n");
	for (id = 0; id < n; id++)
		sanity_show_report(m, &copy[id], now);
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
	unsigned long flags;
	char buf[8];
	int i;

	if (cnt >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, cnt))
		return -EFAULT;
	buf[cnt] = '\0';
	if (strcmp(strim(buf), "clear"))
		return -EINVAL;

	raw_spin_lock_irqsave(&sanity_lock, flags);
	memset(&sanity_stat, 0, sizeof(sanity_stat));
	for (i = 0; i < SANITY_MAX_REPORTS; i++)
		if (!sanity_reports[i].id || sanity_reports[i].end != SANITY_ONGOING)
			sanity_reports[i].id = 0;
	raw_spin_unlock_irqrestore(&sanity_lock, flags);
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
	hrtimer_init(&sanity_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	sanity_timer.function = sanity_timer_fn;
	register_sysctl_init("kernel", sanity_sysctls);
	proc_create("sched_sanity", 0644, NULL, &sanity_proc_ops);
	return 0;
}
late_initcall(sched_sanity_init);
