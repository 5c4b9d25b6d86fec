// SPDX-License-Identifier: GPL-2.0
/*
 * Which scheduling class runs SCHED_NORMAL, SCHED_BATCH and SCHED_IDLE
 * tasks: CONFIG_SCHED_DEFAULT_* picks the default, "sched=" overrides it
 * at boot, and /proc/sys/kernel/sched_class reports it and switches it at
 * run time.
 *
 * Built as part of build_utility.c. See
 * Documentation/scheduler/sched-class-select.rst.
 */
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sysrq.h>

#include "class_common.h"

/* Set by "sched=", which is parsed before sched_init(). */
static const struct sched_class *sched_normal_override __ro_after_init;

/*
 * The class "sched=" and kernel.sched_class name @name: "cfs", or a class
 * that can run normal tasks instead (its sched_pluggable_ops name).
 */
static const struct sched_class *sched_class_lookup(const char *name)
{
#ifdef CONFIG_SCHED_CLASS_SWITCH
	const struct sched_class *class;
#endif

	if (!name)
		return NULL;
	if (sysfs_streq(name, "cfs"))
		return &fair_sched_class;
#ifdef CONFIG_SCHED_CLASS_SWITCH
	for_each_pluggable_class(class) {
		if (sysfs_streq(name, class->pluggable->name))
			return class;
	}
#endif
	return NULL;
}

/* The names "sched=" accepts, "cfs" first, for messages. */
static void sched_class_known_names(char *buf, size_t size)
{
#ifdef CONFIG_SCHED_CLASS_SWITCH
	const struct sched_class *class;
	ssize_t len = strscpy(buf, "cfs", size);

	if (len < 0)
		return;
	for_each_pluggable_class(class)
		len += scnprintf(buf + len, size - len, " %s", class->pluggable->name);
#else
	strscpy(buf, "cfs", size);
#endif
}

/**
 * sched_class_name - short user-visible name of a scheduling class
 * @class: the class
 *
 * Normal-task classes use their "sched=" name; the others use the name of
 * their policy family. Used by /proc/<pid>/sched.
 */
const char *sched_class_name(const struct sched_class *class)
{
	if (!class)
		return "unknown";
	if (class == &fair_sched_class)
		return "cfs";
#ifdef CONFIG_SCHED_CLASS_SWITCH
	if (class->pluggable)
		return class->pluggable->name;
#endif
#ifdef CONFIG_SMP
	if (class == &stop_sched_class)
		return "stop";
#endif
	if (class == &dl_sched_class)
		return "dl";
	if (class == &rt_sched_class)
		return "rt";
	if (class == &idle_sched_class)
		return "idle";
	return "unknown";
}

static int __init sched_class_setup(char *str)
{
	const struct sched_class *choice = sched_class_lookup(str);
	char known[64];

	if (!choice) {
		sched_class_known_names(known, sizeof(known));
		/* An earlier valid sched= on the same command line still holds. */
		pr_warn("sched: unknown scheduler \"%s\" in sched= (known: %s), keeping %s\n",
			str ?: "", known, sched_normal_override ?
			sched_class_name(sched_normal_override) : CONFIG_SCHED_DEFAULT_NAME);
		return 0;
	}
	sched_normal_override = choice;
	return 0;
}
early_param("sched", sched_class_setup);

/* Longest name kernel.sched_class takes, with its NUL. */
#define SCHED_CLASS_NAME_LEN	16

/* The class of normal tasks as kernel.sched_class reports it: set after a switch's walk. */
static const struct sched_class *sched_normal_choice __read_mostly;

#ifdef CONFIG_SCHED_CLASS_SWITCH
/*
 * Switches and the stall watchdog's checks run in one SCHED_FIFO kthread
 * worker, so neither waits on the class it may have to replace and two
 * switches never overlap; fallbacks to CFS run in a thread of their own.
 */
static struct kthread_worker *sched_class_worker;

/*
 * Held around a switch, by the worker and the fallback thread only: a
 * normal task that held it could be starved by the class being left and
 * keep the fallback from running.
 */
static DEFINE_MUTEX(sched_class_mutex);

