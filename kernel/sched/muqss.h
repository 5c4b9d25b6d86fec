/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MuQSS scheduling class: its constants, the skip list and the pure
 * arithmetic of deadlines, keys, preemption and locality, kept apart from
 * the class so that KUnit can test them on plain numbers.
 * Documentation/scheduler/muqss.rst.
 */
#ifndef _KERNEL_SCHED_MUQSS_H
#define _KERNEL_SCHED_MUQSS_H

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/sched/muqss.h>
#include <linux/smp.h>
#include <linux/spinlock_types.h>
#include <linux/string.h>
#include <linux/types.h>

/* rr_interval, ms: the slice every task gets and the deadlines' scale. */
#define MUQSS_RR_DEFAULT_MS	6
#define MUQSS_RR_MIN_MS		1
#define MUQSS_RR_MAX_MS		1000
/* MuQSS's units: a "ms" is 2^20 ns and a "us" 2^10 ns. */
#define MUQSS_MS_SHIFT		20
#define MUQSS_US_SHIFT		10
/* Less than this left of a slice counts as an expired slice (100 "us"). */
#define MUQSS_RESCHED_NS	(100ULL << MUQSS_US_SHIFT)
/* prio_ratios[]: nice -20 is 128, each level 11/10 of the one before. */
#define MUQSS_RATIO_BASE	128
/* Keys of SCHED_IDLE (MuQSS's SCHED_IDLEPRIO) tasks sort after all others. */
#define MUQSS_IDLE_KEY		(0xFULL << 60)
/*
 * Key of every SCHED_ISO task while its CPU is not refractory: before any
 * deadline, equal among them so they run in turn; 0 means "never
 * preempted" in the preemption test.
 */
#define MUQSS_ISO_KEY		1ULL
/* iso_cpu: the share of a CPU realtime and ISO tasks may take, percent. */
#define MUQSS_ISO_CPU_DEFAULT	70
/* ISO accounting: a window decaying over 5 s, 100 per realtime or ISO tick. */
#define MUQSS_ISO_PERIOD	(5 * HZ)
#define MUQSS_ISO_TICK		100
/* Refractory ends below 115/128 of the limit (MuQSS's hysteresis). */
#define MUQSS_ISO_HYST_NUM	115
#define MUQSS_ISO_HYST_DEN	128

/* Locality of one CPU seen from another, as MuQSS grades it. */
enum muqss_locality {
	MUQSS_LOC_SAME		= 0,
	MUQSS_LOC_SMT		= 1,	/* SMT sibling */
	MUQSS_LOC_LLC		= 2,	/* shares the last-level cache */
	MUQSS_LOC_MC		= 3,	/* same package */
	MUQSS_LOC_SMP		= 4,	/* same node */
	MUQSS_LOC_DISTANT	= 5,	/* another node */
	MUQSS_LOC_NONE		= 0xff,	/* another root domain: never looked at */
};

/* best_mask_cpu()'s penalties for an idle CPU: the lowest sum wins. */
#define MUQSS_DIFF_THREAD	1
#define MUQSS_DIFF_CORE_LLC	2
#define MUQSS_DIFF_CORE		4
#define MUQSS_CACHE_BUSY	8
#define MUQSS_DIFF_CPU		16
#define MUQSS_DIFF_NODE		64

/*
 * rqshare: which CPUs share one queue and its lock, MuQSS's choices from
 * none (a queue per CPU) to all (one queue for the machine).
 */
enum muqss_share {
	MUQSS_SHARE_NONE,
	MUQSS_SHARE_SMT,	/* SMT siblings */
	MUQSS_SHARE_LLC,	/* CPUs of one last-level cache */
	MUQSS_SHARE_MC,		/* CPUs of one package */
	MUQSS_SHARE_SMP,	/* CPUs of one NUMA node */
	MUQSS_SHARE_ALL,	/* every CPU not isolated */
	MUQSS_SHARE_MODES,
};

struct muqss_sl {
	struct muqss_sl_node	head;
	unsigned int		level;		/* highest level in use */
	unsigned int		entries;
};

