// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of MuQSS's arithmetic and skip list (kernel/sched/muqss.h)
 * against values worked out by hand from Con Kolivas's formulas. Included
 * from muqss.c.
 */
#include <kunit/test.h>

/* prio_ratios[] at the points MuQSS's table gives. */
static void muqss_test_ratios(struct kunit *test)
{
	static const struct {
		int nice;
		u32 ratio;
	} cases[] = {
		{ -20, 128 }, { -15, 203 }, { -10, 324 }, { -5, 520 },
		{ 0, 836 }, { 5, 1344 }, { 10, 2161 }, { 19, 5089 },
	};
	u32 ratio[NICE_WIDTH];
	int i;

	muqss_fill_ratios(ratio);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, ratio[cases[i].nice + 20], cases[i].ratio,
				    "nice %d", cases[i].nice);
	for (i = 1; i < NICE_WIDTH; i++)
		KUNIT_EXPECT_GT(test, ratio[i], ratio[i - 1]);
}

/* Deadline offsets and the slice in MuQSS's units (a "ms" is 2^20 ns). */
static void muqss_test_deadline_diff(struct kunit *test)
{
	u32 ratio[NICE_WIDTH];

	muqss_fill_ratios(ratio);
	KUNIT_EXPECT_EQ(test, muqss_deadline_diff(ratio[20], 6), 41091072ULL);
	KUNIT_EXPECT_EQ(test, muqss_deadline_diff(ratio[0], 6), 6291456ULL);
	KUNIT_EXPECT_EQ(test, muqss_deadline_diff(ratio[39], 6), 250134528ULL);
	/* MuQSS's int overflowed from rr 52 on; u64 holds rr 1000 at nice 19. */
	KUNIT_EXPECT_EQ(test, muqss_deadline_diff(ratio[39], 1000), 41689088000ULL);
	KUNIT_EXPECT_EQ(test, muqss_slice_ns(6), 6291456ULL);
	KUNIT_EXPECT_EQ(test, muqss_slice_ns(1), 1048576ULL);
	KUNIT_EXPECT_EQ(test, MUQSS_RESCHED_NS, 102400ULL);
}

/* Normal and batch by deadline, then starved SCHED_IDLE, then SCHED_IDLE. */
static void muqss_test_keys(struct kunit *test)
{
	u64 longest = 250134528ULL, dl = 5000000000ULL;
	u64 normal = muqss_key(dl, false, true, longest);
	u64 unsuitable = muqss_key(dl, true, false, longest);
	u64 idle = muqss_key(dl, true, true, longest);

	KUNIT_EXPECT_EQ(test, normal, dl);
	KUNIT_EXPECT_EQ(test, unsuitable, dl + longest);
	KUNIT_EXPECT_EQ(test, idle, dl | MUQSS_IDLE_KEY);
	KUNIT_EXPECT_LT(test, normal, unsuitable);
	KUNIT_EXPECT_LT(test, unsuitable, idle);
	/* An idle key sorts after a normal deadline far in the future. */
	KUNIT_EXPECT_LT(test, muqss_key(dl + 1000000000000ULL, false, true, longest), idle);
	KUNIT_EXPECT_TRUE(test, muqss_key_idleprio(idle));
	KUNIT_EXPECT_FALSE(test, muqss_key_idleprio(normal));
	KUNIT_EXPECT_FALSE(test, muqss_key_idleprio(U64_MAX));
}

/* can_preempt() over the cases MuQSS distinguishes. */
static void muqss_test_can_preempt(struct kunit *test)
{
	u64 idle_key = 100 | MUQSS_IDLE_KEY;

	KUNIT_EXPECT_TRUE(test, muqss_can_preempt(100, 0, false, false, 200, 0));
	/* Strictly earlier. */
	KUNIT_EXPECT_FALSE(test, muqss_can_preempt(200, 0, false, false, 200, 0));
	KUNIT_EXPECT_FALSE(test, muqss_can_preempt(300, 0, false, false, 200, 0));
	KUNIT_EXPECT_FALSE(test, muqss_can_preempt(100, 0, true, false, 200, 0));	/* batch */
	KUNIT_EXPECT_TRUE(test, muqss_can_preempt(300, 0, true, false, idle_key, 0));
	KUNIT_EXPECT_TRUE(test, muqss_can_preempt(100, 0, false, false, U64_MAX, 0));
	KUNIT_EXPECT_TRUE(test, muqss_can_preempt(idle_key, 0, false, true, U64_MAX, 0));
	KUNIT_EXPECT_FALSE(test, muqss_can_preempt(idle_key, 0, false, true, idle_key + 1, 0));
	KUNIT_EXPECT_FALSE(test, muqss_can_preempt(idle_key, 0, false, true, 200, 0));
}

