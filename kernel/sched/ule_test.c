// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of ULE's arithmetic (kernel/sched/ule.h) against values
 * worked out by hand from FreeBSD's formulas. Included from ule.c.
 */
#include <kunit/test.h>

#define MS(x)	((u64)(x) * NSEC_PER_MSEC)

/* The score over a grid of (run, sleep), boundaries included. */
static void ule_test_score_grid(struct kunit *test)
{
	static const struct {
		u64 run, slp;
		unsigned int score;
	} cases[] = {
		{ 0, 0, 0 },			/* nothing known yet */
		{ MS(100), MS(100), 50 },	/* equal: the midpoint */
		{ MS(1), 0, 100 },		/* never sleeps */
		{ 0, MS(1), 0 },		/* never runs */
		{ MS(100), MS(400), 12 },	/* 50 / (400/100) = 12.5 */
		{ MS(400), MS(100), 88 },	/* 50 + 50 - 50 / 4 */
		{ MS(10), MS(90), 5 },		/* 90 % asleep */
		{ MS(30), MS(70), 21 },		/* 70 % asleep: below 30 */
		{ MS(40), MS(60), 33 },		/* 60 % asleep: just above 30 */
		{ MS(375), MS(625), 30 },	/* 62.5 % asleep: the threshold */
		{ MS(5000), 1, 100 },		/* history capped, one side only */
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, ule_interact_score(cases[i].run, cases[i].slp),
				    cases[i].score, "run %llu slp %llu", cases[i].run,
				    cases[i].slp);
}

/* Scores stay within 0..100 and grow with run time. */
static void ule_test_score_monotonic(struct kunit *test)
{
	unsigned int prev = 0, score;
	u64 run;

	for (run = 0; run <= MS(2000); run += MS(50)) {
		score = ule_interact_score(run, MS(1000));
		KUNIT_EXPECT_LE(test, score, ULE_INTERACT_MAX);
		KUNIT_EXPECT_GE(test, score, prev);
		prev = score;
	}
}

static void ule_test_history_update(struct kunit *test)
{
	u64 run, slp;

	/* Below the 5 s cap: untouched. */
	run = MS(1000);
	slp = MS(3000);
	ule_interact_update(&run, &slp);
	KUNIT_EXPECT_EQ(test, run, MS(1000));
	KUNIT_EXPECT_EQ(test, slp, MS(3000));

	/* Just over the cap: both scaled by 4/5, the ratio kept. */
	run = MS(2000);
	slp = MS(3500);
	ule_interact_update(&run, &slp);
	KUNIT_EXPECT_EQ(test, run, MS(1600));
	KUNIT_EXPECT_EQ(test, slp, MS(2800));

	/* Over 6/5 of the cap: halved. */
	run = MS(3000);
	slp = MS(4000);
	ule_interact_update(&run, &slp);
	KUNIT_EXPECT_EQ(test, run, MS(1500));
	KUNIT_EXPECT_EQ(test, slp, MS(2000));

	/* Over twice the cap (a long sleep): only the direction is kept. */
	run = MS(100);
	slp = MS(20000);
	ule_interact_update(&run, &slp);
	KUNIT_EXPECT_EQ(test, slp, ULE_SLP_RUN_MAX);
	KUNIT_EXPECT_EQ(test, run, 1ULL);
	KUNIT_EXPECT_EQ(test, ule_interact_score(run, slp), 0U);
}

static void ule_test_fork_scaling(struct kunit *test)
{
	u64 run = MS(1000), slp = MS(3000);

	/* 4 s of history becomes 0.5 s: divided by 4000 / 500 = 8. */
	ule_interact_fork(&run, &slp);
	KUNIT_EXPECT_EQ(test, run, MS(125));
	KUNIT_EXPECT_EQ(test, slp, MS(375));
	KUNIT_EXPECT_EQ(test, ule_interact_score(run, slp),
			ule_interact_score(MS(1000), MS(3000)));

	/* A short history is inherited as it is. */
	run = MS(100);
	slp = MS(300);
	ule_interact_fork(&run, &slp);
	KUNIT_EXPECT_EQ(test, run, MS(100));
	KUNIT_EXPECT_EQ(test, slp, MS(300));
}

