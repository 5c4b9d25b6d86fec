// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for kernel/sched/class_select.c, which includes this file so
 * that its static helpers can be tested directly.
 */
#include <kunit/test.h>

static void sched_class_lookup_known(struct kunit *test)
{
	const struct sched_class *choice = sched_class_lookup("cfs");

	KUNIT_EXPECT_PTR_EQ(test, choice, &fair_sched_class);
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

/*
 * Better work ending in the instant of a check: the task that waited
 * behind it is not reported by that check, only by the next if it still
 * has not run. A wait never behind better work is reported at once.
 */
static void sched_watchdog_stall_rule(struct kunit *test)
{
	unsigned long timeout = 2000, period = 250;

	KUNIT_EXPECT_FALSE(test, sched_watchdog_stalled(timeout, timeout, false, false));
	KUNIT_EXPECT_TRUE(test, sched_watchdog_stalled(timeout + 1, timeout, false, false));
	KUNIT_EXPECT_FALSE(test, sched_watchdog_stalled(12060, timeout, true, false));
	KUNIT_EXPECT_FALSE(test, sched_watchdog_stalled(12060, timeout, false, true));
	KUNIT_EXPECT_TRUE(test, sched_watchdog_stalled(12060 + period, timeout, false, false));
	/* Asked from two periods before the timeout, not earlier. */
	KUNIT_EXPECT_FALSE(test, sched_watchdog_asks(timeout - 2 * period, timeout, period));
	KUNIT_EXPECT_TRUE(test, sched_watchdog_asks(timeout - 2 * period + 1, timeout, period));
	KUNIT_EXPECT_TRUE(test, sched_watchdog_asks(timeout + 1, timeout, period));
}

/* A stall beside realtime work is attributed to it from half the CPU. */
static void sched_watchdog_rtdl_share(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sched_watchdog_rtdl_pct(0, 0), 0U);
	KUNIT_EXPECT_EQ(test, sched_watchdog_rtdl_pct(SCHED_CAPACITY_SCALE, 0), 100U);
	KUNIT_EXPECT_EQ(test, sched_watchdog_rtdl_pct(0, SCHED_CAPACITY_SCALE / 2),
			SCHED_WATCHDOG_RTDL_PCT);
	KUNIT_EXPECT_LT(test, sched_watchdog_rtdl_pct(SCHED_CAPACITY_SCALE / 2 - 8, 0),
			SCHED_WATCHDOG_RTDL_PCT);
	/* The two averages may add up beyond the capacity. */
	KUNIT_EXPECT_EQ(test, sched_watchdog_rtdl_pct(800, 800), 100U);
}

/*
 * The worker missing (as after a failed kthread_create_worker() at boot,
 * injected here for the length of the test): the watchdog timeout and
 * the class cannot be set, and nothing is armed. The sysctl handlers add
 * one warning line to these errors; they are not called here, to keep
 * the boot log what the guest tests expect.
 */
static void sched_class_without_worker(struct kunit *test)
{
	struct kthread_worker *worker = READ_ONCE(sched_class_worker);
	const struct sched_class *class, *other = &fair_sched_class;
	unsigned int ms = READ_ONCE(sched_watchdog_ms);
	int watchdog_ret, class_ret;

	for_each_pluggable_class(class)
		other = class;
	WRITE_ONCE(sched_class_worker, NULL);
	watchdog_ret = sched_watchdog_set(2000);
	class_ret = sched_class_switch(other);
	WRITE_ONCE(sched_class_worker, worker);
	KUNIT_EXPECT_EQ(test, watchdog_ret, -ENODEV);
	KUNIT_EXPECT_EQ(test, READ_ONCE(sched_watchdog_ms), ms);
	KUNIT_EXPECT_EQ(test, class_ret, -ENODEV);
}

/*
 * The fallback thread missing (as after a failed kthread_run() at boot,
 * injected for the length of the test): the watchdog timeout cannot be
 * set and a fallback cannot be asked for, so none is left pending.
 */
static void sched_class_without_fallback_thread(struct kunit *test)
{
	struct task_struct *thread = READ_ONCE(sched_fallback_thread);
	unsigned int ms = READ_ONCE(sched_watchdog_ms);
	int watchdog_ret;
	bool requested;

	WRITE_ONCE(sched_fallback_thread, NULL);
	watchdog_ret = sched_watchdog_set(2000);
	requested = sched_fallback_request("kunit");
	WRITE_ONCE(sched_fallback_thread, thread);
	KUNIT_EXPECT_EQ(test, watchdog_ret, -ENODEV);
	KUNIT_EXPECT_EQ(test, READ_ONCE(sched_watchdog_ms), ms);
	KUNIT_EXPECT_FALSE(test, requested);
	KUNIT_EXPECT_FALSE(test, sched_fallback_pending());
}

/*
 * No watchdog while a switch walks the tasks: the worker is busy with the
 * walk, so its checks stop, and the tick must not take that for a stall.
 * The flags are set as a switch sets them, under the switch mutex; the
 * real ticks see the same and stay quiet.
 */
static void sched_watchdog_tick_waits_for_switch(struct kunit *test)
{
	bool armed = READ_ONCE(sched_watchdog_armed);
	unsigned int ms = READ_ONCE(sched_watchdog_ms);

	if (!ms)
		kunit_skip(test, "the watchdog is off");
	mutex_lock(&sched_class_mutex);
	WRITE_ONCE(sched_class_switching, true);
	WRITE_ONCE(sched_watchdog_last_check, jiffies - 2 * msecs_to_jiffies(ms));
	WRITE_ONCE(sched_watchdog_armed, true);
	sched_watchdog_tick();
	KUNIT_EXPECT_FALSE(test, sched_fallback_pending());
	WRITE_ONCE(sched_watchdog_last_check, jiffies);
	WRITE_ONCE(sched_watchdog_armed, armed);
	WRITE_ONCE(sched_class_switching, false);
	mutex_unlock(&sched_class_mutex);
}

/* A switch is refused while another write waits, or a fallback is pending. */
static void sched_class_busy_refuses(struct kunit *test)
{
	const struct sched_class *cur = READ_ONCE(sched_normal_choice);
	int ret;

	KUNIT_ASSERT_FALSE(test, sched_class_busy());
	atomic_inc(&sched_class_write_pending);
	KUNIT_EXPECT_TRUE(test, sched_class_busy());
	ret = sched_class_switch(cur);
	atomic_dec(&sched_class_write_pending);
	KUNIT_EXPECT_EQ(test, ret, -EBUSY);
	KUNIT_EXPECT_FALSE(test, sched_class_busy());
	if (!READ_ONCE(sched_class_worker))
		return;
	/* Not busy: a switch to the class in use goes through the worker. */
	KUNIT_EXPECT_EQ(test, sched_class_switch(cur), 0);
	KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(sched_normal_choice), cur);
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
	KUNIT_CASE(sched_watchdog_stall_rule),
	KUNIT_CASE(sched_watchdog_rtdl_share),
	KUNIT_CASE(sched_class_without_worker),
	KUNIT_CASE(sched_class_without_fallback_thread),
	KUNIT_CASE(sched_watchdog_tick_waits_for_switch),
	KUNIT_CASE(sched_class_busy_refuses),
#endif
	{}
};

static struct kunit_suite sched_class_select_suite = {
	.name = "sched_class_select",
	.test_cases = sched_class_select_cases,
};

kunit_test_suite(sched_class_select_suite);