/*
 * SCHED_ISO keys sort before every deadline. Between two ISO tasks, which
 * share the key, the strictly earlier deadline preempts, as between two
 * tasks of one priority in MuQSS; an ISO task never takes a realtime CPU.
 */
static void muqss_test_iso_key(struct kunit *test)
{
	u64 longest = 250134528ULL, iso = MUQSS_ISO_KEY;

	KUNIT_EXPECT_LT(test, MUQSS_ISO_KEY, muqss_key(MUQSS_RESCHED_NS, false, true, longest));
	KUNIT_EXPECT_TRUE(test, muqss_can_preempt(MUQSS_ISO_KEY, 0, false, false, 200, 0));
	KUNIT_EXPECT_TRUE(test, muqss_can_preempt(MUQSS_ISO_KEY, 0, false, false,
						  100 | MUQSS_IDLE_KEY, 0));
	KUNIT_EXPECT_FALSE(test, muqss_can_preempt(200, 0, false, false, MUQSS_ISO_KEY, 0));
	KUNIT_EXPECT_FALSE(test, muqss_can_preempt(MUQSS_ISO_KEY, 0, false, false, 0, 0));
	KUNIT_EXPECT_TRUE(test, muqss_can_preempt(iso, 500, false, false, iso, 600));
	KUNIT_EXPECT_FALSE(test, muqss_can_preempt(iso, 600, false, false, iso, 600));
	KUNIT_EXPECT_FALSE(test, muqss_can_preempt(iso, 700, false, false, iso, 600));
	/* Otherwise the keys decide, whatever the deadlines. */
	KUNIT_EXPECT_TRUE(test, muqss_can_preempt(MUQSS_ISO_KEY, 900, false, false, 800, 100));
	KUNIT_EXPECT_FALSE(test, muqss_can_preempt(800, 100, false, false, MUQSS_ISO_KEY, 900));
}

/*
 * iso_cpu's window over busy ticks from empty: refractory once the count
 * passes period * iso_cpu (70 %: after ln(1/0.3) = 1.20 periods), never at
 * 100 %, at the first tick at 0 %; capped below period * 100; it ends
 * below 115/128 of the limit (from the cap, ln(100/62) = 0.48 periods).
 */