static void ule_test_priority_bands(struct kunit *test)
{
	int nice;

	/* Interactive: 120 + score at the default threshold, nice shifts it. */
	KUNIT_EXPECT_EQ(test, ule_timeshare_prio(0, 0, 0, 30), 120U);
	KUNIT_EXPECT_EQ(test, ule_timeshare_prio(29, 0, 0, 30), 149U);
	KUNIT_EXPECT_EQ(test, ule_timeshare_prio(20, -10, 0, 30), 130U);
	KUNIT_EXPECT_EQ(test, ule_timeshare_prio(5, -20, 0, 30), 120U);
	/* Distinct scores keep distinct priorities (the 2018 port's flaw). */
	KUNIT_EXPECT_LT(test, ule_timeshare_prio(3, 0, 0, 30),
			ule_timeshare_prio(4, 0, 0, 30));
	/* Batch: 172 + %CPU ticks (at most 31) + nice, within 152-223. */
	KUNIT_EXPECT_EQ(test, ule_timeshare_prio(30, 0, 0, 30), 172U);
	KUNIT_EXPECT_EQ(test, ule_timeshare_prio(60, 0, 31, 30), 203U);
	KUNIT_EXPECT_EQ(test, ule_timeshare_prio(100, 0, 99, 30), 203U);
	for (nice = -20; nice <= 19; nice++) {
		unsigned int lo = ule_timeshare_prio(100, nice, 0, 30);
		unsigned int hi = ule_timeshare_prio(100, nice, 31, 30);

		KUNIT_EXPECT_GE(test, lo, (unsigned int)ULE_PRI_MIN_BATCH);
		KUNIT_EXPECT_LE(test, hi, (unsigned int)ULE_PRI_MAX_BATCH);
	}
	/* Threshold 0 (SCHED_BATCH): never interactive. */
	KUNIT_EXPECT_EQ(test, ule_timeshare_prio(0, 0, 0, 0), 172U);
	/* %CPU ticks: half of a 10 s window is 16 of 32. */
	KUNIT_EXPECT_EQ(test, ule_pri_ticks(MS(5000), MS(10000)), 16U);
	KUNIT_EXPECT_EQ(test, ule_pri_ticks(MS(10000), MS(10000)), 31U);
	/* The window counts as at least one second. */
	KUNIT_EXPECT_EQ(test, ule_pri_ticks(MS(100), MS(100)), 3U);
}

/*
 * sched_interact_score()'s shortcut: at a threshold of 50 or less a task
 * that runs at least as long as it sleeps scores 50, history or none.
 */
static void ule_test_prio_score_shortcut(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ule_prio_score(MS(400), MS(100), 30), 50U);
	KUNIT_EXPECT_EQ(test, ule_prio_score(MS(100), MS(100), 30), 50U);
	KUNIT_EXPECT_EQ(test, ule_prio_score(0, 0, 30), 50U);
	KUNIT_EXPECT_EQ(test, ule_prio_score(MS(400), MS(100), 50), 50U);
	/* Sleeping more than running: the ratio, as before. */
	KUNIT_EXPECT_EQ(test, ule_prio_score(MS(100), MS(400), 30), 12U);
	/* Above 50 the ratio counts either way. */
	KUNIT_EXPECT_EQ(test, ule_prio_score(MS(400), MS(100), 51), 88U);
	KUNIT_EXPECT_EQ(test, ule_prio_score(0, 0, 51), 0U);
	/*
	 * What it changes: at a threshold of 40 a nice -15 hog scores 35 and
	 * is interactive (32 / 40 rounds to 0: priority 120); by its ratio
	 * (88 - 15) it would be batch. At 30 it is batch either way.
	 */
	KUNIT_EXPECT_EQ(test, ule_timeshare_prio(ule_prio_score(MS(400), MS(100), 40),
						 -15, 0, 40), 120U);
	KUNIT_EXPECT_GE(test, ule_timeshare_prio(ule_interact_score(MS(400), MS(100)),
						 -15, 0, 40), (unsigned int)ULE_PRI_MIN_BATCH);
	KUNIT_EXPECT_GE(test, ule_timeshare_prio(ule_prio_score(MS(400), MS(100), 30),
						 -15, 0, 30), (unsigned int)ULE_PRI_MIN_BATCH);
	/* No history: batch from the start at nice 0, as on FreeBSD. */
	KUNIT_EXPECT_GE(test, ule_timeshare_prio(ule_prio_score(0, 0, 30), 0, 0, 30),
			(unsigned int)ULE_PRI_MIN_BATCH);
}