/*
 * The watchdog's timeout and timer, set by switches and by writers of
 * kernel.sched_watchdog_ms: a spinning lock, so that a writer holding it
 * cannot be preempted and starved while the fallback waits for it.
 */
static DEFINE_RAW_SPINLOCK(sched_watchdog_lock);

/* Set while a switch walks the tasks: the tick does not expect checks then. */
static bool sched_class_switching;

/* A write to kernel.sched_class is waiting for its switch. */
static atomic_t sched_class_write_pending = ATOMIC_INIT(0);

/* Tell the classes that can run normal tasks that normal tasks moved. */
static void sched_class_switched(void)
{
	const struct sched_class *class;

	for_each_pluggable_class(class) {
		if (class->pluggable->normal_changed)
			class->pluggable->normal_changed();
	}
}

/* Tasks of @class queued or running on @rq. */
static unsigned int sched_class_nr_tasks(struct rq *rq, const struct sched_class *class)
{
	lockdep_assert_rq_held(rq);
	if (class == &fair_sched_class)
		return rq->cfs.h_nr_running;
	return class->pluggable ? class->pluggable->nr_tasks(rq) : 0;
}

/*
 * After a switch (@left the class normal tasks left) or at boot (NULL),
 * on every online CPU under its lock: mark it idle for the normal class
 * if nothing of it is queued there, for the class's placement and kicks
 * (CPUs that idled under another class never passed its pick), or clear
 * the mark under CFS. A stale mark costs a check, and the CPU's next pick
 * corrects it. And no CPU may still hold a task of @left.
 */
static void sched_class_settle(const struct sched_class *left)
{
	const struct sched_class *normal __maybe_unused = READ_ONCE(sched_normal_class);
	unsigned int nr;
	struct rq_flags rf;
	struct rq *rq;
	int cpu;

	for_each_online_cpu(cpu) {
		rq = cpu_rq(cpu);
		rq_lock_irqsave(rq, &rf);
#ifdef CONFIG_SMP
		if (normal->pluggable && cpumask_test_cpu(cpu, rq->rd->online))
			sched_class_rq_attach(rq, normal, true);
		else
			sched_class_mark_idle(rq, false);
#endif
		nr = left ? sched_class_nr_tasks(rq, left) : 0;
		rq_unlock_irqrestore(rq, &rf);
		WARN(nr, "sched: %s still holds %u tasks on CPU %d after the switch\n",
		     sched_class_name(left), nr, cpu);
	}
}

#ifdef CONFIG_FAIR_GROUP_SCHED
static bool sched_class_tg_capped(struct task_group *tg)
{
#ifdef CONFIG_CFS_BANDWIDTH
	return tg->cfs_bandwidth.quota != RUNTIME_INF;
#else
	return false;
#endif
}

/*
 * Task groups with a cpu.weight, cpu.max or cpu.idle other than the root's:
 * limits only CFS enforces, so a switch away from it drops them silently.
 */
static unsigned int sched_class_limited_groups(void)
{
	unsigned int nr = 0;
	struct task_group *tg;

	rcu_read_lock();
	list_for_each_entry_rcu(tg, &task_groups, list) {
		if (tg == &root_task_group || task_group_is_autogroup(tg))
			continue;
		if (tg->shares != ROOT_TASK_GROUP_LOAD || tg->idle ||
		    sched_class_tg_capped(tg))
			nr++;
	}
	rcu_read_unlock();
	return nr;
}
#else
static inline unsigned int sched_class_limited_groups(void)
{
	return 0;
}
#endif

static void sched_watchdog_arm(void);