static void muqss_test_iso_window(struct kunit *test)
{
	static const unsigned int pcts[] = { 0, 1, 70, 100 };
	unsigned long i, first;
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(pcts); k++) {
		bool refractory = false;
		u32 ticks = 0;

		first = 0;
		for (i = 1; i <= 20 * MUQSS_ISO_PERIOD; i++) {
			muqss_iso_busy_tick(&ticks, &refractory, pcts[k]);
			KUNIT_ASSERT_LE(test, ticks, MUQSS_ISO_PERIOD * 100);
			if (refractory && !first)
				first = i;
		}
		KUNIT_EXPECT_GE(test, ticks, MUQSS_ISO_PERIOD * 99);
		if (pcts[k] == 0) {
			KUNIT_EXPECT_EQ(test, first, 1UL);
		} else if (pcts[k] == 1) {
			KUNIT_EXPECT_GE(test, first, 1UL);
			KUNIT_EXPECT_LE(test, first, MUQSS_ISO_PERIOD / 50);
		} else if (pcts[k] == 100) {
			KUNIT_EXPECT_EQ(test, first, 0UL);
			continue;
		} else {
			KUNIT_EXPECT_GE(test, first, MUQSS_ISO_PERIOD * 119 / 100);
			KUNIT_EXPECT_LE(test, first, MUQSS_ISO_PERIOD * 122 / 100);
		}
		for (i = 1; i <= 20 * MUQSS_ISO_PERIOD && refractory; i++)
			muqss_iso_other_ticks(&ticks, &refractory, 1, pcts[k]);
		if (pcts[k] <= 1) {
			/*
			 * 115/128 of 0 or 1 percent rounds to 0 in MuQSS's integer
			 * arithmetic and nothing is below 0: ISO tasks run as normal
			 * ones for good, even after a whole idle period.
			 */
			KUNIT_EXPECT_TRUE(test, refractory);
			muqss_iso_other_ticks(&ticks, &refractory, MUQSS_ISO_PERIOD, pcts[k]);
			KUNIT_EXPECT_TRUE(test, refractory);
			continue;
		}
		KUNIT_EXPECT_FALSE(test, refractory);
		KUNIT_EXPECT_GE(test, i, MUQSS_ISO_PERIOD * 46 / 100);
		KUNIT_EXPECT_LE(test, i, MUQSS_ISO_PERIOD * 49 / 100);
		KUNIT_EXPECT_LT(test, ticks, MUQSS_ISO_PERIOD * 62);
	}
	/* A whole period of skipped ticks empties the window. */
	{
		bool refractory = true;
		u32 ticks = MUQSS_ISO_PERIOD * 90;

		muqss_iso_other_ticks(&ticks, &refractory, MUQSS_ISO_PERIOD, 70);
		KUNIT_EXPECT_EQ(test, ticks, 0U);
		KUNIT_EXPECT_FALSE(test, refractory);
	}
}

/*
 * An always-runnable ISO task that runs as one whenever its CPU is not
 * refractory gets a little under iso_cpu of it in the long run: the
 * hysteresis lets the count fall to 115/128 of the limit and climb back.
 */
static void muqss_test_iso_share(struct kunit *test)
{
	static const unsigned int pcts[] = { 30, 50, 70, 90 };
	unsigned long i, busy, total;
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(pcts); k++) {
		bool refractory = false;
		u32 ticks = 0;

		busy = 0;
		total = 0;
		for (i = 0; i < 40 * MUQSS_ISO_PERIOD; i++) {
			bool iso = !refractory;

			if (iso)
				muqss_iso_busy_tick(&ticks, &refractory, pcts[k]);
			else
				muqss_iso_other_ticks(&ticks, &refractory, 1, pcts[k]);
			if (i < 10 * MUQSS_ISO_PERIOD)
				continue;
			total++;
			busy += iso;
		}
		KUNIT_EXPECT_LE_MSG(test, busy * 100, total * pcts[k], "iso_cpu %u", pcts[k]);
		KUNIT_EXPECT_GE_MSG(test, busy * 100, total * (pcts[k] - 6), "iso_cpu %u",
				    pcts[k]);
	}
}

/* randomLevel() over every 7-bit draw: 96, 24, 6 and 2 of 128. */
static void muqss_test_random_level(struct kunit *test)
{
	unsigned int count[MUQSS_SL_LEVELS] = { 0 };
	u32 seed;

	for (seed = 0; seed < 128; seed++) {
		unsigned int level = muqss_sl_random_level(seed);

		KUNIT_ASSERT_LT(test, level, MUQSS_SL_LEVELS);
		count[level]++;
	}
	KUNIT_EXPECT_EQ(test, count[0], 96U);
	KUNIT_EXPECT_EQ(test, count[1], 24U);
	KUNIT_EXPECT_EQ(test, count[2], 6U);
	KUNIT_EXPECT_EQ(test, count[3], 2U);
	/* Bits above the seventh do not count. */
	KUNIT_EXPECT_EQ(test, muqss_sl_random_level(0x80), 3U);
}

#define MUQSS_TEST_NODES	200

