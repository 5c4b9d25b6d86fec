// SPDX-License-Identifier: GPL-2.0
/*
 * The checks every class of normal tasks must pass, one table-driven
 * kselftest fixture run once per class (Documentation/scheduler/
 * sched-class-select.rst): each variant switches kernel.sched_class to its
 * class in the fixture's setup (skipped when the kernel lacks it) and back
 * in the teardown.
 *
 * - the sysctl names the class, takes the current class back and refuses
 *   an unknown name with EINVAL;
 * - this task, kthreadd and every task with a normal policy run on it,
 *   the others on rt, dl or stop;
 * - each integer knob of the class (kernel.sched_<class>_*) refuses a
 *   word, the value above its range and the one below with EINVAL, keeps
 *   its value, and logs one line that gives the range; its value written
 *   back is taken silently;
 * - an affinity of no online CPU is refused with EINVAL;
 * - nice 0 gets more CPU time than nice 19 on one CPU;
 * - a task bound to a CPU that goes offline runs on elsewhere, and the
 *   CPU comes back.
 *
 * Usage: [CLASS_GENERIC_BOOT=NAME] [CLASS_GENERIC_CLASSES=A,B] class_generic
 * CLASS_GENERIC_BOOT=NAME adds the check that the kernel booted on NAME;
 * CLASS_GENERIC_CLASSES skips the variants of the classes it does not
 * list (6.1's harness has no -v filter).
 */
#include "sched_test.h"
#include <sys/mman.h>

#define LOG_WAIT_MS		2000
/*
 * Each class's refusals share one pr_warn_ratelimited() state: 10 lines
 * per 5 s. A refusal waits until fewer than that many fell in the last
 * window, with a margin for the jiffies the kernel counts in.
 */
#define LOG_BURST		10
#define LOG_WINDOW_MS		5300

/* The start of the line a refused write to knob @name logs. */
static void knob_line(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "sched: kernel.%s takes an integer from", name);
}

/* Wait until @needle's count differs from @before; the new count. */
static int log_count_after(const char *needle, int before)
{
	long end = now_ms() + LOG_WAIT_MS;
	int n;

	while ((n = log_count(needle)) == before && now_ms() < end)
		sleep_ms(20);
	return n;
}

/*
 * When the last LOG_BURST refusals were written, oldest first, in memory
 * the tests share: the harness runs each test in a child of its own.
 */
static long *refusal_ms;

static void __attribute__((constructor)) refusal_history(void)
{
	refusal_ms = mmap(NULL, LOG_BURST * sizeof(*refusal_ms), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (refusal_ms == MAP_FAILED)
		refusal_ms = NULL;
}

static void refusal_pace(void)
{
	long wait;

	if (!refusal_ms) {
		sleep_ms(LOG_WINDOW_MS / LOG_BURST);
		return;
	}
	wait = refusal_ms[0] + LOG_WINDOW_MS - now_ms();
	if (refusal_ms[0] && wait > 0)
		sleep_ms(wait);
	memmove(refusal_ms, refusal_ms + 1, (LOG_BURST - 1) * sizeof(*refusal_ms));
	refusal_ms[LOG_BURST - 1] = now_ms();
}

/* Is @name in the comma-separated list @list? */
static int listed(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)); p += len) {
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return 1;
	}
	return 0;
}

FIXTURE(cls) {
	char before[NAME_LEN];
};

FIXTURE_VARIANT(cls) {
	const char *name;
};

FIXTURE_VARIANT_ADD(cls, cfs) { .name = "cfs" };
FIXTURE_VARIANT_ADD(cls, ule) { .name = "ule" };
FIXTURE_VARIANT_ADD(cls, bmq) { .name = "bmq" };
FIXTURE_VARIANT_ADD(cls, muqss) { .name = "muqss" };

FIXTURE_SETUP(cls)
{
	const char *only = getenv("CLASS_GENERIC_CLASSES");
	int ret;

	if (only && !listed(only, variant->name))
		SKIP(return, "%s is not in CLASS_GENERIC_CLASSES", variant->name);
	if (read_line(CLASS_SYSCTL, self->before, sizeof(self->before)))
		SKIP(return, "no %s: not a kernel of this series", CLASS_SYSCTL);
	ret = switch_class(variant->name);
	if (ret == -EINVAL)
		SKIP(return, "%s is not built into this kernel", variant->name);
	ASSERT_EQ(0, ret) TH_LOG("switching to %s: %s", variant->name, strerror(-ret));
}

FIXTURE_TEARDOWN(cls)
{
	if (self->before[0])
		EXPECT_EQ(0, switch_class(self->before));
}

TEST_F(cls, sysctl_names_the_class)
{
	char now[NAME_LEN];

	if (setup_skipped(_metadata))
		return;
	ASSERT_EQ(0, read_line(CLASS_SYSCTL, now, sizeof(now)));
	EXPECT_STREQ(variant->name, now);
}