/* sysctl_kern_quantum(): the minimum slice is a sixth of the slice. */
static void ule_test_slice_min_follows_slice(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ule_slice_min_of(ULE_SLICE_DEFAULT_NS / NSEC_PER_USEC),
			(int)(ULE_SLICE_DEFAULT_NS / ULE_SLICE_MIN_DIVISOR / NSEC_PER_USEC));
	KUNIT_EXPECT_EQ(test, ule_slice_min_of(60000), 10000);
	KUNIT_EXPECT_EQ(test, ule_slice_min_of(1000), 166);
	KUNIT_EXPECT_EQ(test, ule_slice_min_of(5), 1);
}

/*
 * sched_thread_priority() on a queued task: a better priority runs next
 * among batch tasks (slot ridx); an equal or worse one stays in its list
 * unless its band changes.
 */
static void ule_test_requeue_on_priority_change(struct kunit *test)
{
	/* Batch 180 -> 170: to ridx, not its calendar slot 26. */
	KUNIT_EXPECT_EQ(test, ule_requeue_how(180, 170), ULE_ADD_BORROWED);
	KUNIT_EXPECT_EQ(test, ule_add_index(ULE_ADD_BORROWED, 170, 10, 7, 33), 7U);
	KUNIT_EXPECT_EQ(test, ule_add_index(ULE_ADD_BY_PRIO, 170, 10, 7, 33), 26U);
	/* Equal or worse within its band: the list it was in. */
	KUNIT_EXPECT_EQ(test, ule_requeue_how(170, 170), ULE_ADD_KEEP);
	KUNIT_EXPECT_EQ(test, ule_requeue_how(170, 190), ULE_ADD_KEEP);
	KUNIT_EXPECT_EQ(test, ule_add_index(ULE_ADD_KEEP, 190, 10, 7, 33), 33U);
	KUNIT_EXPECT_EQ(test, ule_requeue_how(121, 140), ULE_ADD_KEEP);
	/* Worse into another band: where the new priority goes. */
	KUNIT_EXPECT_EQ(test, ule_requeue_how(140, 180), ULE_ADD_BY_PRIO);
	KUNIT_EXPECT_EQ(test, ule_requeue_how(200, 230), ULE_ADD_BY_PRIO);
	/* Better into the realtime band: the list of its priority. */
	KUNIT_EXPECT_EQ(test, ule_requeue_how(180, 130), ULE_ADD_BORROWED);
	KUNIT_EXPECT_EQ(test, ule_add_index(ULE_ADD_BORROWED, 130, 10, 7, 33),
			130U / ULE_RQ_PPQ);
	/* A preempted batch task goes to slot ridx as well (at its head). */
	KUNIT_EXPECT_EQ(test, ule_add_index(ULE_ADD_PREEMPTED, 200, 10, 7, 33), 7U);
}

static void ule_test_calendar_slot(struct kunit *test)
{
	/* Best batch priority: the insert index itself. */
	KUNIT_EXPECT_EQ(test, ule_calendar_slot(152, 0, 0), 0U);
	/* Worst: 64 * 71 / 72 = 63 slots later. */
	KUNIT_EXPECT_EQ(test, ule_calendar_slot(223, 0, 0), 63U);
	KUNIT_EXPECT_EQ(test, ule_calendar_slot(188, 10, 10), 42U);
	/* Wraps around the 64 slots. */
	KUNIT_EXPECT_EQ(test, ule_calendar_slot(223, 10, 10), 9U);
	/* Never the slot being drained while idx runs ahead of ridx... */
	KUNIT_EXPECT_EQ(test, ule_calendar_slot(152, 5, 5), 5U);
	KUNIT_EXPECT_EQ(test, ule_calendar_slot(223, 6, 5), 4U);
	/* ...which holds across the wrap too. */
	KUNIT_EXPECT_EQ(test, ule_calendar_slot(154, 63, 0), 63U);
}