/* Level 0 in key order, each level a sub-list of the one below. */
static void muqss_test_check_list(struct kunit *test, struct muqss_sl *sl, unsigned int n)
{
	struct muqss_sl_node *x, *prev;
	unsigned int i, seen;

	for (i = 0; i < MUQSS_SL_LEVELS; i++) {
		seen = 0;
		prev = &sl->head;
		for (x = sl->head.next[i]; x != &sl->head; x = x->next[i]) {
			KUNIT_EXPECT_PTR_EQ(test, x->prev[i], prev);
			KUNIT_EXPECT_GE(test, x->level, i);
			if (prev != &sl->head)
				KUNIT_EXPECT_LE(test, prev->key, x->key);
			prev = x;
			seen++;
		}
		if (!i)
			KUNIT_EXPECT_EQ(test, seen, n);
		if (i > sl->level)
			KUNIT_EXPECT_EQ(test, seen, 0U);
	}
	KUNIT_EXPECT_EQ(test, sl->entries, n);
	KUNIT_EXPECT_LT(test, sl->level, (unsigned int)MUQSS_SL_LEVELS);
}

/*
 * Insert, peek and delete with random keys and levels, and with every
 * node at level 0 (the worst case: a plain sorted list) or at the top.
 */
static void muqss_test_skiplist(struct kunit *test)
{
	struct muqss_sl_node *nodes;
	struct muqss_sl sl;
	u32 seed = 12345;
	int mode, i;

	nodes = kunit_kcalloc(test, MUQSS_TEST_NODES, sizeof(*nodes), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, nodes);
	for (mode = 0; mode < 3; mode++) {
		u64 min = U64_MAX;

		muqss_sl_init(&sl);
		KUNIT_EXPECT_NULL(test, muqss_sl_first(&sl));
		for (i = 0; i < MUQSS_TEST_NODES; i++) {
			u64 key;
			unsigned int level;

			seed = seed * 1103515245 + 12345;
			key = (seed >> 8) % 1000;
			level = mode == 0 ? muqss_sl_random_level(seed >> 4) :
				mode == 1 ? 0 : MUQSS_SL_LEVELS - 1;
			muqss_sl_insert(&sl, &nodes[i], key, level);
			min = min(min, key);
			KUNIT_EXPECT_EQ(test, muqss_sl_first(&sl)->key, min);
		}
		muqss_test_check_list(test, &sl, MUQSS_TEST_NODES);
		/* Every other node, then the first until none is left. */
		for (i = 0; i < MUQSS_TEST_NODES; i += 2)
			muqss_sl_delete(&sl, &nodes[i]);
		muqss_test_check_list(test, &sl, MUQSS_TEST_NODES / 2);
		while (muqss_sl_first(&sl))
			muqss_sl_delete(&sl, muqss_sl_first(&sl));
		KUNIT_EXPECT_EQ(test, sl.entries, 0U);
		KUNIT_EXPECT_EQ(test, sl.level, 0U);
	}
}

/* Equal keys leave in the order they came (FIFO among equal deadlines). */
static void muqss_test_skiplist_fifo(struct kunit *test)
{
	struct muqss_sl_node nodes[8];
	struct muqss_sl sl;
	int i;

	muqss_sl_init(&sl);
	for (i = 0; i < ARRAY_SIZE(nodes); i++)
		muqss_sl_insert(&sl, &nodes[i], 42, muqss_sl_random_level(i * 37));
	for (i = 0; i < ARRAY_SIZE(nodes); i++) {
		KUNIT_EXPECT_PTR_EQ(test, muqss_sl_first(&sl), &nodes[i]);
		muqss_sl_delete(&sl, &nodes[i]);
	}
	KUNIT_EXPECT_NULL(test, muqss_sl_first(&sl));
}