/* On the worker: move every normal task to @choice and log why. */
static void sched_class_switch_to(const struct sched_class *choice,
				  const char *reason)
{
	const struct sched_class *prev;
	unsigned int waiting, moved;
	u64 start, ms, waiting_ms;

	mutex_lock(&sched_class_mutex);
	prev = sched_normal_choice;
	if (choice == prev)
		goto unlock;
	WRITE_ONCE(sched_class_switching, true);
	start = ktime_get_ns();
	waiting = sched_switch_normal_class(choice);
	/* From here the leaving class holds only sleeping tasks. */
	waiting_ms = div_u64(ktime_get_ns() - start, NSEC_PER_MSEC);
	moved = waiting + sched_move_normal_tasks();
	WRITE_ONCE(sched_normal_choice, choice);
	sched_class_switched();
	ms = div_u64(ktime_get_ns() - start, NSEC_PER_MSEC);
	sched_class_settle(prev);
	WRITE_ONCE(sched_class_switching, false);
	pr_info("sched: normal tasks moved from %s to %s (%u tasks, %s) in %llu ms, the %u running or waiting in %llu ms\n",
		sched_class_name(prev), sched_class_name(choice), moved, reason, ms,
		waiting, waiting_ms);
	if (prev == &fair_sched_class) {
		unsigned int limited = sched_class_limited_groups();

		if (limited)
			pr_warn("sched: %s does not enforce cpu.weight, cpu.max or cpu.idle; cgroups with them set: %u\n",
				sched_class_name(choice), limited);
	}
	raw_spin_lock(&sched_watchdog_lock);
	sched_watchdog_arm();
	raw_spin_unlock(&sched_watchdog_lock);
unlock:
	mutex_unlock(&sched_class_mutex);
}

struct sched_class_switch_work {
	struct kthread_work			work;
	const struct sched_class		*choice;
};

static void sched_class_switch_workfn(struct kthread_work *work)
{
	struct sched_class_switch_work *sw =
		container_of(work, struct sched_class_switch_work, work);

	sched_class_switch_to(sw->choice, "kernel.sched_class");
}

/* Why the pending fallback to CFS was asked for; NULL when none is. */
static const char *sched_fallback_reason;

/*
 * The fallback runs in a thread of its own, not on the worker: the tick
 * asks for it when the worker's checks have stopped, so whatever holds
 * the worker back must not hold the way back to CFS too.
 */
static struct task_struct *sched_fallback_thread;

static int sched_fallback_threadfn(void *unused)
{
	const char *reason;

	for (;;) {
		set_current_state(TASK_IDLE);
		reason = READ_ONCE(sched_fallback_reason);
		if (!reason) {
			schedule();
			continue;
		}
		__set_current_state(TASK_RUNNING);
		sched_class_switch_to(&fair_sched_class, reason);
		WRITE_ONCE(sched_fallback_reason, NULL);
	}
	return 0;
}

/* A fallback to CFS was asked for and has not finished. */
static bool sched_fallback_pending(void)
{
	return READ_ONCE(sched_fallback_reason);
}

/*
 * Ask for every normal task to move back to CFS; any context without an
 * rq lock (it wakes a thread). Returns false when a fallback is already
 * pending or there is no thread to run it.
 */
static bool sched_fallback_request(const char *reason)
{
	struct task_struct *thread = READ_ONCE(sched_fallback_thread);

	if (!thread || cmpxchg(&sched_fallback_reason, NULL, reason))
		return false;
	wake_up_process(thread);
	return true;
}

/*
 * The stall watchdog: while a class other than CFS runs normal tasks, a
 * hard hrtimer (timers in softirq may wait for a starved ksoftirqd) queues
 * a check on the worker SCHED_WATCHDOG_CHECKS times per timeout. A task of
 * that class runnable for longer than the timeout without running makes
 * the check fall back to CFS; the tick falls back if the checks stop.
 */
#define SCHED_WATCHDOG_DEFAULT_MS	30000
#define SCHED_WATCHDOG_MIN_MS		100
#define SCHED_WATCHDOG_MAX_MS		3600000
#define SCHED_WATCHDOG_CHECKS		8
#define SCHED_WATCHDOG_MAX_PERIOD_MS	1000

static unsigned int sched_watchdog_ms __read_mostly = SCHED_WATCHDOG_DEFAULT_MS;
static bool sched_watchdog_armed;
static unsigned long sched_watchdog_last_check;
static unsigned int sched_watchdog_checks_run;
static struct hrtimer sched_watchdog_timer;

/* 0 (off) or a timeout the checks can resolve and jiffies can hold. */
static bool sched_watchdog_ms_valid(unsigned int ms)
{
	return !ms || (ms >= SCHED_WATCHDOG_MIN_MS && ms <= SCHED_WATCHDOG_MAX_MS);
}

