// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of BMQ's arithmetic (kernel/sched/bmq.h) against values
 * worked out by hand from Project C's formulas. Included from bmq.c.
 */
#include <kunit/test.h>

#define NICE(n)		NICE_TO_PRIO(n)

/* The level table at its corners and a few points in between. */
static void bmq_test_level_points(struct kunit *test)
{
	static const struct {
		int nice, boost;
		unsigned int level;
	} cases[] = {
		{ 0, 0, 13 },		/* (20 + 7) / 2 */
		{ 0, -7, 10 },
		{ 0, 7, 17 },
		{ -20, -7, 0 },		/* the best level */
		{ 19, 7, 26 },		/* the worst level */
		{ -20, 7, 7 },
		{ 19, -7, 19 },
		{ 1, 0, 14 },		/* nice 0 and 1 differ */
		{ -1, 0, 13 },		/* nice -1 and 0 share */
	};
	int i;

	KUNIT_EXPECT_EQ(test, BMQ_LEVELS, 27);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, bmq_level(NICE(cases[i].nice), cases[i].boost),
				    cases[i].level, "nice %d boost %d", cases[i].nice,
				    cases[i].boost);
}

/*
 * Over nice x boost: within range, never worse for a better nice or
 * boost, and nice values 16 apart never share a level whatever the boost.
 */
static void bmq_test_level_grid(struct kunit *test)
{
	int nice, boost, prev;

	for (nice = MIN_NICE; nice <= MAX_NICE; nice++) {
		prev = -1;
		for (boost = -BMQ_MAX_ADJ; boost <= BMQ_MAX_ADJ; boost++) {
			int level = bmq_level(NICE(nice), boost);

			KUNIT_EXPECT_LT(test, level, BMQ_LEVELS);
			KUNIT_EXPECT_GE(test, level, prev);
			if (nice > MIN_NICE)
				KUNIT_EXPECT_GE(test, level, (int)bmq_level(NICE(nice - 1), boost));
			prev = level;
		}
		if (nice + 16 <= MAX_NICE)
			KUNIT_EXPECT_LT_MSG(test, bmq_level(NICE(nice), BMQ_MAX_ADJ),
					    bmq_level(NICE(nice + 16), -BMQ_MAX_ADJ),
					    "nice %d and %d share a level", nice, nice + 16);
	}
	/* 15 apart from an odd nice share none either; from an even one they can. */
	KUNIT_EXPECT_LT(test, bmq_level(NICE(-19), BMQ_MAX_ADJ), bmq_level(NICE(-4), -BMQ_MAX_ADJ));
	KUNIT_EXPECT_EQ(test, bmq_level(NICE(-20), BMQ_MAX_ADJ), bmq_level(NICE(-5), -BMQ_MAX_ADJ));
}

/*
 * Boost limits: only SCHED_NORMAL (and SCHED_ISO, run as normal) goes
 * below 0; +7 caps every policy.
 */
static void bmq_test_boost_limits(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, bmq_boosted(0, SCHED_NORMAL), -1);
	KUNIT_EXPECT_EQ(test, bmq_boosted(-7, SCHED_NORMAL), -7);
	KUNIT_EXPECT_EQ(test, bmq_boosted(-6, SCHED_ISO), -7);
	KUNIT_EXPECT_EQ(test, bmq_boosted(1, SCHED_BATCH), 0);
	KUNIT_EXPECT_EQ(test, bmq_boosted(0, SCHED_BATCH), 0);
	KUNIT_EXPECT_EQ(test, bmq_boosted(0, SCHED_IDLE), 0);
	KUNIT_EXPECT_EQ(test, bmq_boosted(7, SCHED_IDLE), 6);
	KUNIT_EXPECT_EQ(test, bmq_deboosted(6), 7);
	KUNIT_EXPECT_EQ(test, bmq_deboosted(7), 7);
	KUNIT_EXPECT_EQ(test, bmq_deboosted(-7), -6);
}

/* Short-run threshold: slice >> (8 - boost). */
static void bmq_test_boost_threshold(struct kunit *test)
{
	u64 four = 4ULL << BMQ_SLICE_SHIFT, two = 2ULL << BMQ_SLICE_SHIFT;

	KUNIT_EXPECT_EQ(test, four, 4194304ULL);
	KUNIT_EXPECT_EQ(test, bmq_boost_threshold(four, 7), 2097152ULL);
	KUNIT_EXPECT_EQ(test, bmq_boost_threshold(four, 0), 16384ULL);
	KUNIT_EXPECT_EQ(test, bmq_boost_threshold(four, -7), 128ULL);
	KUNIT_EXPECT_EQ(test, bmq_boost_threshold(two, 7), 1048576ULL);
	KUNIT_EXPECT_EQ(test, bmq_boost_threshold(two, -7), 64ULL);
}

