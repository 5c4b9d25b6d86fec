// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for kernel/sched/class_select.c, which includes this file so
 * that its static helpers can be tested directly.
 */
#include <kunit/test.h>

static void sched_class_lookup_known(struct kunit *test)
{
	const struct sched_class_choice *choice = sched_class_lookup("cfs");

	KUNIT_ASSERT_NOT_NULL(test, choice);
	KUNIT_EXPECT_PTR_EQ(test, choice->class, &fair_sched_class);
	/* A trailing newline, as from echo into a file, is accepted. */
	KUNIT_EXPECT_PTR_EQ(test, sched_class_lookup("cfs\n"), choice);
}

static void sched_class_lookup_rejects(struct kunit *test)
{
	static const char * const bad[] = {
		"", "bogus", "cf", "cfsx", "CFS", " cfs", "cfs ule", "rt", "idle",
	};
	int i;

	KUNIT_EXPECT_NULL(test, sched_class_lookup(NULL));
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_NULL_MSG(test, sched_class_lookup(bad[i]),
				      "accepted \"%s\"", bad[i]);
}

static void sched_class_default_is_known(struct kunit *test)
{
	KUNIT_EXPECT_NOT_NULL(test, sched_class_lookup(CONFIG_SCHED_DEFAULT_NAME));
}

static void sched_class_names(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, sched_class_name(&fair_sched_class), "cfs");
	KUNIT_EXPECT_STREQ(test, sched_class_name(&rt_sched_class), "rt");
	KUNIT_EXPECT_STREQ(test, sched_class_name(&dl_sched_class), "dl");
	KUNIT_EXPECT_STREQ(test, sched_class_name(&idle_sched_class), "idle");
#ifdef CONFIG_SMP
	KUNIT_EXPECT_STREQ(test, sched_class_name(&stop_sched_class), "stop");
#endif
	KUNIT_EXPECT_STREQ(test, sched_class_name(NULL), "unknown");
}

static void sched_class_known_list(struct kunit *test)
{
	char buf[64], want[64];
	char tiny[3];

	sched_class_known_names(buf, sizeof(buf));
	scnprintf(want, sizeof(want), "cfs%s%s%s", IS_ENABLED(CONFIG_SCHED_ULE) ? " ule" : "",
		  IS_ENABLED(CONFIG_SCHED_BMQ) ? " bmq" : "",
		  IS_ENABLED(CONFIG_SCHED_MUQSS) ? " muqss" : "");
	KUNIT_EXPECT_STREQ(test, buf, want);
	/* Truncates instead of overflowing a short buffer. */
	sched_class_known_names(tiny, sizeof(tiny));
	KUNIT_EXPECT_STREQ(test, tiny, "cf");
}

#ifdef CONFIG_SCHED_CLASS_SWITCH
static void sched_watchdog_values(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, sched_watchdog_ms_valid(0));
	KUNIT_EXPECT_TRUE(test, sched_watchdog_ms_valid(SCHED_WATCHDOG_MIN_MS));
	KUNIT_EXPECT_TRUE(test, sched_watchdog_ms_valid(SCHED_WATCHDOG_DEFAULT_MS));
	KUNIT_EXPECT_TRUE(test, sched_watchdog_ms_valid(SCHED_WATCHDOG_MAX_MS));
	KUNIT_EXPECT_FALSE(test, sched_watchdog_ms_valid(1));
	KUNIT_EXPECT_FALSE(test, sched_watchdog_ms_valid(SCHED_WATCHDOG_MIN_MS - 1));
	KUNIT_EXPECT_FALSE(test, sched_watchdog_ms_valid(SCHED_WATCHDOG_MAX_MS + 1));
	KUNIT_EXPECT_FALSE(test, sched_watchdog_ms_valid(UINT_MAX));
}

static void sched_watchdog_periods(struct kunit *test)
{
	/* A stall is seen within the timeout plus one period. */
	KUNIT_EXPECT_EQ(test, sched_watchdog_period_ms(SCHED_WATCHDOG_MIN_MS), 12U);
	KUNIT_EXPECT_EQ(test, sched_watchdog_period_ms(2000), 250U);
	KUNIT_EXPECT_EQ(test, sched_watchdog_period_ms(SCHED_WATCHDOG_DEFAULT_MS),
			SCHED_WATCHDOG_MAX_PERIOD_MS);
	KUNIT_EXPECT_EQ(test, sched_watchdog_period_ms(SCHED_WATCHDOG_MAX_MS),
			SCHED_WATCHDOG_MAX_PERIOD_MS);
	KUNIT_EXPECT_EQ(test, sched_watchdog_period_ms(1), 1U);
}
#endif

static struct kunit_case sched_class_select_cases[] = {
	KUNIT_CASE(sched_class_lookup_known),
	KUNIT_CASE(sched_class_lookup_rejects),
	KUNIT_CASE(sched_class_default_is_known),
	KUNIT_CASE(sched_class_names),
	KUNIT_CASE(sched_class_known_list),
#ifdef CONFIG_SCHED_CLASS_SWITCH
	KUNIT_CASE(sched_watchdog_values),
	KUNIT_CASE(sched_watchdog_periods),
#endif
	{}
};

static struct kunit_suite sched_class_select_suite = {
	.name = "sched_class_select",
	.test_cases = sched_class_select_cases,
};

kunit_test_suite(sched_class_select_suite);