/* How often to check for a timeout of @ms: a stall is seen within ms + period. */
static unsigned int sched_watchdog_period_ms(unsigned int ms)
{
	return clamp_t(unsigned int, ms / SCHED_WATCHDOG_CHECKS, 1,
		       SCHED_WATCHDOG_MAX_PERIOD_MS);
}

/* The worker that runs the checks and the thread that runs the fallback. */
static bool sched_watchdog_threads(void)
{
	return READ_ONCE(sched_class_worker) && READ_ONCE(sched_fallback_thread);
}

/* Run the checks if a class other than CFS is selected and a timeout set. */
static void sched_watchdog_arm(void)
{
	unsigned int ms = sched_watchdog_ms;

	lockdep_assert_held(&sched_watchdog_lock);
	WRITE_ONCE(sched_watchdog_armed, false);
	/* The handler never takes this lock: waiting for it cannot deadlock. */
	hrtimer_cancel(&sched_watchdog_timer);
	if (!ms || READ_ONCE(sched_normal_choice) == &fair_sched_class ||
	    !sched_watchdog_threads())
		return;
	WRITE_ONCE(sched_watchdog_last_check, jiffies);
	WRITE_ONCE(sched_watchdog_armed, true);
	hrtimer_start(&sched_watchdog_timer, ms_to_ktime(sched_watchdog_period_ms(ms)),
		      HRTIMER_MODE_REL_HARD);
}

struct sched_stall {
	const char	*class;
	char		comm[TASK_COMM_LEN];
	pid_t		pid;
	int		cpu;
	unsigned int	waited_ms;
	unsigned int	rtdl_pct;
};

/* Realtime and deadline work held the CPU at least this share of late. */
#define SCHED_WATCHDOG_RTDL_PCT		50

/*
 * The share of a CPU's recent time (PELT's averages, the last ~100 ms)
 * that went to realtime and deadline tasks, in percent of its capacity.
 */
static unsigned int sched_watchdog_rtdl_pct(unsigned long util_rt, unsigned long util_dl)
{
	return min_t(unsigned long, (util_rt + util_dl) * 100 / SCHED_CAPACITY_SCALE, 100);
}

static unsigned int sched_watchdog_rq_rtdl_pct(struct rq *rq)
{
#ifdef CONFIG_SMP
	return sched_watchdog_rtdl_pct(READ_ONCE(rq->avg_rt.util_avg),
				       READ_ONCE(rq->avg_dl.util_avg));
#else
	return 0;
#endif
}

/*
 * Whether the task's class says it waits behind better work (SCHED_IDLE
 * behind normal tasks, a worse BMQ level): the starvation a class causes
 * by its own rules is not a broken class.
 */
static bool sched_watchdog_behind_better(struct rq *rq, struct task_struct *p)
{
	const struct sched_class *class = p->sched_class;

	lockdep_assert_rq_held(rq);
	return class->task_behind_better && class->task_behind_better(rq, p);
}

/*
 * A check asks the class about a task from two periods before the
 * timeout, so that the check before the one that could report it has
 * asked too, however late the worker ran it.
 */
static bool sched_watchdog_asks(unsigned long waited, unsigned long timeout,
				unsigned long period)
{
	return waited + 2 * period > timeout;
}

/*
 * A wait of @waited jiffies is a stall once it passes @timeout, unless
 * the task waits behind better work (@behind) or did at the previous
 * check (@behind_before): a check in the instant better work ends finds
 * the task that waited behind it not yet run, before its class had a
 * chance to run it. The next check reports it if it still has not run.
 */
static bool sched_watchdog_stalled(unsigned long waited, unsigned long timeout,
				   bool behind, bool behind_before)
{
	return waited > timeout && !behind && !behind_before;
}

/*
 * Waiting tasks a check looks at with one runqueue locked and interrupts
 * off, as sysctl_sched_nr_migrate bounds mainline's walks: a CPU with
 * thousands of waiting tasks is checked in batches, the lock dropped in
 * between.
 */
#define SCHED_WATCHDOG_BATCH	32