TEST_F(cls, current_class_written_back_is_kept)
{
	char now[NAME_LEN];

	if (setup_skipped(_metadata))
		return;
	ASSERT_EQ(0, write_text(CLASS_SYSCTL, variant->name));
	ASSERT_EQ(0, read_line(CLASS_SYSCTL, now, sizeof(now)));
	EXPECT_STREQ(variant->name, now);
}

TEST_F(cls, unknown_name_refused)
{
	char now[NAME_LEN];

	if (setup_skipped(_metadata))
		return;
	EXPECT_EQ(-EINVAL, write_text(CLASS_SYSCTL, "bogus"));
	ASSERT_EQ(0, read_line(CLASS_SYSCTL, now, sizeof(now)));
	EXPECT_STREQ(variant->name, now);
}

TEST_F(cls, this_task_and_kthreadd_run_on_it)
{
	char cls[NAME_LEN];

	if (setup_skipped(_metadata))
		return;
	ASSERT_EQ(0, sched_field("/proc/self/sched", "class", cls, sizeof(cls)));
	EXPECT_STREQ(variant->name, cls);
	ASSERT_EQ(0, sched_field("/proc/2/sched", "class", cls, sizeof(cls)));
	EXPECT_STREQ(variant->name, cls);
}

/*
 * Every task with a normal policy (0 normal, 3 batch, 5 idle) on the class,
 * every other one on rt, dl or stop; zombies keep the class they died on.
 */
TEST_F(cls, every_normal_task_runs_on_it)
{
	int normal, others, bad;

	if (setup_skipped(_metadata))
		return;
	bad = normal_tasks_off(_metadata, variant->name, &normal, &others);
	TH_LOG("%d normal-policy tasks, %d realtime or deadline tasks", normal, others);
	EXPECT_LT(0, normal);
	EXPECT_EQ(0, bad);
}

/* A write to knob @name that must be refused: EINVAL, value kept, one line. */
static void expect_refused(struct __test_metadata *_metadata, const char *name,
			   const char *value, const char *what)
{
	char path[PATH_LEN], before[64], after[64], needle[PATH_LEN];
	int lines;

	snprintf(path, sizeof(path), SYSCTL_DIR "%s", name);
	knob_line(needle, sizeof(needle), name);
	ASSERT_EQ(0, read_line(path, before, sizeof(before)));
	refusal_pace();
	lines = log_count(needle);
	EXPECT_EQ(-EINVAL, write_text(path, value))
		TH_LOG("%s: %s '%s' not refused", name, what, value);
	EXPECT_EQ(lines + 1, log_count_after(needle, lines))
		TH_LOG("%s: %s '%s': want one log line", name, what, value);
	ASSERT_EQ(0, read_line(path, after, sizeof(after)));
	EXPECT_STREQ(before, after) TH_LOG("%s: %s '%s' changed the value", name, what, value);
}

/* The range the last refusal of @name logged; 0 when found. */
static int logged_range(const char *name, long *low, long *high)
{
	char needle[PATH_LEN], *buf = kernel_log(), *p, *last = NULL;
	int ret = -ENOENT;

	if (!buf)
		return -EIO;
	knob_line(needle, sizeof(needle), name);
	for (p = buf; (p = strstr(p, needle)); p += strlen(needle))
		last = p + strlen(needle);
	if (last && sscanf(last, "%ld to %ld", low, high) == 2)
		ret = 0;
	free(buf);
	return ret;
}

/* Minimum integer knobs per class: 17 in all today, at least 15. */
static int knobs_expected(const char *name)
{
	if (!strcmp(name, "ule"))
		return 9;
	if (!strcmp(name, "bmq"))
		return 3;
	if (!strcmp(name, "muqss"))
		return 3;
	return 0;
}

TEST_F(cls, integer_knobs_refuse_bad_writes)
{
	char prefix[NAME_LEN + 8], path[PATH_LEN], value[64], text[32], needle[PATH_LEN];
	struct dirent *de;
	int knobs = 0;
	DIR *dir;

	if (setup_skipped(_metadata))
		return;
	snprintf(prefix, sizeof(prefix), "sched_%s_", variant->name);
	dir = opendir(SYSCTL_DIR);
	ASSERT_NE(NULL, dir);
	while ((de = readdir(dir))) {
		long low, high;
		int lines, ret;
		char *end;

		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), SYSCTL_DIR "%s", de->d_name);
		if (read_line(path, value, sizeof(value)))
			continue;
		strtol(value, &end, 10);
		if (!value[0] || *end)
			continue;	/* a word (sched_muqss_rqshare) */
		knobs++;
		expect_refused(_metadata, de->d_name, "many", "a word");
		ret = logged_range(de->d_name, &low, &high);
		EXPECT_EQ(0, ret) TH_LOG("%s: no range in the line", de->d_name);
		if (ret)
			continue;
		TH_LOG("%s: %ld..%ld", de->d_name, low, high);
		snprintf(text, sizeof(text), "%ld", high + 1);
		expect_refused(_metadata, de->d_name, text, "above the range:");
		snprintf(text, sizeof(text), "%ld", low - 1);
		expect_refused(_metadata, de->d_name, text, "below the range:");
		knob_line(needle, sizeof(needle), de->d_name);
		lines = log_count(needle);
		EXPECT_EQ(0, write_text(path, value)) TH_LOG("%s: %s refused", de->d_name, value);
		/* A line it logged would arrive with the write's return. */
		EXPECT_EQ(lines, log_count(needle)) TH_LOG("%s: writing back logged", de->d_name);
	}
	closedir(dir);
	if (!knobs_expected(variant->name))
		SKIP(return, "no integer knobs of %s", variant->name);
	EXPECT_LE(knobs_expected(variant->name), knobs);
}