static void ule_test_slice_by_load(struct kunit *test)
{
	u64 slice = ULE_SLICE_DEFAULT_NS, min = slice / ULE_SLICE_MIN_DIVISOR;

	KUNIT_EXPECT_EQ(test, ule_slice_for_load(0, slice, min), slice);
	KUNIT_EXPECT_EQ(test, ule_slice_for_load(1, slice, min), slice);
	KUNIT_EXPECT_EQ(test, ule_slice_for_load(2, slice, min), slice);
	/* Whole ticks: 12 / 2, 12 / 4 and 12 / 5 stathz ticks. */
	KUNIT_EXPECT_EQ(test, ule_slice_for_load(3, slice, min), 6ULL * ULE_STAT_TICK_NS);
	KUNIT_EXPECT_EQ(test, ule_slice_for_load(5, slice, min), 3ULL * ULE_STAT_TICK_NS);
	KUNIT_EXPECT_EQ(test, div_u64(ule_slice_for_load(6, slice, min), NSEC_PER_USEC),
			15748ULL);
	/* A slice of 100 ms is 12 ticks too: 12 / 5 = 2, the minimum. */
	KUNIT_EXPECT_EQ(test, ule_slice_for_load(6, 100 * NSEC_PER_MSEC, min), min);
	KUNIT_EXPECT_EQ(test, ule_slice_for_load(7, slice, min), min);
	KUNIT_EXPECT_EQ(test, ule_slice_for_load(100, slice, min), min);
	/* FreeBSD's defaults: 12 and 2 stathz ticks. */
	KUNIT_EXPECT_EQ(test, div_u64(slice, NSEC_PER_USEC), 94488ULL);
	KUNIT_EXPECT_EQ(test, div_u64(min, NSEC_PER_USEC), 15748ULL);
}

/* Sleeps earn the hz tick boundaries they cross, whatever their length. */
static void ule_test_sleep_credit(struct kunit *test)
{
	u64 t = 1000 * ULE_TICK_NS, hit = 0, slept = 0, off;

	KUNIT_EXPECT_EQ(test, ule_sleep_credit(t + 100000, t + 400000), 0ULL);
	KUNIT_EXPECT_EQ(test, ule_sleep_credit(t + 800000, t + 1100000), ULE_TICK_NS);
	KUNIT_EXPECT_EQ(test, ule_sleep_credit(t + 999999, t + ULE_TICK_NS), ULE_TICK_NS);
	KUNIT_EXPECT_EQ(test, ule_sleep_credit(t, t + 2500000), 2 * ULE_TICK_NS);
	KUNIT_EXPECT_EQ(test, ule_sleep_credit(t + 900000, t + 3100000), 3 * ULE_TICK_NS);
	KUNIT_EXPECT_EQ(test, ule_sleep_credit(t + 5, t + 5), 0ULL);
	KUNIT_EXPECT_EQ(test, ule_sleep_credit(t + 5, t), 0ULL);
	/* 0.3 ms sleeps at every 10 us phase: credited 0.3 ms on average. */
	for (off = 0; off < ULE_TICK_NS; off += 10000) {
		hit += ule_sleep_credit(t + off, t + off + 300000);
		slept += 300000;
	}
	KUNIT_EXPECT_EQ(test, hit, slept);
}

/*
 * A user task preempted in the kernel runs no worse than the best timeshare
 * priority until the tick sees it in user space or it leaves the CPU of its
 * own accord; sleeping and waking never leave it boosted.
 */