/* One stall check: its number, and the timeout and period in jiffies. */
struct sched_watchdog_pass {
	unsigned int	nr;
	unsigned long	timeout;
	unsigned long	period;
};

/*
 * Looks at up to SCHED_WATCHDOG_BATCH waiting tasks from the head of
 * @rq's list and returns how many: the first stalled fills @stall and
 * ends the batch; the others go to the tail, so that the next batch
 * looks at the next ones.
 */
static unsigned int sched_watchdog_check_batch(struct rq *rq,
					       const struct sched_watchdog_pass *pass,
					       struct sched_stall *stall, bool *found)
{
	struct list_head *waiting = &rq->sched_runnable;
	unsigned long now = jiffies, waited;
	struct task_struct *p;
	unsigned int seen = 0;
	bool behind, before;

	lockdep_assert_rq_held(rq);
	while (seen < SCHED_WATCHDOG_BATCH && !list_empty(waiting)) {
		p = list_first_entry(waiting, struct task_struct, sched_runnable_node);
		seen++;
		waited = now - p->sched_runnable_since;
		if (!sched_watchdog_asks(waited, pass->timeout, pass->period)) {
			list_move_tail(&p->sched_runnable_node, waiting);
			continue;
		}
		behind = sched_watchdog_behind_better(rq, p);
		before = p->sched_behind_better_check == pass->nr - 1;
		if (behind)
			p->sched_behind_better_check = pass->nr;
		if (!sched_watchdog_stalled(waited, pass->timeout, behind, before)) {
			list_move_tail(&p->sched_runnable_node, waiting);
			continue;
		}
		stall->class = sched_class_name(p->sched_class);
		/* As the sched tracepoints do: task_lock() nests outside rq locks. */
		memcpy(stall->comm, p->comm, TASK_COMM_LEN);
		stall->comm[TASK_COMM_LEN - 1] = '\0';
		stall->pid = task_pid_nr(p);
		stall->cpu = cpu_of(rq);
		stall->waited_ms = jiffies_to_msecs(waited);
		stall->rtdl_pct = sched_watchdog_rq_rtdl_pct(rq);
		*found = true;
		break;
	}
	return seen;
}

/*
 * The first stall on @rq's list, looking at about as many tasks as it
 * held when the check came, a batch at a time.
 */
static bool sched_watchdog_check_rq(struct rq *rq, const struct sched_watchdog_pass *pass,
				    struct sched_stall *stall)
{
	unsigned int todo = READ_ONCE(rq->nr_running), seen;
	bool found = false;
	struct rq_flags rf;

	/*
	 * Nothing waits there: no need for its lock, which a class that
	 * shares one queue among CPUs makes a contended one. A stall keeps
	 * its task listed, so a stale read only delays its report to the
	 * next check.
	 */
	if (list_empty(&rq->sched_runnable))
		return false;
	do {
		rq_lock_irqsave(rq, &rf);
		seen = sched_watchdog_check_batch(rq, pass, stall, &found);
		rq_unlock_irqrestore(rq, &rf);
		todo -= min(todo, seen);
		cond_resched();
	} while (!found && seen == SCHED_WATCHDOG_BATCH && todo);
	return found;
}

static void sched_watchdog_checkfn(struct kthread_work *work)
{
	unsigned int ms = READ_ONCE(sched_watchdog_ms);
	struct sched_watchdog_pass pass;
	struct sched_stall stall;
	bool found = false;
	int cpu;

	if (!READ_ONCE(sched_watchdog_armed) || !ms)
		return;
	WRITE_ONCE(sched_watchdog_last_check, jiffies);
	/* Only this worker runs checks: the count needs no lock. */
	pass.nr = ++sched_watchdog_checks_run;
	pass.timeout = msecs_to_jiffies(ms);
	pass.period = msecs_to_jiffies(sched_watchdog_period_ms(ms));
	for_each_online_cpu(cpu) {
		found = sched_watchdog_check_rq(cpu_rq(cpu), &pass, &stall);
		if (found)
			break;
	}
	if (!found)
		return;
	/* Unless the tick or sysrq asked first. */
	if (!sched_fallback_request("watchdog"))
		return;
	/* Realtime or deadline work held the CPU: the class is not blamed. */
	if (stall.rtdl_pct >= SCHED_WATCHDOG_RTDL_PCT)
		pr_warn("sched: watchdog: %s[%d] runnable on CPU %d for %u ms (limit %u ms) while realtime or deadline tasks held %u%% of it, falling back to cfs\n",
			stall.comm, stall.pid, stall.cpu, stall.waited_ms, ms, stall.rtdl_pct);
	else
		pr_warn("sched: watchdog: %s left %s[%d] runnable on CPU %d for %u ms (limit %u ms), falling back to cfs\n",
			stall.class, stall.comm, stall.pid, stall.cpu, stall.waited_ms, ms);
}