/* Locality order: nearest first, scanning up from the lower half, down from the upper. */
static void muqss_test_order(struct kunit *test)
{
	static const u8 from1[8] = {
		MUQSS_LOC_SMT, MUQSS_LOC_SAME, MUQSS_LOC_LLC, MUQSS_LOC_LLC,
		MUQSS_LOC_DISTANT, MUQSS_LOC_DISTANT, MUQSS_LOC_DISTANT, MUQSS_LOC_DISTANT,
	};
	static const u16 want1[] = { 0, 2, 3, 4, 5, 6, 7 };
	static const u8 from6[8] = {
		MUQSS_LOC_DISTANT, MUQSS_LOC_DISTANT, MUQSS_LOC_NONE, MUQSS_LOC_DISTANT,
		MUQSS_LOC_LLC, MUQSS_LOC_LLC, MUQSS_LOC_SAME, MUQSS_LOC_SMT,
	};
	static const u16 want6[] = { 7, 5, 4, 3, 1, 0 };
	u16 order[8];
	unsigned int n, i;

	n = muqss_fill_order(1, 8, from1, order);
	KUNIT_ASSERT_EQ(test, n, (unsigned int)ARRAY_SIZE(want1));
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, order[i], want1[i]);
	/* CPU 2 is in another root domain: never looked at. */
	n = muqss_fill_order(6, 8, from6, order);
	KUNIT_ASSERT_EQ(test, n, (unsigned int)ARRAY_SIZE(want6));
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, order[i], want6[i]);
}

/*
 * best_mask_cpu() of v0.210 from a busy CPU: every candidate sharing its
 * cache is cache-busy, so its own idle SMT sibling (1 | 8) ranks before an
 * idle core of the same cache (2 | 8); an idle cache elsewhere in the
 * package (4) comes first. v0.193 ranked the sibling last (muqss.rst).
 */
static void muqss_test_idle_rank(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, muqss_idle_rank(MUQSS_LOC_SAME, true), 0U);
	KUNIT_EXPECT_EQ(test, muqss_idle_rank(MUQSS_LOC_SMT, true), 9U);
	KUNIT_EXPECT_EQ(test, muqss_idle_rank(MUQSS_LOC_SMT, false), 1U);
	KUNIT_EXPECT_EQ(test, muqss_idle_rank(MUQSS_LOC_LLC, true), 10U);
	KUNIT_EXPECT_EQ(test, muqss_idle_rank(MUQSS_LOC_LLC, false), 2U);
	KUNIT_EXPECT_EQ(test, muqss_idle_rank(MUQSS_LOC_MC, false), 4U);
	KUNIT_EXPECT_EQ(test, muqss_idle_rank(MUQSS_LOC_SMP, false), 16U);
	KUNIT_EXPECT_EQ(test, muqss_idle_rank(MUQSS_LOC_DISTANT, true), 72U);
	/*
	 * The task's CPU busy: its sibling, then a core of its cache, unless
	 * an idle cache of the same package, then another package.
	 */
	KUNIT_EXPECT_LT(test, muqss_idle_rank(MUQSS_LOC_SMT, true),
			muqss_idle_rank(MUQSS_LOC_LLC, true));
	KUNIT_EXPECT_LT(test, muqss_idle_rank(MUQSS_LOC_MC, false),
			muqss_idle_rank(MUQSS_LOC_LLC, true));
	KUNIT_EXPECT_LT(test, muqss_idle_rank(MUQSS_LOC_LLC, true),
			muqss_idle_rank(MUQSS_LOC_SMP, false));
	/* Equal ranks: a whole idle core replaces the one found before. */
	KUNIT_EXPECT_TRUE(test, muqss_idle_better(10, 10, true));
	KUNIT_EXPECT_FALSE(test, muqss_idle_better(10, 10, false));
	KUNIT_EXPECT_TRUE(test, muqss_idle_better(9, 10, false));
	KUNIT_EXPECT_FALSE(test, muqss_idle_better(12, 10, true));
}

/* yield_to(): the yielder's rest moves to the target, up to a slice. */
static void muqss_test_yield_to_slice(struct kunit *test)
{
	u64 full = muqss_slice_ns(6);

	KUNIT_EXPECT_EQ(test, muqss_yield_to_slice(1000, 2000, full), 3000LL);
	KUNIT_EXPECT_EQ(test, muqss_yield_to_slice(full - 10, 2000, full), (s64)full);
	KUNIT_EXPECT_EQ(test, muqss_yield_to_slice(1000, -500, full), 1000LL);
}