struct muqss_rq {
	/* Queued MuQSS tasks by key; the running one is not listed. */
	struct muqss_sl		sl;
	/* First queued key, U64_MAX when none: read by other CPUs unlocked. */
	u64			best_key;
	/* Key of the running MuQSS task, U64_MAX when this CPU idles. */
	u64			curr_key;
	/* Its deadline, for the preemption test between two ISO tasks. */
	u64			curr_deadline;
	/* MuQSS tasks here, the running one included. */
	unsigned int		nr;
	/*
	 * The queue this CPU lists its tasks in and picks from: its own, or
	 * its share group's leader's under rqshare, whose lock rq->lockp
	 * then names. Changed only with every CPU stopped
	 * (muqss_share_stop()), as is rq->lockp.
	 */
	struct muqss_rq		*share;
	/* On a queue's owner: MuQSS tasks of every CPU sharing it. */
	unsigned int		share_nr;
	/* Skip-list level draws. */
	u32			seed;
	/* SCHED_ISO accounting: decaying sum of MUQSS_ISO_TICK per tick. */
	u32			iso_ticks;
	/* Over iso_cpu: ISO tasks here are keyed and run as normal ones. */
	bool			iso_refractory;
	/* Jiffies of the last accounted tick: an idle CPU skips ticks. */
	unsigned long		iso_jiffies;
#ifdef CONFIG_SMP
	/* Other CPUs of the root domain by locality, and each one's locality. */
	u16			*order;
	u8			*loc;
	unsigned int		nr_order;
	/* The look's order: the nearest CPU of every other queue. */
	u16			*look;
	unsigned int		nr_look;
	/* The root domain changed: rebuild @order at the next pick. */
	bool			order_stale;
	/* Makes this CPU look at the other queues; one sender at a time. */
	call_single_data_t	look_csd;
	atomic_t		look_kicked;
#endif
};

/* prio_ratios[] over nice -20..19 (index static_prio - MAX_RT_PRIO). */
static inline void muqss_fill_ratios(u32 *ratio)
{
	int i;

	ratio[0] = MUQSS_RATIO_BASE;
	for (i = 1; i < NICE_WIDTH; i++)
		ratio[i] = ratio[i - 1] * 11 / 10;
}

/* How far ahead of now a fresh deadline lies: ratio * rr "ms" / 128. */
static inline u64 muqss_deadline_diff(u32 ratio, unsigned int rr_ms)
{
	return ((u64)ratio * rr_ms) << (MUQSS_MS_SHIFT - 7);
}

/* The slice every task gets: rr_interval. */
static inline u64 muqss_slice_ns(unsigned int rr_ms)
{
	return (u64)rr_ms << MUQSS_MS_SHIFT;
}

/*
 * yield_to(): the target's slice gains what is left of the yielder's, up
 * to a whole slice @full.
 */
static inline s64 muqss_yield_to_slice(s64 target, s64 yielder, u64 full)
{
	return min_t(s64, target + max_t(s64, yielder, 0), full);
}

/*
 * Skip-list key: the deadline; a SCHED_IDLE task's sorts after every
 * other, unless it may not wait that long (it holds something others
 * need, or is exiting), when it sorts one longest deadline later.
 */
static inline u64 muqss_key(u64 deadline, bool idleprio, bool suitable, u64 longest)
{
	if (!idleprio)
		return deadline;
	return suitable ? deadline | MUQSS_IDLE_KEY : deadline + longest;
}

static inline bool muqss_key_idleprio(u64 key)
{
	return key != U64_MAX && (key & MUQSS_IDLE_KEY) == MUQSS_IDLE_KEY;
}

/*
 * The stall watchdog's rule: a task listed under @key waits behind better
 * work for good only as a SCHED_IDLE task while a task that is not one
 * runs or waits where it waits (@best: the lowest key there, U64_MAX for
 * none). Every other key is a deadline that later deadlines pass, so a
 * normal task reaches the head in bounded time, and ISO time is capped.
 */
static inline bool muqss_waits_behind(u64 key, u64 best)
{
	return muqss_key_idleprio(key) && best != U64_MAX && !muqss_key_idleprio(best);
}

/*
 * can_preempt(): may a woken task with @key and @deadline take a CPU whose
 * running task has @curr_key and @curr_deadline (U64_MAX key: idle)?
 * Better priority always; at equal priority a strictly earlier deadline,
 * never for SCHED_BATCH; a SCHED_IDLE task never takes a busy CPU. Keys
 * are deadlines but for ISO tasks, which share one key, so two of them
 * compare their deadlines as MuQSS compares two tasks of one priority.
 */