static DEFINE_KTHREAD_WORK(sched_watchdog_check_work, sched_watchdog_checkfn);

static enum hrtimer_restart sched_watchdog_timerfn(struct hrtimer *timer)
{
	struct kthread_worker *worker = READ_ONCE(sched_class_worker);
	unsigned int ms = READ_ONCE(sched_watchdog_ms);

	if (!READ_ONCE(sched_watchdog_armed) || !ms)
		return HRTIMER_NORESTART;
	if (worker)
		kthread_queue_work(worker, &sched_watchdog_check_work);
	hrtimer_forward_now(timer, ms_to_ktime(sched_watchdog_period_ms(ms)));
	return HRTIMER_RESTART;
}

/**
 * sched_watchdog_tick - fall back to CFS if the stall checks stopped
 *
 * Called by scheduler_tick() without the rq lock. The checks run in an RT
 * kthread; if even that has not run for a whole timeout (an RT hog, or a
 * wedged worker), normal tasks cannot be trusted to run either.
 */
void sched_watchdog_tick(void)
{
	unsigned long last = READ_ONCE(sched_watchdog_last_check);
	unsigned int ms = READ_ONCE(sched_watchdog_ms);

	if (!READ_ONCE(sched_watchdog_armed) || !ms || READ_ONCE(sched_class_switching) ||
	    !time_after(jiffies, last + msecs_to_jiffies(ms)))
		return;
	if (sched_fallback_request("watchdog: no check"))
		pr_warn("sched: watchdog: the stall check has not run for %u ms (limit %u ms), falling back to cfs\n",
			jiffies_to_msecs(jiffies - last), ms);
}

/* kernel.sched_watchdog_ms: 0 turns the watchdog off; root only. */
/* Set a valid timeout and re-arm; -ENODEV without the watchdog's threads. */
static int sched_watchdog_set(unsigned int ms)
{
	if (!sched_watchdog_threads())
		return -ENODEV;
	raw_spin_lock(&sched_watchdog_lock);
	WRITE_ONCE(sched_watchdog_ms, ms);
	sched_watchdog_arm();
	raw_spin_unlock(&sched_watchdog_lock);
	return 0;
}

static int sched_watchdog_sysctl_handler(struct ctl_table *table, int write,
					 void *buffer, size_t *lenp, loff_t *ppos)
{
	unsigned int ms = READ_ONCE(sched_watchdog_ms);
	struct ctl_table tmp = {
		.data	= &ms,
		.maxlen	= sizeof(ms),
	};
	int ret;

	ret = proc_douintvec(&tmp, write, buffer, lenp, ppos);
	if (ret || !write)
		return ret;
	if (!sched_watchdog_ms_valid(ms)) {
		pr_warn_ratelimited("sched: kernel.sched_watchdog_ms takes 0 (off) or %u..%u, not %u\n",
				    SCHED_WATCHDOG_MIN_MS, SCHED_WATCHDOG_MAX_MS, ms);
		return -EINVAL;
	}
	ret = sched_watchdog_set(ms);
	if (ret)
		pr_warn_ratelimited("sched: no sched_class or sched_fallback thread: kernel.sched_watchdog_ms stays %u\n",
				    READ_ONCE(sched_watchdog_ms));
	return ret;
}

#ifdef CONFIG_SCHED_DEBUG
/*
 * debugfs sched/inject_stall_pid: a pid whose task its class's pick
 * passes over (sched_stall_injected()), so that the watchdog's tests can
 * break a class on purpose; 0 turns it off.
 */