/* Fork halves the parent's slice; a share too short gives a full one. */
static void bmq_test_fork_split(struct kunit *test)
{
	s64 full = 4LL << BMQ_SLICE_SHIFT, parent, child;

	parent = full;
	KUNIT_EXPECT_FALSE(test, bmq_fork_split(&parent, &child, full));
	KUNIT_EXPECT_EQ(test, parent, 2097152LL);
	KUNIT_EXPECT_EQ(test, child, 2097152LL);

	parent = 1000001;
	KUNIT_EXPECT_FALSE(test, bmq_fork_split(&parent, &child, full));
	KUNIT_EXPECT_EQ(test, parent, 500000LL);
	KUNIT_EXPECT_EQ(test, child, 500000LL);

	parent = 2 * BMQ_RESCHED_NS;
	KUNIT_EXPECT_FALSE(test, bmq_fork_split(&parent, &child, full));
	KUNIT_EXPECT_EQ(test, child, (s64)BMQ_RESCHED_NS);

	parent = 2 * BMQ_RESCHED_NS - 2;
	KUNIT_EXPECT_TRUE(test, bmq_fork_split(&parent, &child, full));
	KUNIT_EXPECT_EQ(test, parent, (s64)BMQ_RESCHED_NS - 1);
	KUNIT_EXPECT_EQ(test, child, full);
}

/* "sched_timeslice=": exactly 2 or 4. */
static void bmq_test_parse_timeslice(struct kunit *test)
{
	static const char *const bad[] = { "3", "", "x", "2ms", "-4", "40", NULL };
	unsigned int ms = 99;
	int i;

	KUNIT_EXPECT_EQ(test, bmq_parse_timeslice("2", &ms), 0);
	KUNIT_EXPECT_EQ(test, ms, 2U);
	KUNIT_EXPECT_EQ(test, bmq_parse_timeslice("4", &ms), 0);
	KUNIT_EXPECT_EQ(test, ms, 4U);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ms = 99;
		KUNIT_EXPECT_EQ_MSG(test, bmq_parse_timeslice(bad[i], &ms), -EINVAL,
				    "\"%s\"", bad[i] ?: "(null)");
		KUNIT_EXPECT_EQ(test, ms, 99U);
	}
}

/*
 * Idle CPUs pull from a CPU whose BMQ task waits, also behind a task of a
 * higher class (one BMQ task, two runnable), never from a lone task.
 */
static void bmq_test_has_waiter(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, bmq_has_waiter(0, 0));
	KUNIT_EXPECT_FALSE(test, bmq_has_waiter(1, 1));
	KUNIT_EXPECT_FALSE(test, bmq_has_waiter(0, 3));
	KUNIT_EXPECT_TRUE(test, bmq_has_waiter(1, 2));
	KUNIT_EXPECT_TRUE(test, bmq_has_waiter(2, 2));
	KUNIT_EXPECT_TRUE(test, bmq_has_waiter(5, 9));
}

/* Half the source's runnable tasks, capped by kernel.sched_nr_migrate. */
static void bmq_test_pull_budget(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, bmq_pull_budget(1, 32), 0U);
	KUNIT_EXPECT_EQ(test, bmq_pull_budget(2, 32), 1U);
	KUNIT_EXPECT_EQ(test, bmq_pull_budget(7, 32), 3U);
	KUNIT_EXPECT_EQ(test, bmq_pull_budget(200, 32), 32U);
	KUNIT_EXPECT_EQ(test, bmq_pull_budget(4, 1), 1U);
}

/*
 * A waking task goes to a CPU whose best work is of its own level or worse:
 * a -7 sleeper beside another -7 (or -6, one level) task is placed there,
 * beside -8's level it is not, and an idle CPU (no level) always takes it.
 */
static void bmq_test_wake_target(struct kunit *test)
{
	unsigned int sleeper = bmq_level(DEFAULT_PRIO, -BMQ_MAX_ADJ);

	KUNIT_EXPECT_TRUE(test, bmq_wake_target(sleeper, sleeper));
	KUNIT_EXPECT_TRUE(test, bmq_wake_target(bmq_level(DEFAULT_PRIO, 1 - BMQ_MAX_ADJ), sleeper));
	KUNIT_EXPECT_TRUE(test, bmq_wake_target(bmq_level(DEFAULT_PRIO, BMQ_MAX_ADJ), sleeper));
	KUNIT_EXPECT_FALSE(test, bmq_wake_target(bmq_level(DEFAULT_PRIO - 2, -BMQ_MAX_ADJ),
						 sleeper));
	KUNIT_EXPECT_TRUE(test, bmq_wake_target(BMQ_LEVELS, sleeper));
}