static inline bool muqss_can_preempt(u64 key, u64 deadline, bool batch, bool idleprio,
				     u64 curr_key, u64 curr_deadline)
{
	bool curr_idle = muqss_key_idleprio(curr_key);

	if (curr_key == U64_MAX)
		return true;
	if (idleprio)
		return false;
	if (curr_idle)
		return true;
	if (key == MUQSS_ISO_KEY && curr_key == MUQSS_ISO_KEY)
		return !batch && deadline < curr_deadline;
	return !batch && key < curr_key;
}

/*
 * iso_tick(): a tick that ran a realtime or ISO task. The window decays by
 * 1/period and gains MUQSS_ISO_TICK, so it settles at period * percent of
 * ticks so spent; over period * @iso_cpu the CPU turns refractory.
 */
static inline void muqss_iso_busy_tick(u32 *ticks, bool *refractory, unsigned int iso_cpu)
{
	u64 t = (u64)*ticks * (MUQSS_ISO_PERIOD - 1) / MUQSS_ISO_PERIOD + MUQSS_ISO_TICK;

	if (t > (u64)MUQSS_ISO_PERIOD * iso_cpu)
		*refractory = true;
	*ticks = min_t(u64, t, (u64)MUQSS_ISO_PERIOD * 100);
}

/*
 * no_iso_tick(): @n ticks of anything else (normal tasks, idle) decay the
 * window; refractory ends once it is below 115/128 of the limit.
 */
static inline void muqss_iso_other_ticks(u32 *ticks, bool *refractory, unsigned long n,
					 unsigned int iso_cpu)
{
	if (n >= MUQSS_ISO_PERIOD)
		*ticks = 0;
	else
		*ticks = (u64)*ticks * (MUQSS_ISO_PERIOD - n) / MUQSS_ISO_PERIOD;
	if (*refractory && *ticks < MUQSS_ISO_PERIOD *
				    (iso_cpu * MUQSS_ISO_HYST_NUM / MUQSS_ISO_HYST_DEN))
		*refractory = false;
}

/* randomLevel(): the lowest set bit of 7 random ones, halved: 0..3. */
static inline unsigned int muqss_sl_random_level(u32 seed)
{
	unsigned long bits = seed & 0x7f;

	return (bits ? __ffs(bits) : 7) / 2;
}

static inline void muqss_sl_init(struct muqss_sl *sl)
{
	int i;

	sl->head.key = U64_MAX;
	sl->head.level = MUQSS_SL_LEVELS - 1;
	for (i = 0; i < MUQSS_SL_LEVELS; i++) {
		sl->head.next[i] = &sl->head;
		sl->head.prev[i] = &sl->head;
	}
	sl->level = 0;
	sl->entries = 0;
}

static inline struct muqss_sl_node *muqss_sl_first(struct muqss_sl *sl)
{
	return sl->head.next[0] == &sl->head ? NULL : sl->head.next[0];
}

/*
 * Insert @node with @key at random level @level; equal keys go after the
 * ones already there (FIFO). A level above the list's grows it by one.
 */
static inline void muqss_sl_insert(struct muqss_sl *sl, struct muqss_sl_node *node,
				   u64 key, unsigned int level)
{
	struct muqss_sl_node *x = &sl->head;
	int i;

	if (level > sl->level)
		level = ++sl->level;
	node->key = key;
	node->level = level;
	for (i = sl->level; i >= 0; i--) {
		while (x->next[i] != &sl->head && x->next[i]->key <= key)
			x = x->next[i];
		if (i <= level) {
			node->next[i] = x->next[i];
			node->prev[i] = x;
			x->next[i]->prev[i] = node;
			x->next[i] = node;
		}
	}
	sl->entries++;
}

/* Unlink @node: O(level), no search. */
static inline void muqss_sl_delete(struct muqss_sl *sl, struct muqss_sl_node *node)
{
	int i;

	for (i = 0; i <= node->level; i++) {
		node->prev[i]->next[i] = node->next[i];
		node->next[i]->prev[i] = node->prev[i];
	}
	while (sl->level && sl->head.next[sl->level] == &sl->head)
		sl->level--;
	sl->entries--;
}

/*
 * The order in which @this looks at the other @nr CPUs, graded by @loc
 * (MUQSS_LOC_NONE: skipped): nearest locality first, and within one
 * locality scanning up from @this for CPUs in the lower half of the
 * machine and down for the upper half, so that neighbours do not all
 * look at the same queue first. Returns how many were written to @order.
 */