#define SCHED_STALL_PID_MAX	((int)PID_MAX_LIMIT)

DEFINE_STATIC_KEY_FALSE(sched_stall_inject_key);
pid_t sched_stall_inject_pid;
static DEFINE_MUTEX(sched_stall_inject_mutex);

static ssize_t sched_stall_inject_write(struct file *file, const char __user *ubuf,
					size_t count, loff_t *ppos)
{
	int pid, ret;

	ret = kstrtoint_from_user(ubuf, count, 10, &pid);
	if (ret || pid < 0 || pid > SCHED_STALL_PID_MAX) {
		pr_warn_ratelimited("sched: inject_stall_pid takes 0 (off) or a pid up to %d\n",
				    SCHED_STALL_PID_MAX);
		return -EINVAL;
	}
	mutex_lock(&sched_stall_inject_mutex);
	WRITE_ONCE(sched_stall_inject_pid, pid);
	if (pid)
		static_branch_enable(&sched_stall_inject_key);
	else
		static_branch_disable(&sched_stall_inject_key);
	mutex_unlock(&sched_stall_inject_mutex);
	return count;
}

static int sched_stall_inject_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%d\n", READ_ONCE(sched_stall_inject_pid));
	return 0;
}

static int sched_stall_inject_open(struct inode *inode, struct file *file)
{
	return single_open(file, sched_stall_inject_show, NULL);
}