static void ule_test_kernel_preempt_boost(struct kunit *test)
{
	u8 f = ULE_F_QUEUED;

	f = ule_boost_update(f, ULE_EV_PREEMPT_KERNEL, false);
	KUNIT_EXPECT_TRUE(test, f & ULE_F_KPREEMPT);
	KUNIT_EXPECT_EQ(test, ule_boosted_prio(230, f), ULE_PRI_KERNEL_PREEMPT);
	KUNIT_EXPECT_EQ(test, ule_boosted_prio(200, f), 120U);
	/* Never worse than its own: a kernel thread keeps the kernel band. */
	KUNIT_EXPECT_EQ(test, ule_boosted_prio(100, f), 100U);
	/* Preempted again in the kernel, and its slice ends there: still boosted. */
	f = ule_boost_update(f, ULE_EV_PREEMPT_KERNEL, false);
	f = ule_boost_update(f, ULE_EV_SLICE_END, false);
	KUNIT_EXPECT_TRUE(test, f & ULE_F_KPREEMPT);
	KUNIT_EXPECT_FALSE(test, f & ULE_F_KSPENT);
	/* Each way back to its own priority. */
	KUNIT_EXPECT_FALSE(test, ule_boost_update(f, ULE_EV_USER, false) & ULE_F_KPREEMPT);
	KUNIT_EXPECT_FALSE(test, ule_boost_update(f, ULE_EV_SWITCH, false) & ULE_F_KPREEMPT);
	KUNIT_EXPECT_FALSE(test, ule_boost_update(f, ULE_EV_SLEEP, false) & ULE_F_KPREEMPT);
	KUNIT_EXPECT_FALSE(test, ule_boost_update(f, ULE_EV_WAKEUP, false) & ULE_F_KPREEMPT);
	KUNIT_EXPECT_EQ(test, ule_boosted_prio(230, ule_boost_update(f, ULE_EV_USER, false)),
			230U);
	/* Other flags pass through untouched. */
	KUNIT_EXPECT_TRUE(test, ule_boost_update(f, ULE_EV_SWITCH, false) & ULE_F_QUEUED);
}

/*
 * A switch asked for a waiting batch task puts the running task back in
 * its calendar slot; one asked for an interactive task, a kernel thread
 * or by a preemption leaves it at the head, and a slice end or a yield
 * always sends it to the tail.
 */
static void ule_test_switch_requeue(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, ule_requeue_head(0));
	KUNIT_EXPECT_TRUE(test, ule_requeue_head(ULE_F_QUEUED | ULE_F_KPREEMPT));
	KUNIT_EXPECT_FALSE(test, ule_requeue_head(ULE_F_SLICEEND));
	KUNIT_EXPECT_FALSE(test, ule_requeue_head(ULE_F_YIELD));
	KUNIT_EXPECT_FALSE(test, ule_requeue_head(ULE_F_NEEDRESCHED));

	KUNIT_EXPECT_FALSE(test, ule_requeue_head(ule_switch_for(0, ULE_PRI_MIN_BATCH)));
	KUNIT_EXPECT_FALSE(test, ule_requeue_head(ule_switch_for(0, ULE_PRI_MAX_BATCH)));
	KUNIT_EXPECT_TRUE(test, ule_requeue_head(ule_switch_for(0, ULE_PRI_MAX_INTERACT)));
	KUNIT_EXPECT_TRUE(test, ule_requeue_head(ule_switch_for(0, ULE_PRI_MIN_KERN)));
	KUNIT_EXPECT_TRUE(test, ule_requeue_head(ule_switch_for(0, ULE_PRI_MIN_IDLE)));
	/* Other flags pass through untouched. */
	KUNIT_EXPECT_EQ(test, ule_switch_for(ULE_F_QUEUED | ULE_F_KPREEMPT, ULE_PRI_MIN_BATCH),
			ULE_F_QUEUED | ULE_F_KPREEMPT | ULE_F_NEEDRESCHED);
}

/*
 * A kernel thread keeps the kernel band across any number of short runs
 * and sleeps, loses it after a whole slice without sleeping, whatever
 * preempts it meanwhile, and gets it back at its next wakeup.
 */
