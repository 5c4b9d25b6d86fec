// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of CFS group min-load balancing (sched_feat GROUP_MIN_LOAD) on
 * constructed group statistics. Included from fair.c for its static helpers.
 */
#include <kunit/test.h>

/* A thread of a many-threaded autogroup weighs little on its CPU. */
#define LIGHT	40UL
/* A single-threaded autogroup's thread weighs a whole nice-0 task. */
#define HEAVY	1024UL

/* Fill @sgs from per-CPU loads and lengths as update_sg_lb_stats() does. */
static void sg_test_fill(struct sg_lb_stats *sgs, const unsigned long *load,
			 const unsigned int *nr_running, int nr_cpus)
{
	int i;

	memset(sgs, 0, sizeof(*sgs));
	sgs->min_load = ULONG_MAX;
	for (i = 0; i < nr_cpus; i++) {
		sgs->group_load += load[i];
		sgs->sum_nr_running += nr_running[i];
		sg_account_cpu_load(sgs, load[i], nr_running[i]);
	}
	sgs->group_weight = nr_cpus;
	sgs->group_capacity = nr_cpus * SCHED_CAPACITY_SCALE;
	sgs->avg_load = sgs->group_load * SCHED_CAPACITY_SCALE / sgs->group_capacity;
}

/*
 * The paper's case: the local group has an idle CPU (still carrying some
 * blocked load) and a CPU running one heavy task; the other group has two
 * light tasks on each CPU. Averages call local the busier group; the least
 * loaded CPUs show the idle one, and the imbalance lets one task move.
 */
static void min_load_sees_idle_cpu_behind_heavy_task(struct kunit *test)
{
	const unsigned long local_load[] = { 150, HEAVY };
	const unsigned int local_nr[] = { 0, 1 };
	const unsigned long busy_load[] = { 2 * LIGHT, 2 * LIGHT };
	const unsigned int busy_nr[] = { 2, 2 };
	struct sg_lb_stats local, busiest;

	sg_test_fill(&local, local_load, local_nr, 2);
	sg_test_fill(&busiest, busy_load, busy_nr, 2);

	/* What mainline's avg_load test concludes: nothing to pull. */
	KUNIT_EXPECT_GE(test, local.avg_load, busiest.avg_load);

	KUNIT_EXPECT_EQ(test, local.min_load, 0UL);
	KUNIT_EXPECT_TRUE(test, sg_min_load_imbalanced(&local, &busiest, 117));
	KUNIT_EXPECT_GE(test, sg_min_load_imbalance(&local, &busiest), LIGHT);
}

static void min_load_leaves_balanced_groups_alone(struct kunit *test)
{
	const unsigned long load[] = { 2 * LIGHT, 2 * LIGHT, 2 * LIGHT };
	const unsigned int nr[] = { 2, 2, 2 };
	struct sg_lb_stats a, b;

	sg_test_fill(&a, load, nr, 3);
	sg_test_fill(&b, load, nr, 3);
	KUNIT_EXPECT_FALSE(test, sg_min_load_imbalanced(&a, &b, 100));
	KUNIT_EXPECT_FALSE(test, sg_min_load_busier(&a, &b));
	KUNIT_EXPECT_FALSE(test, sg_min_load_busier(&b, &a));
}

/* imbalance_pct keeps small differences from bouncing tasks around. */
static void min_load_respects_imbalance_pct(struct kunit *test)
{
	const unsigned long low[] = { 100, 100 }, near[] = { 110, 110 };
	const unsigned long far[] = { 130, 130 };
	const unsigned int nr[] = { 1, 1 };
	struct sg_lb_stats local, busiest;

	sg_test_fill(&local, low, nr, 2);
	sg_test_fill(&busiest, near, nr, 2);
	KUNIT_EXPECT_FALSE(test, sg_min_load_imbalanced(&local, &busiest, 117));
	KUNIT_EXPECT_TRUE(test, sg_min_load_imbalanced(&local, &busiest, 100));

	sg_test_fill(&busiest, far, nr, 2);
	KUNIT_EXPECT_TRUE(test, sg_min_load_imbalanced(&local, &busiest, 117));
}

/*
 * Picking the busiest group: a group of one heavy and one light task has
 * the higher average, but the evenly loaded group has no CPU to spare.
 */
static void min_load_picks_group_without_spare_cpu(struct kunit *test)
{
	const unsigned long mixed_load[] = { HEAVY, LIGHT };
	const unsigned long even_load[] = { 2 * LIGHT, 2 * LIGHT };
	const unsigned int mixed_nr[] = { 1, 1 }, even_nr[] = { 2, 2 };
	struct sg_lb_stats mixed, even;

	sg_test_fill(&mixed, mixed_load, mixed_nr, 2);
	sg_test_fill(&even, even_load, even_nr, 2);
	KUNIT_EXPECT_GT(test, mixed.avg_load, even.avg_load);
	KUNIT_EXPECT_TRUE(test, sg_min_load_busier(&even, &mixed));
	KUNIT_EXPECT_FALSE(test, sg_min_load_busier(&mixed, &even));
}

static void min_load_imbalance_is_never_negative(struct kunit *test)
{
	const unsigned long high[] = { 300, 300 }, low[] = { 50, 50 };
	const unsigned int nr[] = { 1, 1 };
	struct sg_lb_stats local, busiest;

	sg_test_fill(&local, high, nr, 2);
	sg_test_fill(&busiest, low, nr, 2);
	KUNIT_EXPECT_FALSE(test, sg_min_load_imbalanced(&local, &busiest, 100));
	KUNIT_EXPECT_EQ(test, sg_min_load_imbalance(&local, &busiest), 0UL);
}

static struct kunit_case sched_fair_min_load_cases[] = {
	KUNIT_CASE(min_load_sees_idle_cpu_behind_heavy_task),
	KUNIT_CASE(min_load_leaves_balanced_groups_alone),
	KUNIT_CASE(min_load_respects_imbalance_pct),
	KUNIT_CASE(min_load_picks_group_without_spare_cpu),
	KUNIT_CASE(min_load_imbalance_is_never_negative),
	{}
};

static struct kunit_suite sched_fair_min_load_suite = {
	.name = "sched_fair_min_load",
	.test_cases = sched_fair_min_load_cases,
};

kunit_test_suite(sched_fair_min_load_suite);