static const struct file_operations sched_stall_inject_fops = {
	.open		= sched_stall_inject_open,
	.read		= seq_read,
	.write		= sched_stall_inject_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static int __init sched_stall_inject_init(void)
{
	/* kernel/sched/debug.c made "sched" in an earlier late initcall. */
	struct dentry *sched = debugfs_lookup("sched", NULL);

	if (!sched)
		return 0;
	debugfs_create_file("inject_stall_pid", 0600, sched, NULL, &sched_stall_inject_fops);
	dput(sched);
	return 0;
}
late_initcall_sync(sched_stall_inject_init);
#endif

#ifdef CONFIG_MAGIC_SYSRQ
/* sysrq-S: the console's way back when the shell no longer gets CPU. */
static void sched_sysrq_fallback(int key)
{
	if (!sched_fallback_request("sysrq"))
		pr_info("sched: a fallback to cfs is already under way, or none can run\n");
}

static const struct sysrq_key_op sched_sysrq_fallback_op = {
	.handler	= sched_sysrq_fallback,
	.help_msg	= "reset-sched-class(S)",
	.action_msg	= "Moving normal tasks back to cfs",
	.enable_mask	= SYSRQ_ENABLE_RTNICE,
};
#endif

/*
 * One write at a time, and none while a fallback is pending: a class the
 * watchdog or sysrq-S is leaving must not be chosen again before it left.
 */
static int sched_class_switch(const struct sched_class *choice)
{
	struct kthread_worker *worker = READ_ONCE(sched_class_worker);
	struct sched_class_switch_work sw = { .choice = choice };

	if (!worker)
		return -ENODEV;
	if (atomic_cmpxchg(&sched_class_write_pending, 0, 1))
		return -EBUSY;
	if (sched_fallback_pending()) {
		atomic_set(&sched_class_write_pending, 0);
		return -EBUSY;
	}
	kthread_init_work(&sw.work, sched_class_switch_workfn);
	kthread_queue_work(worker, &sw.work);
	kthread_flush_work(&sw.work);
	atomic_set_release(&sched_class_write_pending, 0);
	return 0;
}

/* A switch or a fallback is queued or running. */
static bool sched_class_busy(void)
{
	return atomic_read(&sched_class_write_pending) || sched_fallback_pending();
}

static int __init sched_class_switch_init(void)
{
	struct kthread_worker *worker;
	struct task_struct *thread;

	sched_class_settle(NULL);
	hrtimer_init(&sched_watchdog_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	sched_watchdog_timer.function = sched_watchdog_timerfn;
	worker = kthread_create_worker(0, "sched_class");
	if (IS_ERR(worker)) {
		pr_warn("sched: no worker for class switches (%ld): kernel.sched_class is fixed\n",
			PTR_ERR(worker));
		return PTR_ERR(worker);
	}
	sched_set_fifo(worker->task);
	WRITE_ONCE(sched_class_worker, worker);
	thread = kthread_run(sched_fallback_threadfn, NULL, "sched_fallback");
	if (IS_ERR(thread)) {
		pr_warn("sched: no thread for fallbacks (%ld): no watchdog, no sysrq-S\n",
			PTR_ERR(thread));
	} else {
		sched_set_fifo(thread);
		WRITE_ONCE(sched_fallback_thread, thread);
	}
#ifdef CONFIG_MAGIC_SYSRQ
	if (register_sysrq_key('S', &sched_sysrq_fallback_op))
		pr_warn("sched: sysrq-S is taken: no console fallback to cfs\n");
#endif
	raw_spin_lock(&sched_watchdog_lock);
	sched_watchdog_arm();
	raw_spin_unlock(&sched_watchdog_lock);
	return 0;
}
#else
static int sched_class_switch(const struct sched_class *choice)
{
	return -EINVAL;
}

static inline bool sched_class_busy(void)
{
	return false;
}

static inline int sched_class_switch_init(void)
{
	return 0;
}
#endif /* CONFIG_SCHED_CLASS_SWITCH */

/*
 * kernel.sched_class: reading gives the class of normal tasks; writing a
 * known name moves every normal task to that class (root only).
 */
static int sched_class_sysctl_handler(struct ctl_table *table, int write,
				      void *buffer, size_t *lenp, loff_t *ppos)
{
	const struct sched_class *choice, *cur = READ_ONCE(sched_normal_choice);
	char name[SCHED_CLASS_NAME_LEN] = "";
	struct ctl_table tmp = {
		.data	= name,
		.maxlen	= sizeof(name),
	};
	int ret;

	if (!write) {
		strscpy(name, sched_class_name(cur), sizeof(name));
		return proc_dostring(&tmp, 0, buffer, lenp, ppos);
	}
	ret = proc_dostring(&tmp, 1, buffer, lenp, ppos);
	if (ret)
		return ret;
	choice = sched_class_lookup(name);
	if (!choice) {
		pr_warn_ratelimited("sched: unknown scheduler \"%s\" written to kernel.sched_class, keeping %s\n",
				    name, sched_class_name(cur));
		return -EINVAL;
	}
	if (sched_class_busy()) {
		pr_warn_ratelimited("sched: a class switch is under way, refusing \"%s\" for kernel.sched_class\n",
				    name);
		return -EBUSY;
	}
	if (choice == cur)
		return 0;
	return sched_class_switch(choice);
}

static struct ctl_table sched_class_sysctls[] = {
	{
		.procname	= "sched_class",
		.maxlen		= SCHED_CLASS_NAME_LEN,
		.mode		= 0644,
		.proc_handler	= sched_class_sysctl_handler,
	},
#ifdef CONFIG_SCHED_CLASS_SWITCH
	{
		.procname	= "sched_watchdog_ms",
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= sched_watchdog_sysctl_handler,
	},
#endif
	{}
};

/**
 * sched_class_select_normal - the class that runs normal tasks
 *
 * Called once from sched_init(), after "sched=" was parsed and before the
 * first task is forked: "sched=" if given, else the Kconfig default.
 */
const struct sched_class * __init sched_class_select_normal(void)
{
	const struct sched_class *choice;

	choice = sched_normal_override ?: sched_class_lookup(CONFIG_SCHED_DEFAULT_NAME);
	if (WARN_ON_ONCE(!choice))
		choice = &fair_sched_class;
	sched_normal_choice = choice;
	return choice;
}

static int __init sched_class_select_init(void)
{
	const struct sched_class *choice = sched_normal_choice;

	pr_info("sched: normal tasks run on %s (%s)\n", sched_class_name(choice),
		sched_normal_override ? "sched=" : "default");
	register_sysctl_init("kernel", sched_class_sysctls);
	return sched_class_switch_init();
}
late_initcall(sched_class_select_init);

#ifdef CONFIG_SCHED_CLASS_SELECT_KUNIT_TEST
#include "class_select_test.c"
#endif