/*
 * The wakeup boost compares the waker's CPU clock with the one the task
 * last ran by: a lagging waker clock gives a wrapped interval, which earns
 * the boost as a long sleep does (Project C's unsigned difference).
 */
static void bmq_test_wakeup_boost_wrap(struct kunit *test)
{
	u64 slice = 4ULL << 20;

	KUNIT_EXPECT_EQ(test, bmq_wakeup_boost(0, slice + 1, slice, SCHED_NORMAL), -1);
	KUNIT_EXPECT_EQ(test, bmq_wakeup_boost(0, slice, slice, SCHED_NORMAL), 0);
	KUNIT_EXPECT_EQ(test, bmq_wakeup_boost(0, 1000ULL - 5000ULL, slice, SCHED_NORMAL), -1);
	KUNIT_EXPECT_EQ(test, bmq_wakeup_boost(0, 1000ULL - 5000ULL, slice, SCHED_BATCH), 0);
}

#define BMQ_TEST_SLICE	(4ULL << 20)
#define US(x)		((u64)(x) * NSEC_PER_USEC)

/*
 * A simulated task on one CPU: each round it runs @run ns (in pieces of
 * @piece ns, each ended by an expiry or a yield and followed at once by a
 * re-pick of the same task) and then sleeps @sleep ns. Returns its boost
 * after @rounds rounds from @boost, as Project C's rules give it.
 */
static int bmq_test_rounds(int boost, unsigned int policy, u64 run, u64 piece, u64 sleep,
			   bool yields, int rounds)
{
	u64 now = 0, run_start, done;
	int i;

	for (i = 0; i < rounds; i++) {
		run_start = bmq_run_window(0, false, now);	/* picked after the sleep */
		for (done = piece; done < run; done += piece) {
			now += piece;
			if (!yields)	/* its slice ran out with others waiting */
				boost = bmq_expire_boost(boost, true);
			run_start = bmq_run_window(run_start, true, now);
		}
		now += run - (done - piece);
		boost = bmq_sleep_boost(boost, now - run_start, BMQ_TEST_SLICE, policy);
		now += sleep;
		boost = bmq_wakeup_boost(boost, sleep, BMQ_TEST_SLICE, policy);
	}
	return boost;
}

/*
 * Expiry: a hog that runs whole slices and sleeps briefly after a re-pick
 * drifts to the worst boost, because its run window spans the re-picks; a
 * window restarted at each re-pick would have boosted it at every sleep.
 */
static void bmq_test_expiry_sequence(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, bmq_test_rounds(0, SCHED_NORMAL, 5 * BMQ_TEST_SLICE,
					      BMQ_TEST_SLICE, US(1000), false, 20), BMQ_MAX_ADJ);
	/* The same task with a window per re-pick: the drift to -7. */
	KUNIT_EXPECT_EQ(test, bmq_sleep_boost(0, US(5), BMQ_TEST_SLICE, SCHED_NORMAL), -1);
	KUNIT_EXPECT_EQ(test, bmq_run_window(US(10), false, US(900)), US(900));
	KUNIT_EXPECT_EQ(test, bmq_run_window(US(10), true, US(900)), US(10));
	/* A slice that ends while it sleeps does not deboost it. */
	KUNIT_EXPECT_EQ(test, bmq_expire_boost(3, false), 3);
	KUNIT_EXPECT_EQ(test, bmq_expire_boost(BMQ_MAX_ADJ, true), BMQ_MAX_ADJ);
}

/*
 * Yield (type 0: no-op, the core re-picks the task): a task that yields
 * every 200 us for 5 ms and then sleeps 1 ms ran 5 ms in one window, so
 * it never earns the short-run boost; the long sleeps of a mostly idle
 * task do earn boosts down to the policy's limit.
 */
