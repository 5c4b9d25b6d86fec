// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the event recorder's control (included by events.c, so
 * they reach its state). Each restores the recorder as it found it.
 */
#include <kunit/test.h>

#define SEV_TEST_REPORT	4242

static bool sev_test_froze;

static void sev_test_freeze(void)
{
	sev_test_froze = sched_events_freeze(SEV_TEST_REPORT);
}

/* What a test expects of the recorder, read once. */
static void sev_expect(struct kunit *test, int state, bool writing)
{
	int now = READ_ONCE(sev_state);
	bool on = READ_ONCE(sev_writing);

	KUNIT_EXPECT_EQ(test, now, state);
	KUNIT_EXPECT_EQ(test, on, writing);
}

/*
 * Start a recording in @flight mode with @hook run inside the start's
 * window; the mode it replaces goes to @saved. Skips the test when a user
 * of the recorder is there first.
 */
static int sev_test_start(struct kunit *test, bool flight, void (*hook)(void), bool *saved)
{
	int ret;

	mutex_lock(&sev_mutex);
	if (READ_ONCE(sev_state) != SEV_STOPPED || sev_dump_users) {
		mutex_unlock(&sev_mutex);
		kunit_skip(test, "the recorder is in use");
	}
	*saved = sev_flight;
	sev_flight = flight;
	sev_start_window_hook = hook;
	ret = sev_start();
	sev_start_window_hook = NULL;
	if (ret)
		sev_flight = *saved;
	mutex_unlock(&sev_mutex);
	return ret;
}

/*
 * The sanity checker freezes a flight recording without the control
 * mutex. A freeze that lands while a start is still turning the writers on
 * must be refused: taken, it would be undone by the start, and the window
 * it froze written over. Once the start has published, a freeze stops
 * every writer and unhooks the probes.
 */
static void sev_freeze_during_start_is_refused(struct kunit *test)
{
	bool flight;
	int ret;

	sev_test_froze = true;
	ret = sev_test_start(test, true, sev_test_freeze, &flight);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_FALSE(test, sev_test_froze);
	sev_expect(test, SEV_RECORDING, true);

	KUNIT_EXPECT_TRUE(test, sched_events_freeze(SEV_TEST_REPORT));
	sev_expect(test, SEV_FROZEN, false);
	KUNIT_EXPECT_EQ(test, sev_frozen_id, SEV_TEST_REPORT);
	/* A second freeze finds nothing recording. */
	KUNIT_EXPECT_FALSE(test, sched_events_freeze(SEV_TEST_REPORT + 1));
	flush_work(&sev_unhook_work);

	mutex_lock(&sev_mutex);
	KUNIT_EXPECT_FALSE(test, sev_probes_on);
	KUNIT_EXPECT_EQ(test, sev_control("release"), 0);
	sev_expect(test, SEV_STOPPED, false);
	sev_flight = flight;
	mutex_unlock(&sev_mutex);
}

/* A fill-mode recording is never frozen: it keeps its first events. */
static void sev_fill_recording_is_not_frozen(struct kunit *test)
{
	bool flight;
	int ret;

	ret = sev_test_start(test, false, NULL, &flight);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_FALSE(test, sched_events_freeze(SEV_TEST_REPORT));
	sev_expect(test, SEV_RECORDING, true);

	mutex_lock(&sev_mutex);
	KUNIT_EXPECT_EQ(test, sev_control("start"), -EBUSY);
	KUNIT_EXPECT_EQ(test, sev_control("release"), -EBUSY);
	KUNIT_EXPECT_EQ(test, sev_control("stop"), 0);
	sev_expect(test, SEV_STOPPED, false);
	KUNIT_EXPECT_EQ(test, sev_control("release"), 0);
	sev_flight = flight;
	mutex_unlock(&sev_mutex);
}

static struct kunit_case sched_events_cases[] = {
	KUNIT_CASE(sev_freeze_during_start_is_refused),
	KUNIT_CASE(sev_fill_recording_is_not_frozen),
	{}
};

static struct kunit_suite sched_events_suite = {
	.name = "sched_events",
	.test_cases = sched_events_cases,
};

kunit_test_suite(sched_events_suite);