static inline unsigned int muqss_fill_order(int this, int nr, const u8 *loc, u16 *order)
{
	unsigned int n = 0;
	int level, k, cpu;

	for (level = MUQSS_LOC_SMT; level <= MUQSS_LOC_DISTANT; level++) {
		for (k = 1; k < nr; k++) {
			cpu = this < nr / 2 ? (this + k) % nr : (this - k + nr) % nr;
			if (loc[cpu] == level)
				order[n++] = cpu;
		}
	}
	return n;
}

/*
 * best_mask_cpu()'s rank of an idle CPU at @loc from the task's CPU (v0.210);
 * @cache_busy: a CPU sharing its last-level cache runs something. When the
 * task's own CPU is busy, every candidate in its cache has @cache_busy,
 * so its SMT sibling (9) ranks before another core of that cache (10).
 */
static inline unsigned int muqss_idle_rank(u8 loc, bool cache_busy)
{
	unsigned int rank = 0;

	if (loc == MUQSS_LOC_SAME)
		return 0;
	if (loc >= MUQSS_LOC_DISTANT)
		rank |= MUQSS_DIFF_NODE;
	else if (loc >= MUQSS_LOC_SMP)
		rank |= MUQSS_DIFF_CPU;
	else if (loc == MUQSS_LOC_MC)
		rank |= MUQSS_DIFF_CORE;
	else if (loc == MUQSS_LOC_LLC)
		rank |= MUQSS_DIFF_CORE_LLC;
	else
		rank |= MUQSS_DIFF_THREAD;
	if (cache_busy)
		rank |= MUQSS_CACHE_BUSY;
	return rank;
}

/* Does a candidate of @rank beat @best_rank? Ties go to a whole idle core. */
static inline bool muqss_idle_better(unsigned int rank, unsigned int best_rank,
				     bool core_idle)
{
	return rank < best_rank || (rank == best_rank && core_idle);
}

/*
 * try_preempt() with interactive off looks only at CPUs busier than the
 * woken task's own; with it on, at every CPU.
 */
static inline bool muqss_preempt_candidate(bool interactive, unsigned int nr_other,
					   unsigned int nr_this)
{
	return interactive || nr_other > nr_this;
}

static inline const char *muqss_share_name(enum muqss_share mode)
{
	switch (mode) {
	case MUQSS_SHARE_NONE:
		return "none";
	case MUQSS_SHARE_SMT:
		return "smt";
	case MUQSS_SHARE_LLC:
		return "llc";
	case MUQSS_SHARE_MC:
		return "mc";
	case MUQSS_SHARE_SMP:
		return "smp";
	case MUQSS_SHARE_ALL:
		return "all";
	default:
		return NULL;
	}
}

/* "rqshare=" and kernel.sched_muqss_rqshare: a mode, or -EINVAL. */
static inline int muqss_share_parse(const char *s)
{
	int mode;

	for (mode = 0; mode < MUQSS_SHARE_MODES; mode++) {
		if (sysfs_streq(s, muqss_share_name(mode)))
			return mode;
	}
	return -EINVAL;
}

/* Does a CPU at @loc from another share its queue under @mode? */
static inline bool muqss_share_loc(enum muqss_share mode, u8 loc)
{
	switch (mode) {
	case MUQSS_SHARE_SMT:
		return loc <= MUQSS_LOC_SMT;
	case MUQSS_SHARE_LLC:
		return loc <= MUQSS_LOC_LLC;
	case MUQSS_SHARE_MC:
		return loc <= MUQSS_LOC_MC;
	case MUQSS_SHARE_SMP:
		return loc <= MUQSS_LOC_SMP;
	case MUQSS_SHARE_ALL:
		return loc != MUQSS_LOC_NONE;
	default:
		return loc == MUQSS_LOC_SAME;
	}
}

/*
 * The CPU whose queue a CPU uses under @mode: the lowest of the @nr CPUs
 * it shares with, graded from it by @loc (MUQSS_LOC_NONE for CPUs that
 * are offline or isolated). The groups are the topology's, so every CPU
 * of one finds the same leader.
 */
static inline int muqss_share_leader(enum muqss_share mode, int nr, const u8 *loc)
{
	int cpu;

	for (cpu = 0; cpu < nr; cpu++) {
		if (muqss_share_loc(mode, loc[cpu]))
			return cpu;
	}
	return -1;
}

struct sched_class;
extern const struct sched_class muqss_sched_class;

#endif /* _KERNEL_SCHED_MUQSS_H */