/* try_preempt(): with interactive off, only strictly busier CPUs. */
static void muqss_test_preempt_candidate(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, muqss_preempt_candidate(true, 0, 3));
	KUNIT_EXPECT_TRUE(test, muqss_preempt_candidate(true, 5, 3));
	KUNIT_EXPECT_TRUE(test, muqss_preempt_candidate(false, 4, 3));
	KUNIT_EXPECT_FALSE(test, muqss_preempt_candidate(false, 3, 3));
	KUNIT_EXPECT_FALSE(test, muqss_preempt_candidate(false, 1, 3));
}

/* rqshare=: exact names only; anything else is refused. */
static void muqss_test_share_parse(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, muqss_share_parse("none"), (int)MUQSS_SHARE_NONE);
	KUNIT_EXPECT_EQ(test, muqss_share_parse("smt"), (int)MUQSS_SHARE_SMT);
	KUNIT_EXPECT_EQ(test, muqss_share_parse("llc"), (int)MUQSS_SHARE_LLC);
	KUNIT_EXPECT_EQ(test, muqss_share_parse("mc"), (int)MUQSS_SHARE_MC);
	KUNIT_EXPECT_EQ(test, muqss_share_parse("smp"), (int)MUQSS_SHARE_SMP);
	KUNIT_EXPECT_EQ(test, muqss_share_parse("all"), (int)MUQSS_SHARE_ALL);
	/* A sysctl write ends in a newline. */
	KUNIT_EXPECT_EQ(test, muqss_share_parse("mc\n"), (int)MUQSS_SHARE_MC);
	/* MuQSS matched prefixes ("smtfoo" was smt); here they are errors. */
	KUNIT_EXPECT_EQ(test, muqss_share_parse("smtfoo"), -EINVAL);
	KUNIT_EXPECT_EQ(test, muqss_share_parse("mc_llc"), -EINVAL);
	KUNIT_EXPECT_EQ(test, muqss_share_parse(""), -EINVAL);
	KUNIT_EXPECT_EQ(test, muqss_share_parse("MC"), -EINVAL);
	KUNIT_EXPECT_NULL(test, muqss_share_name(MUQSS_SHARE_MODES));
}

/*
 * Share groups on two packages of two cores with two threads each, seen
 * from CPU 5 (package 1, core 2, sibling 4), CPU 7 isolated (NONE).
 */
static void muqss_test_share_leader(struct kunit *test)
{
	static const u8 from5[8] = {
		MUQSS_LOC_DISTANT, MUQSS_LOC_DISTANT, MUQSS_LOC_DISTANT, MUQSS_LOC_DISTANT,
		MUQSS_LOC_SMT, MUQSS_LOC_SAME, MUQSS_LOC_LLC, MUQSS_LOC_NONE,
	};
	static const u8 from3[8] = {
		MUQSS_LOC_MC, MUQSS_LOC_MC, MUQSS_LOC_SMT, MUQSS_LOC_SAME,
		MUQSS_LOC_SMP, MUQSS_LOC_SMP, MUQSS_LOC_SMP, MUQSS_LOC_NONE,
	};

	KUNIT_EXPECT_EQ(test, muqss_share_leader(MUQSS_SHARE_NONE, 8, from5), 5);
	KUNIT_EXPECT_EQ(test, muqss_share_leader(MUQSS_SHARE_SMT, 8, from5), 4);
	KUNIT_EXPECT_EQ(test, muqss_share_leader(MUQSS_SHARE_LLC, 8, from5), 4);
	KUNIT_EXPECT_EQ(test, muqss_share_leader(MUQSS_SHARE_MC, 8, from5), 4);
	KUNIT_EXPECT_EQ(test, muqss_share_leader(MUQSS_SHARE_SMP, 8, from5), 4);
	KUNIT_EXPECT_EQ(test, muqss_share_leader(MUQSS_SHARE_ALL, 8, from5), 0);
	/* A package of two caches (CPU 3's cache is 2-3): llc and mc differ. */
	KUNIT_EXPECT_EQ(test, muqss_share_leader(MUQSS_SHARE_LLC, 8, from3), 2);
	KUNIT_EXPECT_EQ(test, muqss_share_leader(MUQSS_SHARE_MC, 8, from3), 0);
	KUNIT_EXPECT_EQ(test, muqss_share_leader(MUQSS_SHARE_SMP, 8, from3), 0);
	/* An isolated CPU shares with none, not even under "all". */
	KUNIT_EXPECT_FALSE(test, muqss_share_loc(MUQSS_SHARE_ALL, MUQSS_LOC_NONE));
	KUNIT_EXPECT_TRUE(test, muqss_share_loc(MUQSS_SHARE_ALL, MUQSS_LOC_DISTANT));
	KUNIT_EXPECT_FALSE(test, muqss_share_loc(MUQSS_SHARE_SMP, MUQSS_LOC_DISTANT));
	KUNIT_EXPECT_FALSE(test, muqss_share_loc(MUQSS_SHARE_SMT, MUQSS_LOC_LLC));
}