static void bmq_test_yield_sequence(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, bmq_test_rounds(0, SCHED_NORMAL, US(5000), US(200), US(1000),
					      true, 20), 0);
	KUNIT_EXPECT_EQ(test, bmq_test_rounds(BMQ_MAX_ADJ, SCHED_NORMAL, US(5), US(5),
					      US(20000), true, 20), -BMQ_MAX_ADJ);
	KUNIT_EXPECT_EQ(test, bmq_test_rounds(BMQ_MAX_ADJ, SCHED_BATCH, US(5), US(5),
					      US(20000), true, 20), 0);
	/* Type 1 sets the worst boost; the next short run earns one back. */
	KUNIT_EXPECT_EQ(test, bmq_sleep_boost(BMQ_MAX_ADJ, US(1), BMQ_TEST_SLICE, SCHED_NORMAL),
			BMQ_MAX_ADJ - 1);
}

/*
 * Fork: the child starts at the worst boost with half the parent's slice
 * left (or a full one when that is too short), and earns boosts only by
 * sleeping, as Project C's sched_task_fork() leaves it.
 */
static void bmq_test_fork_sequence(struct kunit *test)
{
	s64 parent = BMQ_TEST_SLICE, child;
	int boost = BMQ_MAX_ADJ;

	KUNIT_EXPECT_FALSE(test, bmq_fork_split(&parent, &child, BMQ_TEST_SLICE));
	KUNIT_EXPECT_EQ(test, child, parent);
	boost = bmq_test_rounds(boost, SCHED_NORMAL, US(100), US(100), US(10000), true, 3);
	KUNIT_EXPECT_EQ(test, boost, BMQ_MAX_ADJ - 6);
}

/*
 * The stall watchdog's rule: a nice-19 spinner (level 19 at its best
 * boost for a spinner, 0) waits for good behind a nice-0 one (level 17 at
 * the worst); equals take turns, and a better waiter is not behind.
 */
static void bmq_test_waits_behind(struct kunit *test)
{
	unsigned int hog = bmq_level(NICE(0), BMQ_MAX_ADJ);

	KUNIT_EXPECT_TRUE(test, bmq_waits_behind(bmq_level(NICE(19), 0), hog));
	KUNIT_EXPECT_TRUE(test, bmq_waits_behind(bmq_level(NICE(4), BMQ_MAX_ADJ), hog));
	KUNIT_EXPECT_FALSE(test, bmq_waits_behind(hog, hog));
	KUNIT_EXPECT_FALSE(test, bmq_waits_behind(bmq_level(NICE(0), 0), hog));
	/* Nothing queued: the watermark is BMQ_LEVELS. */
	KUNIT_EXPECT_FALSE(test, bmq_waits_behind(BMQ_LEVELS - 1, BMQ_LEVELS));
}

/*
 * A nice-19 task preempted in kernel code by a nice-0 spinner waits at the
 * spinner's level; one preempted by worse work keeps its own.
 */
static void bmq_test_kernel_level(struct kunit *test)
{
	unsigned int writer = bmq_level(NICE(19), BMQ_MAX_ADJ);
	unsigned int spinner = bmq_level(NICE(0), BMQ_MAX_ADJ);

	KUNIT_EXPECT_EQ(test, bmq_kernel_level(writer, spinner), spinner);
	KUNIT_EXPECT_FALSE(test, bmq_waits_behind(bmq_kernel_level(writer, spinner), spinner));
	KUNIT_EXPECT_EQ(test, bmq_kernel_level(spinner, writer), spinner);
	KUNIT_EXPECT_EQ(test, bmq_kernel_level(writer, BMQ_LEVELS), writer);
}

static struct kunit_case bmq_test_cases[] = {
	KUNIT_CASE(bmq_test_kernel_level),
	KUNIT_CASE(bmq_test_waits_behind),
	KUNIT_CASE(bmq_test_level_points),
	KUNIT_CASE(bmq_test_level_grid),
	KUNIT_CASE(bmq_test_boost_limits),
	KUNIT_CASE(bmq_test_boost_threshold),
	KUNIT_CASE(bmq_test_fork_split),
	KUNIT_CASE(bmq_test_parse_timeslice),
	KUNIT_CASE(bmq_test_has_waiter),
	KUNIT_CASE(bmq_test_pull_budget),
	KUNIT_CASE(bmq_test_wake_target),
	KUNIT_CASE(bmq_test_wakeup_boost_wrap),
	KUNIT_CASE(bmq_test_expiry_sequence),
	KUNIT_CASE(bmq_test_yield_sequence),
	KUNIT_CASE(bmq_test_fork_sequence),
	{}
};

static struct kunit_suite bmq_test_suite = {
	.name = "sched_bmq",
	.test_cases = bmq_test_cases,
};

kunit_test_suite(bmq_test_suite);