TEST_F(cls, affinity_of_no_online_cpu_refused)
{
	long last = sysconf(_SC_NPROCESSORS_CONF);
	cpu_set_t *set;
	size_t size;

	if (setup_skipped(_metadata))
		return;
	set = CPU_ALLOC(last + 64);
	ASSERT_NE(NULL, set);
	size = CPU_ALLOC_SIZE(last + 64);
	CPU_ZERO_S(size, set);
	CPU_SET_S(last + 63, size, set);
	EXPECT_EQ(-1, sched_setaffinity(0, size, set));
	EXPECT_EQ(EINVAL, errno);
	CPU_FREE(set);
}

/* Nice 0 against nice 19 on one CPU: the share this CPU time is measured over. */
#define NICE_WINDOW_MS		2000
/*
 * Every class gives nice 0 more than 3/2 of nice 19's time: CFS about 70
 * times, MuQSS 33, ULE (whose calendar queue only delays the worse
 * priority) 2.1, BMQ all of it (one boot, debug kernel).
 */
#define NICE_MIN_RATIO_NUM	3
#define NICE_MIN_RATIO_DEN	2

TEST_F(cls, nice_0_outruns_nice_19_on_one_cpu)
{
	int cpu = sysconf(_SC_NPROCESSORS_ONLN) - 1, fair, low;
	long long f0, l0, f1, l1;

	if (setup_skipped(_metadata))
		return;
	fair = spinner(cpu, 0);
	low = spinner(cpu, 19);
	ASSERT_LT(0, fair);
	ASSERT_LT(0, low);
	f0 = runtime_ns(fair);
	l0 = runtime_ns(low);
	sleep_ms(NICE_WINDOW_MS);
	f1 = runtime_ns(fair);
	l1 = runtime_ns(low);
	stop(fair);
	stop(low);
	TH_LOG("CPU %d over %d ms: nice 0 ran %lld ms, nice 19 %lld ms", cpu, NICE_WINDOW_MS,
	       (f1 - f0) / 1000000, (l1 - l0) / 1000000);
	EXPECT_LT(NICE_MIN_RATIO_NUM * (l1 - l0), NICE_MIN_RATIO_DEN * (f1 - f0));
}

/*
 * A task bound to a CPU that goes offline runs on elsewhere (the kernel
 * widens its affinity), and the CPU comes back online.
 */
TEST_F(cls, task_of_an_offlined_cpu_runs_elsewhere)
{
	int cpu = sysconf(_SC_NPROCESSORS_ONLN) - 1, pid, ret, where = -1;
	long long before, now = -1;
	char path[PATH_LEN];
	long end;

	if (setup_skipped(_metadata))
		return;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	if (cpu < 1 || access(path, W_OK))
		SKIP(return, "CPU %d cannot go offline", cpu);
	pid = spinner(cpu, 0);
	ASSERT_LT(0, pid);
	ret = set_online(cpu, "0");
	if (ret) {
		stop(pid);
		ASSERT_EQ(0, ret) TH_LOG("offlining CPU %d: %s", cpu, strerror(-ret));
	}
	before = runtime_ns(pid);
	end = now_ms() + HOTPLUG_WAIT_MS;
	do {
		sleep_ms(20);
		now = runtime_ns(pid);
		where = last_cpu(pid);
	} while ((now <= before || where == cpu) && now_ms() < end);
	stop(pid);
	ret = set_online(cpu, "1");
	EXPECT_LT(before, now) TH_LOG("the task did not run after CPU %d went offline", cpu);
	EXPECT_NE(cpu, where);
	ASSERT_EQ(0, ret) TH_LOG("onlining CPU %d: %s", cpu, strerror(-ret));
}

TEST(booted_on_the_class_named)
{
	const char *want = getenv("CLASS_GENERIC_BOOT");
	char cls[NAME_LEN];

	if (!want)
		SKIP(return, "CLASS_GENERIC_BOOT not set");
	ASSERT_EQ(0, read_line(CLASS_SYSCTL, cls, sizeof(cls)));
	EXPECT_STREQ(want, cls);
}

TEST_HARNESS_MAIN