static void ule_test_kthread_slice(struct kunit *test)
{
	unsigned int batch = ule_timeshare_prio(100, 5, ULE_SCHED_PRI_RANGE - 1, 30);
	u8 f = 0;
	int i;

	KUNIT_EXPECT_EQ(test, ule_kthread_prio(5, f & ULE_F_KSPENT, batch), 105U);
	for (i = 0; i < 3; i++) {
		f = ule_boost_update(f, ULE_EV_SLEEP, true);
		f = ule_boost_update(f, ULE_EV_WAKEUP, true);
		f = ule_boost_update(f, ULE_EV_PREEMPT_KERNEL, true);
		f = ule_boost_update(f, ULE_EV_SWITCH, true);
	}
	KUNIT_EXPECT_EQ(test, f, 0);
	KUNIT_EXPECT_EQ(test, ule_kthread_prio(-20, f & ULE_F_KSPENT, batch), 80U);
	f = ule_boost_update(f, ULE_EV_SLICE_END, true);
	KUNIT_EXPECT_TRUE(test, f & ULE_F_KSPENT);
	KUNIT_EXPECT_EQ(test, ule_kthread_prio(5, f & ULE_F_KSPENT, batch), batch);
	KUNIT_EXPECT_EQ(test, batch, 208U);
	/* In-kernel preemption never lifts a spent kernel thread back. */
	f = ule_boost_update(f, ULE_EV_PREEMPT_KERNEL, true);
	KUNIT_EXPECT_FALSE(test, f & ULE_F_KPREEMPT);
	KUNIT_EXPECT_EQ(test, ule_boosted_prio(ule_kthread_prio(5, f & ULE_F_KSPENT, batch), f),
			batch);
	f = ule_boost_update(f, ULE_EV_USER, true);
	KUNIT_EXPECT_TRUE(test, f & ULE_F_KSPENT);
	/* Sleeping alone does not restore it; the wakeup does. */
	f = ule_boost_update(f, ULE_EV_SLEEP, true);
	KUNIT_EXPECT_TRUE(test, f & ULE_F_KSPENT);
	f = ule_boost_update(f, ULE_EV_WAKEUP, true);
	KUNIT_EXPECT_EQ(test, ule_kthread_prio(5, f & ULE_F_KSPENT, batch), 105U);
}

/*
 * The stall watchdog's rule: bands in order, strict lists within the
 * realtime and idle bands, and no batch task behind another.
 */
static void ule_test_waits_behind(struct kunit *test)
{
	unsigned int interact = ULE_PRI_MIN_INTERACT, batch = ULE_PRI_MIN_BATCH;

	KUNIT_EXPECT_TRUE(test, ule_waits_behind(batch, interact));
	KUNIT_EXPECT_TRUE(test, ule_waits_behind(ULE_PRI_MIN_IDLE, ULE_PRI_MAX_BATCH));
	KUNIT_EXPECT_TRUE(test, ule_waits_behind(ULE_PRI_MIN_IDLE + ULE_RQ_PPQ, ULE_PRI_MIN_IDLE));
	KUNIT_EXPECT_TRUE(test, ule_waits_behind(interact + ULE_RQ_PPQ, interact));
	/* One list of the realtime queue takes turns. */
	KUNIT_EXPECT_FALSE(test, ule_waits_behind(interact + 1, interact));
	KUNIT_EXPECT_FALSE(test, ule_waits_behind(ULE_PRI_MAX_BATCH, batch));
	KUNIT_EXPECT_FALSE(test, ule_waits_behind(interact, batch));
	KUNIT_EXPECT_FALSE(test, ule_waits_behind(batch, batch));
}

static struct kunit_case ule_test_cases[] = {
	KUNIT_CASE(ule_test_waits_behind),
	KUNIT_CASE(ule_test_score_grid),
	KUNIT_CASE(ule_test_score_monotonic),
	KUNIT_CASE(ule_test_history_update),
	KUNIT_CASE(ule_test_fork_scaling),
	KUNIT_CASE(ule_test_priority_bands),
	KUNIT_CASE(ule_test_prio_score_shortcut),
	KUNIT_CASE(ule_test_slice_min_follows_slice),
	KUNIT_CASE(ule_test_calendar_slot),
	KUNIT_CASE(ule_test_requeue_on_priority_change),
	KUNIT_CASE(ule_test_slice_by_load),
	KUNIT_CASE(ule_test_sleep_credit),
	KUNIT_CASE(ule_test_kernel_preempt_boost),
	KUNIT_CASE(ule_test_kthread_slice),
	KUNIT_CASE(ule_test_switch_requeue),
	{}
};

static struct kunit_suite ule_test_suite = {
	.name = "sched_ule",
	.test_cases = ule_test_cases,
};

kunit_test_suite(ule_test_suite);