#ifdef CONFIG_SMP
/*
 * muqss_init() leaves a CPU without its locality table when the boot
 * allocation fails: that CPU then places and looks only at itself.
 */
static void muqss_test_loc_without_table(struct kunit *test)
{
	struct rq *rq = kunit_kzalloc(test, sizeof(*rq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rq);
	rq->cpu = 1;
	KUNIT_EXPECT_EQ(test, muqss_loc(rq, 1), (u8)MUQSS_LOC_SAME);
	KUNIT_EXPECT_EQ(test, muqss_loc(rq, 0), (u8)MUQSS_LOC_NONE);
}
#endif

/*
 * The stall watchdog's rule: only a SCHED_IDLE key waits for good, and
 * only behind a key that is not one; deadlines and ISO never do.
 */
static void muqss_test_waits_behind(struct kunit *test)
{
	u64 longest = 1ULL << 30, idle = muqss_key(1000, true, true, longest);

	KUNIT_EXPECT_TRUE(test, muqss_waits_behind(idle, 5000));
	KUNIT_EXPECT_TRUE(test, muqss_waits_behind(idle, MUQSS_ISO_KEY));
	KUNIT_EXPECT_FALSE(test, muqss_waits_behind(idle, muqss_key(0, true, true, longest)));
	KUNIT_EXPECT_FALSE(test, muqss_waits_behind(idle, U64_MAX));
	/* A deadline far later than the best one is still not behind it. */
	KUNIT_EXPECT_FALSE(test, muqss_waits_behind(1ULL << 40, 1000));
	KUNIT_EXPECT_FALSE(test, muqss_waits_behind(5000, MUQSS_ISO_KEY));
	/* An exiting SCHED_IDLE task sorts among deadlines: not behind. */
	KUNIT_EXPECT_FALSE(test, muqss_waits_behind(muqss_key(1000, true, false, longest), 5));
}

static struct kunit_case muqss_test_cases[] = {
	KUNIT_CASE(muqss_test_waits_behind),
	KUNIT_CASE(muqss_test_ratios),
	KUNIT_CASE(muqss_test_deadline_diff),
	KUNIT_CASE(muqss_test_keys),
	KUNIT_CASE(muqss_test_can_preempt),
	KUNIT_CASE(muqss_test_iso_key),
	KUNIT_CASE(muqss_test_iso_window),
	KUNIT_CASE(muqss_test_iso_share),
	KUNIT_CASE(muqss_test_random_level),
	KUNIT_CASE(muqss_test_skiplist),
	KUNIT_CASE(muqss_test_skiplist_fifo),
	KUNIT_CASE(muqss_test_order),
	KUNIT_CASE(muqss_test_idle_rank),
	KUNIT_CASE(muqss_test_preempt_candidate),
	KUNIT_CASE(muqss_test_yield_to_slice),
	KUNIT_CASE(muqss_test_share_parse),
	KUNIT_CASE(muqss_test_share_leader),
#ifdef CONFIG_SMP
	KUNIT_CASE(muqss_test_loc_without_table),
#endif
	{}
};

static struct kunit_suite muqss_test_suite = {
	.name = "sched_muqss",
	.test_cases = muqss_test_cases,
};

kunit_test_suite(muqss_test_suite);
