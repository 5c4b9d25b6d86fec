// SPDX-License-Identifier: GPL-2.0
/*
 * In-guest checks of the ULE class (Documentation/scheduler/ule.rst) on
 * kselftest_harness.h, for a 2x4 guest booted with sched=ule. What every
 * class must pass (every normal task on the class, the knobs' ranges) is
 * class_generic's; these are ULE's own rules, with the workloads of
 * uleload.c:
 *
 * - the ule.* lines of every task, kernel threads in the kernel band;
 * - a sleeper turns interactive and a spinner batch, by score and
 *   history, sub-tick sleeps included;
 * - the kernel.sched_ule_* sysctls: defaults, refused and taken writes,
 *   sched_ule_interact's effect, the ule_interactive tracepoint;
 * - nice 19 gets a worse priority than nice 0;
 * - idle CPUs steal from a busy one (ule_transfer by=steal), also past a
 *   CPU whose tasks may not come, looking at sysctl_sched_nr_migrate
 *   tasks of a queue at most;
 * - the wakeup granularity, sched_ule_strict, where a preempted task is
 *   put back, and when a reader woken by write() runs;
 * - priority lending through a PI mutex;
 * - exit and fork charge histories as FreeBSD does; thread creation does
 *   not;
 * - a reniced running spinner keeps its CPU until its slice ends.
 *
 * Usage: [ULELOAD=PATH] [SCHED_TEST_METRICS=FILE] ule_checks [harness options]
 * ULELOAD defaults to the uleload beside this program.
 */
#include "sched_test.h"
#include <dirent.h>

#define ULE_CPUS		8	/* the 2x4 guest */
#define ULE_DIR			SYSCTL_DIR "sched_ule_"
#define GRAN_KNOB		ULE_DIR "wakeup_gran_us"
#define STRICT_KNOB		ULE_DIR "strict"
#define INTERACT_KNOB		ULE_DIR "interact"
#define CFS_GRAN		"/sys/kernel/debug/sched/wakeup_granularity_ns"
#define PF_KTHREAD		0x00200000
#define STAT_FLAGS		9

/* FreeBSD's priority bands as ULE's lines give them. */
#define PRI_KERNEL_MIN		80
#define PRI_INTERACT_MIN	120
#define PRI_INTERACT_MAX	151
#define PRI_BATCH_MIN		152
#define PRI_BATCH_MAX		223
#define PRI_IDLE_MIN		224
#define PRI_IDLE_MAX		255

/* The state ULE shows in /proc/<pid>[/task/<tid>]/sched. */
struct ule {
	char cls[NAME_LEN], queue[NAME_LEN];
	long policy, prio, score, slice, runtime, slptime, cpu_pct;
};

#define UNSET			(-999999)

static void ule_parse_line(struct ule *u, const char *line)
{
	static const struct { const char *key; size_t off; } nums[] = {
		{ "policy", offsetof(struct ule, policy) },
		{ "ule.prio", offsetof(struct ule, prio) },
		{ "ule.score", offsetof(struct ule, score) },
		{ "ule.slice_us", offsetof(struct ule, slice) },
		{ "ule.runtime_us", offsetof(struct ule, runtime) },
		{ "ule.slptime_us", offsetof(struct ule, slptime) },
		{ "ule.cpu_pct", offsetof(struct ule, cpu_pct) },
	};
	const char *val = strchr(line, ':');
	size_t klen = strcspn(line, " :");
	unsigned int i;

	if (!val)
		return;
	for (val++; *val == ' '; val++)
		;
	if (klen == 5 && !strncmp(line, "class", 5)) {
		snprintf(u->cls, sizeof(u->cls), "%.*s", (int)strcspn(val, "\n"), val);
		return;
	}
	if (klen == 9 && !strncmp(line, "ule.queue", 9)) {
		snprintf(u->queue, sizeof(u->queue), "%.*s", (int)strcspn(val, "\n"), val);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(nums); i++)
		if (strlen(nums[i].key) == klen && !strncmp(line, nums[i].key, klen))
			*(long *)((char *)u + nums[i].off) = atol(val);
}

/* Read a sched file in one pass; 0, or -1 when the task is gone. */
static int ule_read_path(const char *path, struct ule *u)
{
	char line[256];
	FILE *f = fopen(path, "r");

	memset(u, 0, sizeof(*u));
	u->policy = UNSET;
	u->prio = UNSET;
	u->score = UNSET;
	u->slice = UNSET;
	u->runtime = UNSET;
	u->slptime = UNSET;
	u->cpu_pct = UNSET;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		ule_parse_line(u, line);
	fclose(f);
	return u->cls[0] ? 0 : -1;
}

/* Task @tid of @pid (@tid 0: the process itself). */
static int ule_read(int pid, int tid, struct ule *u)
{
	char path[PATH_LEN];

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/sched", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	return ule_read_path(path, u);
}

static const char *ule_state(const struct ule *u)
{
	static char buf[256];

	snprintf(buf, sizeof(buf),
		 "prio %ld score %ld queue %s slice_us %ld runtime_us %ld slptime_us %ld cpu_pct %ld",
		 u->prio, u->score, u->queue, u->slice, u->runtime, u->slptime, u->cpu_pct);
	return buf;
}

static bool in_range(long v, long lo, long hi)
{
	return v != UNSET && v >= lo && v <= hi;
}

/* The queue of a FreeBSD priority. */
static const char *queue_of(long prio)
{
	if (prio < PRI_BATCH_MIN)
		return "realtime";
	return prio <= PRI_BATCH_MAX ? "timeshare" : "idle";
}

/*
 * Poll until uleload task @pid is in @queue at a priority in @lo..@hi,
 * for at most @limit_ms after @start_ms; @waited_ms: how long it took.
 */
static bool wait_ule(int pid, const char *queue, long lo, long hi, long start_ms,
		     long limit_ms, struct ule *u, long *waited_ms)
{
	for (;;) {
		*waited_ms = now_ms() - start_ms;
		if (runs_uleload(pid) && !ule_read(pid, 0, u) && !strcmp(u->queue, queue) &&
		    in_range(u->prio, lo, hi))
			return true;
		if (*waited_ms >= limit_ms)
			return false;
		sleep_ms(POLL_MS);
	}
}

static int knob_num(const char *path)
{
	char val[64];

	return read_line(path, val, sizeof(val)) ? -1 : atoi(val);
}

/* The ULE knobs a test may change, saved by the setup. */
static const char * const saved_knobs[] = {
	"interact", "slice_us", "slice_min_us", "balance_interval_ms", "steal_thresh",
	"preempt_thresh", "always_steal", "wakeup_gran_us", "strict",
};

FIXTURE(ule) {
	struct kids kids;
	char knobs[ARRAY_SIZE(saved_knobs)][NAME_LEN];
	char out[PATH_LEN];
};

/* The value the setup saved of knob @name. */
static const char *saved(const char (*knobs)[NAME_LEN], const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(saved_knobs); i++)
		if (!strcmp(saved_knobs[i], name))
			return knobs[i];
	return "";
}

FIXTURE_SETUP(ule)
{
	char cls[NAME_LEN], path[PATH_LEN];
	unsigned int i;

	if (read_line(CLASS_SYSCTL, cls, sizeof(cls)) || strcmp(cls, "ule"))
		SKIP(return, "normal tasks are not on ule");
	if (online_cpus() < ULE_CPUS)
		SKIP(return, "%d CPUs online, these checks want the 2x4 guest", online_cpus());
	if (access(uleload_path(), X_OK))
		SKIP(return, "no uleload at %.200s (ULELOAD=)", uleload_path());
	for (i = 0; i < ARRAY_SIZE(saved_knobs); i++) {
		snprintf(path, sizeof(path), ULE_DIR "%s", saved_knobs[i]);
		ASSERT_EQ(0, read_line(path, self->knobs[i], NAME_LEN));
	}
	snprintf(self->out, sizeof(self->out), "/tmp/ule_checks.%d", (int)getpid());
	ASSERT_EQ(0, mkdir(self->out, 0755));
	ASSERT_EQ(0, trace_ready());
}

FIXTURE_TEARDOWN(ule)
{
	char path[PATH_LEN];
	unsigned int i;

	stop_all(&self->kids);
	trace_event("ule", 0);
	trace_event("sched/sched_switch", 0);
	for (i = 0; i < ARRAY_SIZE(saved_knobs); i++) {
		if (!self->knobs[i][0])
			continue;
		snprintf(path, sizeof(path), ULE_DIR "%s", saved_knobs[i]);
		write_text(path, self->knobs[i]);
	}
}

/*
 * The ule.* lines of every normal-policy task are well-formed: the
 * priority in its band (kernel threads 80-223, SCHED_IDLE 224-255, the
 * others 120-255), the queue of that priority, score and %CPU as
 * percentages, the slice at most sched_ule_slice_us; most kernel threads
 * in the kernel band 80-119.
 */
TEST_F(ule, every_task_has_consistent_ule_lines)
{
	static int ids[MAX_TASKS][2];
	int normal = 0, kthreads = 0, spent = 0, bad = 0, n, i;
	long max_slice = knob_num(ULE_DIR "slice_us");

	if (setup_skipped(_metadata))
		return;
	n = list_tasks(ids, MAX_TASKS);
	ASSERT_LT(0, n);
	for (i = 0; i < n; i++) {
		int pid = ids[i][0], tid = ids[i][1];
		long lo = PRI_INTERACT_MIN, hi = PRI_IDLE_MAX, flags;
		struct ule u;

		if (ule_read(pid, tid, &u))
			continue;
		flags = task_stat_num(tid, STAT_FLAGS);
		if (flags < 0)
			continue;
		if (u.policy != SCHED_OTHER && u.policy != SCHED_BATCH && u.policy != SCHED_IDLE)
			continue;
		normal++;
		if (flags & PF_KTHREAD) {
			kthreads++;
			/*
			 * The kernel band until a whole slice without
			 * sleeping; then what its history gives, until it
			 * next wakes.
			 */
			lo = PRI_KERNEL_MIN;
			hi = PRI_BATCH_MAX;
			spent += in_range(u.prio, PRI_INTERACT_MIN, PRI_BATCH_MAX);
		}
		if (u.policy == SCHED_IDLE) {
			lo = PRI_IDLE_MIN;
			hi = PRI_IDLE_MAX;
		}
		if (in_range(u.prio, lo, hi) && !strcmp(u.queue, queue_of(u.prio)) &&
		    in_range(u.score, 0, 100) && in_range(u.cpu_pct, 0, 100) &&
		    in_range(u.slice, 0, max_slice) && u.runtime != UNSET && u.slptime != UNSET)
			continue;
		if (bad++ < 20)
			TH_LOG("%d/%d: %s", pid, tid, ule_state(&u));
	}
	TH_LOG("%d normal-policy tasks, %d kernel threads, %d of them above the kernel band",
	       normal, kthreads, spent);
	EXPECT_LT(0, kthreads);
	EXPECT_EQ(0, bad);
	EXPECT_LE(spent * 4, kthreads);
}

/*
 * A sleeper (1 ms runs, 9 ms sleeps) turns interactive (realtime queue,
 * 120-151) within 6 s (a host stall during its bursts counts as its run
 * time: CI once saw score 30 at 3 s), a spinner batch (timeshare,
 * 152-223) within 3 s; their scores and histories say why. Then the
 * sysctls act on the sleeper: at sched_ule_interact 0 nothing is
 * interactive, back at 30 it is again; ule_interactive traced both.
 */
TEST_F_TIMEOUT(ule, sleeper_interactive_spinner_batch, 90)
{
	struct ule sl, sp;
	long start = now_ms(), waited;
	int sleeper, spinner, hog, i;
	char want[64];

	if (setup_skipped(_metadata))
		return;
	ASSERT_EQ(0, trace_restart());
	ASSERT_EQ(0, trace_event("ule", 1));
	sleeper = track(&self->kids, load(NULL, -1, 0, 0, "sleeper", "1000", "9000", "120", NULL));
	spinner = track(&self->kids, load(NULL, -1, 0, 0, "spinner", "120", NULL));
	ASSERT_LT(0, sleeper);
	ASSERT_LT(0, spinner);
	EXPECT_TRUE(wait_ule(sleeper, "realtime", PRI_INTERACT_MIN, PRI_INTERACT_MAX, start,
			     6000, &sl, &waited)) TH_LOG("sleeper: %s", ule_state(&sl));
	TH_LOG("sleeper interactive after %ld ms", waited);
	EXPECT_TRUE(wait_ule(spinner, "timeshare", PRI_BATCH_MIN, PRI_BATCH_MAX, start, 3000,
			     &sp, &waited)) TH_LOG("spinner: %s", ule_state(&sp));
	/* Let the spinner's history fill before comparing the two. */
	sleep_ms(1000);
	ASSERT_EQ(0, ule_read(sleeper, 0, &sl));
	ASSERT_EQ(0, ule_read(spinner, 0, &sp));
	TH_LOG("sleeper: %s", ule_state(&sl));
	TH_LOG("spinner: %s", ule_state(&sp));
	metric("sleeper_interactive_spinner_batch", "sleeper_score", sl.score, "");
	metric("sleeper_interactive_spinner_batch", "spinner_score", sp.score, "");
	EXPECT_TRUE(in_range(sl.score, 0, 29) && in_range(sp.score, 30, 100));
	/* Same age, so the recent %CPU compares whatever window it covers. */
	EXPECT_GT(sl.slptime, sl.runtime);
	EXPECT_GT(sp.runtime, sp.slptime);
	EXPECT_GT(sp.cpu_pct, sl.cpu_pct);

	/* Nothing is interactive at 0: the sleeper turns batch at its next wakeup. */
	ASSERT_EQ(0, write_text(INTERACT_KNOB, "0"));
	EXPECT_TRUE(wait_ule(sleeper, "timeshare", PRI_BATCH_MIN, PRI_BATCH_MAX, now_ms(), 3000,
			     &sl, &waited)) TH_LOG("interact 0: sleeper %s", ule_state(&sl));
	ASSERT_EQ(0, write_text(INTERACT_KNOB, "30"));
	EXPECT_TRUE(wait_ule(sleeper, "realtime", PRI_INTERACT_MIN, PRI_INTERACT_MAX, now_ms(),
			     3000, &sl, &waited)) TH_LOG("interact 30: sleeper %s", ule_state(&sl));

	/*
	 * At a threshold of 50 or less FreeBSD scores a task that runs at
	 * least as long as it sleeps 50 without working out the ratio, so
	 * nice alone decides: at 40 a nice -15 spinner scores 35 and is
	 * interactive (120); at 30 it is batch. The full ratio (about 100
	 * here) would keep it batch. The 3 s start once it runs uleload.
	 */
	hog = track(&self->kids, load(NULL, 1, 1, -15, "spinner", "20", NULL));
	ASSERT_LT(0, hog);
	for (i = 0; i < 100 && !runs_uleload(hog); i++)
		sleep_ms(POLL_MS);
	ASSERT_EQ(0, write_text(INTERACT_KNOB, "40"));
	EXPECT_TRUE(wait_ule(hog, "realtime", PRI_INTERACT_MIN, PRI_INTERACT_MIN, now_ms(), 3000,
			     &sp, &waited))
		TH_LOG("interact 40: nice -15 spinner %s", ule_state(&sp));
	ASSERT_EQ(0, write_text(INTERACT_KNOB, "30"));
	EXPECT_TRUE(wait_ule(hog, "timeshare", PRI_BATCH_MIN, PRI_BATCH_MAX, now_ms(), 3000,
			     &sp, &waited))
		TH_LOG("interact 30: nice -15 spinner %s", ule_state(&sp));
	stop_all(&self->kids);
	trace_event("ule", 0);
	snprintf(want, sizeof(want), "ule_interactive: pid=%d ", sleeper);
	EXPECT_LE(1, trace_count(want, "now=batch", NULL));
	EXPECT_LE(1, trace_count(want, "now=interactive", NULL));
}

/*
 * Sub-tick sleeps: 86 % asleep in 0.6 ms naps is interactive on FreeBSD
 * (score 8): it credits the tick boundaries a sleep crosses.
 */
TEST_F(ule, sub_tick_sleeper_interactive)
{
	long waited;
	struct ule u;
	int pid;

	if (setup_skipped(_metadata))
		return;
	pid = track(&self->kids, load(NULL, -1, 0, 0, "sleeper", "100", "600", "20", NULL));
	ASSERT_LT(0, pid);
	EXPECT_TRUE(wait_ule(pid, "realtime", PRI_INTERACT_MIN, PRI_INTERACT_MAX, now_ms(), 8000,
			     &u, &waited)) TH_LOG("%s", ule_state(&u));
	metric("sub_tick_sleeper_interactive", "waited_ms", waited, "ms");
}

/* Defaults, FreeBSD's where it has them; the granularity is CFS's. */
static const struct { const char *name, *value; } ule_defaults[] = {
	{ "interact", "30" }, { "slice_us", "94488" }, { "slice_min_us", "15748" },
	{ "balance_interval_ms", "1000" }, { "steal_thresh", "2" },
	{ "preempt_thresh", "80" }, { "always_steal", "0" }, { "strict", "0" },
};

TEST_F(ule, sysctl_defaults)
{
	char path[PATH_LEN], val[64], cfs[64];
	unsigned int i;

	if (setup_skipped(_metadata))
		return;
	for (i = 0; i < ARRAY_SIZE(ule_defaults); i++) {
		snprintf(path, sizeof(path), ULE_DIR "%s", ule_defaults[i].name);
		ASSERT_EQ(0, read_line(path, val, sizeof(val)));
		EXPECT_STREQ(ule_defaults[i].value, val) TH_LOG("%s", path);
	}
	ASSERT_EQ(0, read_line(CFS_GRAN, cfs, sizeof(cfs)));
	EXPECT_EQ(atol(cfs) / 1000, knob_num(GRAN_KNOB));
}

/* Writes each knob refuses with EINVAL, keeping its value. */
static const struct { const char *name, *value; } ule_refused[] = {
	{ "interact", "abc" }, { "interact", "" }, { "interact", "-1" }, { "interact", "101" },
	{ "preempt_thresh", "256" }, { "preempt_thresh", "-1" },
	{ "wakeup_gran_us", "1000001" },
	{ "strict", "2" }, { "strict", "-1" }, { "strict", "abc" },
	{ "always_steal", "2" }, { "always_steal", "-1" }, { "always_steal", "abc" },
	{ "slice_us", "abc" }, { "slice_min_us", "abc" }, { "balance_interval_ms", "abc" },
	{ "steal_thresh", "abc" }, { "wakeup_gran_us", "abc" },
};

/* Write "@value\n" to knob @name in one write(); 0 or -errno. */
static int knob_write(const char *name, const char *value)
{
	char path[PATH_LEN], text[64];

	snprintf(path, sizeof(path), ULE_DIR "%s", name);
	snprintf(text, sizeof(text), "%s\n", value);
	return write_text(path, text);
}

static void knob_read(const char *name, char *val, size_t len)
{
	char path[PATH_LEN];

	snprintf(path, sizeof(path), ULE_DIR "%s", name);
	if (read_line(path, val, len))
		snprintf(val, len, "unreadable");
}

TEST_F_TIMEOUT(ule, sysctls_refuse_bad_writes, 60)
{
	char before[64], after[64];
	unsigned int i;

	if (setup_skipped(_metadata))
		return;
	for (i = 0; i < ARRAY_SIZE(ule_refused); i++) {
		knob_read(ule_refused[i].name, before, sizeof(before));
		EXPECT_EQ(-EINVAL, knob_write(ule_refused[i].name, ule_refused[i].value))
			TH_LOG("%s '%s'", ule_refused[i].name, ule_refused[i].value);
		knob_read(ule_refused[i].name, after, sizeof(after));
		EXPECT_STREQ(before, after);
	}
}

/* Values each knob takes, different from its default. */
static const struct { const char *name, *value; } ule_taken[] = {
	{ "interact", "40" }, { "slice_us", "78740" }, { "slice_min_us", "7874" },
	{ "balance_interval_ms", "500" }, { "steal_thresh", "3" },
	{ "preempt_thresh", "120" }, { "wakeup_gran_us", "500" }, { "always_steal", "1" },
};

/*
 * FreeBSD's kern.sched.quantum sets the minimum slice too: a sixth of the
 * slice. With these slices slice_min_us stays below slice_us whatever
 * the order of the writes. The teardown restores the defaults.
 */
TEST_F(ule, sysctls_take_valid_writes_and_the_defaults_back)
{
	char val[64];
	unsigned int i;

	if (setup_skipped(_metadata))
		return;
	ASSERT_EQ(0, knob_write("slice_us", "60000"));
	knob_read("slice_min_us", val, sizeof(val));
	EXPECT_STREQ("10000", val);
	for (i = 0; i < ARRAY_SIZE(ule_taken); i++) {
		EXPECT_EQ(0, knob_write(ule_taken[i].name, ule_taken[i].value))
			TH_LOG("%s '%s'", ule_taken[i].name, ule_taken[i].value);
		knob_read(ule_taken[i].name, val, sizeof(val));
		EXPECT_STREQ(ule_taken[i].value, val);
	}
	/* The defaults are taken back. */
	for (i = 0; i < ARRAY_SIZE(ule_defaults); i++) {
		EXPECT_EQ(0, knob_write(ule_defaults[i].name, ule_defaults[i].value));
		knob_read(ule_defaults[i].name, val, sizeof(val));
		EXPECT_STREQ(ule_defaults[i].value, val);
	}
}

/* Nice: spinners on CPUs of their own, so only nice separates their priorities. */
TEST_F(ule, nice_19_spinner_gets_a_worse_priority)
{
	long start = now_ms(), waited;
	struct ule u0, u19;
	int a, b, i, worse = 0;

	if (setup_skipped(_metadata))
		return;
	a = track(&self->kids, load(NULL, 2, 2, 0, "spinner", "20", NULL));
	b = track(&self->kids, load(NULL, 3, 3, 19, "spinner", "20", NULL));
	ASSERT_LT(0, a);
	ASSERT_LT(0, b);
	EXPECT_TRUE(wait_ule(a, "timeshare", PRI_BATCH_MIN, PRI_BATCH_MAX, start, 5000, &u0,
			     &waited) &&
		    wait_ule(b, "timeshare", PRI_BATCH_MIN, PRI_BATCH_MAX, start, 5000, &u19,
			     &waited));
	sleep_ms(1000);
	for (i = 0; i < 3; i++) {
		ule_read(a, 0, &u0);
		ule_read(b, 0, &u19);
		TH_LOG("nice 0 prio %ld, nice 19 prio %ld", u0.prio, u19.prio);
		worse += u0.prio != UNSET && u19.prio > u0.prio;
		sleep_ms(200);
	}
	EXPECT_EQ(3, worse);
}

/*
 * Idle stealing: 4 spinners on CPU 0 while the other CPUs idle; once
 * unpinned (SIGUSR1), other CPUs take three of them within 2 s, each move
 * traced, idle steals at least two: the periodic balancer (in CPU 0's
 * softirq) took the third within 10 ms of the unpinning in 2 of 5 debug
 * boots (both FreeBSD's mechanisms; with the trace cleared, which
 * it was not before, those runs counted two steals).
 */
TEST_F(ule, idle_cpus_steal_from_a_busy_one)
{
	int pid, steals, moves, want = online_cpus() - 1;

	if (setup_skipped(_metadata))
		return;
	if (want > 3)
		want = 3;
	ASSERT_EQ(0, trace_restart());
	ASSERT_EQ(0, trace_event("ule/ule_transfer", 1));
	pid = track(&self->kids, load(NULL, 0, 0, 0, "spinners", "4", "8", NULL));
	ASSERT_LT(0, pid);
	sleep_ms(1000);
	kill(pid, SIGUSR1);
	sleep_ms(2000);
	trace_event("ule/ule_transfer", 0);
	steals = trace_count("ule_transfer: ", " src=0 ", " by=steal");
	moves = trace_count("ule_transfer: ", " src=0 ", NULL);
	metric("idle_cpus_steal_from_a_busy_one", "steals", steals, "");
	TH_LOG("%d steals and %d moves in all from CPU 0 within 2 s of unpinning", steals, moves);
	if (moves < want || steals < want - 1) {
		char line[1024];
		FILE *f = fopen(TRACE_DIR "trace", "r");

		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "ule_transfer: "))
				TH_LOG("%s", line);
		if (f)
			fclose(f);
	}
	EXPECT_LE(want, moves);
	EXPECT_LE(want - 1, steals);
}

/*
 * Flip task @pid between batch and normal from CPU 0, at the pace of the
 * Python loop the shell suite used: a C loop flips about ten times as
 * often, and under host load its rounds gave a p90 of 45.8 ms twice
 * (docs/guest-tests.rst), which is still to be explained.
 */
static const char flip_py[] =
	"import os, sys\n"
	"pid, zero = int(sys.argv[1]), os.sched_param(0)\n"
	"while True:\n"
	"    os.sched_setscheduler(pid, os.SCHED_BATCH, zero)\n"
	"    os.sched_setscheduler(pid, os.SCHED_OTHER, zero)\n";

static int flipper(int pid)
{
	char arg[16];
	int child;

	snprintf(arg, sizeof(arg), "%d", pid);
	child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		bind_cpu(0, 0);
		execlp("python3", "python3", "-c", flip_py, arg, (char *)NULL);
		_exit(127);
	}
	return child;
}

/* SIGUSR1 to the sleeper; wait up to 2 s for the line it prints. */
static void report(int sleeper, const char *file, int *reports)
{
	long end = now_ms() + 2000;

	kill(sleeper, SIGUSR1);
	(*reports)++;
	while (count_lines(file, "late_med_us") < *reports && now_ms() < end)
		sleep_ms(POLL_MS);
}

/* The last "late_med_us M late_p90_us P" line of @file. */
static void lateness(const char *file, long *med, long *p90)
{
	char line[256];
	FILE *f = fopen(file, "r");

	*med = *p90 = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "late_med_us %ld late_p90_us %ld", med, p90) == 2)
			continue;
	if (f)
		fclose(f);
}

/*
 * The share (%) of the sleeper's runs on CPU 1 after which the spinner
 * that ran before it runs again, from 2 s of sched_switch; -1 if none.
 */
static int same_after(const char *strict, int a, int b, int sleeper, int *runs)
{
	char line[1024], path[PATH_LEN];
	int before = 0, again = 0;
	FILE *f;

	*runs = 0;
	if (write_text(STRICT_KNOB, strict))
		return -1;
	sleep_ms(500);
	trace_restart();
	trace_event("sched/sched_switch", 1);
	sleep_ms(2000);
	trace_event("sched/sched_switch", 0);
	snprintf(path, sizeof(path), TRACE_DIR "per_cpu/cpu1/trace");
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		bool prev_a = trace_has(line, "prev_pid", a);
		bool prev_b = trace_has(line, "prev_pid", b);
		bool next_a = trace_has(line, "next_pid", a);
		bool next_b = trace_has(line, "next_pid", b);

		if (!strstr(line, "sched_switch:"))
			continue;
		if (trace_has(line, "next_pid", sleeper) && (prev_a || prev_b)) {
			before = prev_a ? a : b;
		} else if (trace_has(line, "prev_pid", sleeper) && before && (next_a || next_b)) {
			(*runs)++;
			again += (next_a ? a : b) == before;
			before = 0;
		}
	}
	if (f)
		fclose(f);
	return *runs ? 100 * again / *runs : -1;
}

/*
 * Wakeup granularity: a sleeper (1 ms run, 9 ms sleep) turns interactive
 * alone on CPU 2, then joins a batch spinner on CPU 1. At 0 its wakeups
 * preempt the spinner at once; at 20000 each waits until the spinner has
 * run 20 ms since it got the CPU, and then the tick preempts it; so also
 * while the spinner's policy flips between batch and normal (a flip that
 * restarted the 20 ms or dropped the waiting preemption left one wakeup
 * in ten waiting for the end of the 94 ms slice); under
 * sched_ule_strict=1, FreeBSD's rules, there is no granularity. Then a
 * second spinner joins: by default the one a wakeup preempted goes back
 * to the head of its list and runs again after the sleeper; under strict
 * a local wakeup is TDF_NEEDRESCHED, not SW_PREEMPT, so it goes back to a
 * calendar slot by its priority, and the other one runs when its slot
 * comes first.
 */
TEST_F_TIMEOUT(ule, wakeup_granularity_and_requeue, 120)
{
	static const struct {
		const char *label, *gran, *strict;
		bool flips;
		long lo, hi;
	} rounds[] = {
		{ "0", "0", "0", false, 0, 3000 },
		{ "20000", "20000", "0", false, 6000, 19000 },
		{ "20000 (policy flipping)", "20000", "0", true, 6000, 19000 },
		{ "20000 (sched_ule_strict=1)", "20000", "1", false, 0, 3000 },
	};
	const char *file = out_file(self->out, "lateness.txt");
	int spinner, spinner2, sleeper, reports = 0, flip, same0, same1, runs0, runs1;
	long start = now_ms(), waited, med, p90;
	char metric_name[64];
	unsigned int i;
	struct ule u;

	if (setup_skipped(_metadata))
		return;
	spinner = track(&self->kids, load(NULL, 1, 1, 0, "spinner", "180", NULL));
	sleeper = track(&self->kids, load(file, 2, 2, 0, "sleeper", "1000", "9000", "180", NULL));
	ASSERT_LT(0, spinner);
	ASSERT_LT(0, sleeper);
	if (!wait_ule(spinner, "timeshare", PRI_BATCH_MIN, PRI_BATCH_MAX, start, 5000, &u,
		      &waited))
		TH_LOG("spinner not batch: %s", ule_state(&u));
	if (!wait_ule(sleeper, "realtime", PRI_INTERACT_MIN, PRI_INTERACT_MAX, start, 10000, &u,
		      &waited))
		TH_LOG("sleeper not interactive: %s", ule_state(&u));
	ASSERT_EQ(0, bind_cpu(sleeper, 1));
	for (i = 0; i < ARRAY_SIZE(rounds); i++) {
		flip = 0;
		ASSERT_EQ(0, write_text(GRAN_KNOB, rounds[i].gran));
		ASSERT_EQ(0, write_text(STRICT_KNOB, rounds[i].strict));
		if (rounds[i].flips)
			flip = flipper(spinner);
		sleep_ms(500);
		report(sleeper, file, &reports);
		sleep_ms(4000);
		report(sleeper, file, &reports);
		stop(flip);
		lateness(file, &med, &p90);
		snprintf(metric_name, sizeof(metric_name), "late_med_us %s", rounds[i].label);
		metric("wakeup_granularity_and_requeue", metric_name, med, "us");
		TH_LOG("wakeup_gran_us=%s: lateness median %ld us, p90 %ld us", rounds[i].label,
		       med, p90);
		EXPECT_TRUE(med >= rounds[i].lo && med <= rounds[i].hi)
			TH_LOG("want a median of %ld-%ld us", rounds[i].lo, rounds[i].hi);
		if (rounds[i].flips)
			EXPECT_TRUE(p90 >= 0 && p90 <= 40000) TH_LOG("want a p90 <= 40000 us");
	}
	ASSERT_EQ(0, write_text(STRICT_KNOB, "0"));
	ASSERT_EQ(0, write_text(GRAN_KNOB, saved(self->knobs, "wakeup_gran_us")));
	spinner2 = track(&self->kids, load(NULL, 1, 1, 0, "spinner", "180", NULL));
	ASSERT_LT(0, spinner2);
	if (!wait_ule(spinner2, "timeshare", PRI_BATCH_MIN, PRI_BATCH_MAX, now_ms(), 5000, &u,
		      &waited))
		TH_LOG("second spinner not batch: %s", ule_state(&u));
	same0 = same_after("0", spinner, spinner2, sleeper, &runs0);
	same1 = same_after("1", spinner, spinner2, sleeper, &runs1);
	write_text(STRICT_KNOB, "0");
	metric("wakeup_granularity_and_requeue", "same_after_default_pct", same0, "%");
	metric("wakeup_granularity_and_requeue", "same_after_strict_pct", same1, "%");
	TH_LOG("the preempted spinner ran again after %d %% of %d sleeper runs",
	       same0, runs0);
	TH_LOG("under sched_ule_strict=1 after %d %% of %d", same1, runs1);
	EXPECT_LE(70, same0);
	EXPECT_LE(0, same1);
	EXPECT_LE(same1, same0 - 8);
}

/*
 * When a wakeup from a system call switches: a batch sender writes 256
 * KiB at a time to a unix socket whose reader shares CPU 1, interactive
 * or SCHED_BATCH with a better priority than the sender's. As on FreeBSD
 * (TDF_NEEDRESCHED, taken at userret) the reader gets the CPU on the
 * sender's way back to user space: under sched_ule_strict through the
 * deferral, by default because the sender preempted in the kernel runs
 * boosted until then.
 */
TEST_F_TIMEOUT(ule, reader_woken_by_write_runs_on_the_return, 60)
{
	static const char * const stricts[] = { "0", "1" };
	static const char * const readers[] = { "interactive", "batch" };
	const char *file = out_file(self->out, "burst.txt");
	unsigned int s, r;

	if (setup_skipped(_metadata))
		return;
	for (s = 0; s < ARRAY_SIZE(stricts); s++) {
		ASSERT_EQ(0, write_text(STRICT_KNOB, stricts[s]));
		for (r = 0; r < ARRAY_SIZE(readers); r++) {
			long bursts = 0, inside, back = 0, later;
			char rest[256] = "";
			int pid, status;

			pid = load(file, 1, 1, 0, "burst", "256", "5", r ? "batch" : NULL, NULL);
			ASSERT_LT(0, pid);
			waitpid(pid, &status, 0);
			if (wait_line(file, "bursts", 0, rest, sizeof(rest)) &&
			    sscanf(rest, "%ld inside %ld return %ld later %ld",
				   &bursts, &inside, &back, &later) != 4)
				bursts = 0;
			TH_LOG("sched_ule_strict=%s, %s reader: bursts %s", stricts[s], readers[r],
			       rest);
			EXPECT_LE(20, bursts);
			EXPECT_GE(5 * back, 4 * bursts);
		}
	}
}

/*
 * Priority lending (FreeBSD's sched_lend_prio(); here rt_mutex, PI
 * futexes): a batch owner spins holding the mutex; once the waiter is
 * interactive it blocks on it, and the owner runs at the waiter's
 * priority until it unlocks 5 s later. Both on CPU 1: with the owner on
 * another CPU the waiter would spin in rt_mutex's adaptive wait and turn
 * batch instead of blocking.
 */
TEST_F_TIMEOUT(ule, pi_owner_runs_at_its_waiters_priority, 60)
{
	const char *file = out_file(self->out, "pi.txt");
	char owner[NAME_LEN] = "", waiter[NAME_LEN] = "", unlocked[NAME_LEN] = "";
	struct ule uo, uw;
	int pi;

	if (setup_skipped(_metadata))
		return;
	pi = track(&self->kids, load(file, 1, 1, 0, "pi", NULL));
	ASSERT_LT(0, pi);
	ASSERT_TRUE(wait_line(file, "owner", 5000, owner, sizeof(owner)));
	ASSERT_TRUE(wait_line(file, "waiting", 30000, waiter, sizeof(waiter)));
	sleep_ms(500);
	ASSERT_EQ(0, ule_read(pi, atoi(waiter), &uw));
	ASSERT_EQ(0, ule_read(pi, atoi(owner), &uo));
	TH_LOG("owner: %s; waiter prio %ld", ule_state(&uo), uw.prio);
	EXPECT_TRUE(in_range(uw.prio, PRI_INTERACT_MIN, PRI_INTERACT_MAX));
	EXPECT_EQ(uw.prio, uo.prio);
	EXPECT_TRUE(wait_line(file, "unlocked", 5000, unlocked, sizeof(unlocked)));
	EXPECT_STREQ(owner, unlocked);
	sleep_ms(500);
	ASSERT_EQ(0, ule_read(pi, atoi(owner), &uo));
	EXPECT_TRUE(in_range(uo.prio, PRI_BATCH_MIN, PRI_BATCH_MAX)) TH_LOG("%s", ule_state(&uo));
}

#define STAT_PPID		4

/* The pid of a child of @parent whose comm is @comm; 0 if none (pgrep -P). */
static int child_named(int parent, const char *comm)
{
	char path[PATH_LEN], name[NAME_LEN];
	struct dirent *pe;
	DIR *proc = opendir("/proc");
	int pid, found = 0;

	while (proc && !found && (pe = readdir(proc))) {
		pid = atoi(pe->d_name);
		if (pid <= 0 || task_stat_num(pid, STAT_PPID) != parent)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if (!read_line(path, name, sizeof(name)) && !strcmp(name, comm))
			found = pid;
	}
	if (proc)
		closedir(proc);
	return found;
}

/*
 * Exit and fork (FreeBSD's sched_exit and sched_fork): a parent sleeps 4
 * s (interactive), waits for 8 threads spinning 1 s, then forks a sleep.
 * The dead child's run time, 8 s against the parent's 1 s wait, raises
 * the parent's score, and the sleep starts from the parent's history:
 * batch, where a fresh history would be interactive. Again with threads
 * that outlive their group leader: FreeBSD gives an exiting thread's time
 * to the oldest one left and the last one's to the parent.
 */
#define CREATOR_SPIN_MS		1000
#define EXIT_WAIT_POLLS		200	/* 20 s */

/*
 * Start "sh -c @script" from a creator that has spun 1 s, so that the
 * history the shell inherits (cut to 0.5 s at fork) is mostly run time,
 * as a shell started by a busy script's has. Forked from this mostly
 * sleeping program instead, the shell sat at score 2 after its 4 s sleep
 * (10-13 from the shell suite this replaces), and its next child's score
 * came out at 27 and 36, either side of the batch line. Returns the
 * shell's pid; the creator is tracked too.
 */
static int busy_creator_forks(const char *script, struct kids *kids)
{
	int pipefd[2], creator, shell = -1;

	if (pipe(pipefd))
		return -1;
	creator = fork();
	if (creator == 0) {
		long end = now_ms() + CREATOR_SPIN_MS;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (now_ms() < end)
			;
		shell = fork();
		if (shell == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			execl("/bin/sh", "sh", "-c", script, (char *)NULL);
			_exit(127);
		}
		if (write(pipefd[1], &shell, sizeof(shell)) != sizeof(shell))
			_exit(1);
		waitpid(shell, NULL, 0);
		_exit(0);
	}
	close(pipefd[1]);
	if (creator > 0 && read(pipefd[0], &shell, sizeof(shell)) != sizeof(shell))
		shell = -1;
	close(pipefd[0]);
	track(kids, creator);
	return track(kids, shell);
}

static void exit_history(struct __test_metadata *_metadata, struct kids *kids,
			 const char *args, const char *what)
{
	char script[PATH_LEN * 2];
	long score0, interact = knob_num(INTERACT_KNOB);
	int parent, child = 0, i;
	struct ule u;

	snprintf(script, sizeof(script), "sleep 4; %s %s >/dev/null; sleep 5; :", uleload_path(),
		 args);
	parent = busy_creator_forks(script, kids);
	ASSERT_LT(0, parent);
	/*
	 * Its 4 s sleep is credited when it wakes: read it once its
	 * workload child runs uleload, not at a fixed time (on a loaded
	 * host the shell's exec and sleep ran past 4.5 s, and the read
	 * found neither the sleep nor the workload yet).
	 */
	for (i = 0; i < EXIT_WAIT_POLLS && !child_named(parent, "uleload"); i++)
		sleep_ms(POLL_MS);
	ASSERT_EQ(0, ule_read(parent, 0, &u));
	score0 = u.score;
	TH_LOG("%s: the parent while its child spins: %s", what, ule_state(&u));
	EXPECT_TRUE(in_range(u.score, 0, interact))
		TH_LOG("%s: the parent is not interactive", what);
	/* The sleep that follows the workload: the first one is over by now. */
	for (i = 0; i < EXIT_WAIT_POLLS && !child; i++) {
		sleep_ms(POLL_MS);
		child = child_named(parent, "sleep");
	}
	ASSERT_EQ(0, ule_read(parent, 0, &u));
	TH_LOG("%s: the parent after: %s", what, ule_state(&u));
	/*
	 * Only sleeping itself, the parent could only have become more
	 * interactive: the score, not the run time, shows what it was given.
	 */
	EXPECT_LE(score0 + 10, u.score) TH_LOG("%s: a dead child's run time goes to its parent",
					       what);
	ASSERT_LT(0, child);
	ASSERT_EQ(0, ule_read(child, 0, &u));
	TH_LOG("%s: the next child: %s", what, ule_state(&u));
	EXPECT_LT(interact, u.score) TH_LOG("%s: the next child starts batch", what);
	kill(child, SIGKILL);
	stop_all(kids);
}

TEST_F_TIMEOUT(ule, dead_child_charges_its_parent, 60)
{
	if (setup_skipped(_metadata))
		return;
	exit_history(_metadata, &self->kids, "spinners 8 1", "threads joined");
}

TEST_F_TIMEOUT(ule, dead_orphan_threads_charge_the_parent, 60)
{
	if (setup_skipped(_metadata))
		return;
	exit_history(_metadata, &self->kids, "orphans 8 1", "threads outliving their leader");
}

/*
 * Run "uleload A1 A2 [A3]" to its end, its output in @file of folder
 * @dir, and read the rest of its line that starts with @word.
 */
static bool load_line(const char *dir, const char *file, const char *word, char *rest,
		      size_t len, const char *a1, const char *a2, const char *a3)
{
	const char *path = out_file(dir, file);
	int pid = load(path, -1, 0, 0, a1, a2, a3, NULL);

	if (pid < 0)
		return false;
	waitpid(pid, NULL, 0);
	return wait_line(path, word, 0, rest, len);
}

/*
 * A child forked by a second thread while the main thread sleeps:
 * FreeBSD charges the parent process's first thread
 * (FIRST_THREAD_IN_PROC), not the thread that forked.
 */
TEST_F_TIMEOUT(ule, fork_from_a_thread_charges_the_main_thread, 30)
{
	long m0 = UNSET, m1 = UNSET, f0 = UNSET, f1 = UNSET;
	char rest[256] = "";
	int n;

	if (setup_skipped(_metadata))
		return;
	ASSERT_TRUE(load_line(self->out, "forker.txt", "scores", rest, sizeof(rest), "forker", "1",
			      NULL));
	TH_LOG("scores %s", rest);
	n = sscanf(rest, "main %ld %ld forker %ld %ld", &m0, &m1, &f0, &f1);
	ASSERT_EQ(4, n);
	EXPECT_LE(m0 + 10, m1);
	EXPECT_LE(f1, f0);
}

/*
 * Threads are not processes: FreeBSD's thread creation is
 * sched_fork_thread() alone, the creator's whole history and no charge
 * (a process fork charges the parent 7.87 ms and cuts the child's to
 * 0.5 s). The creator's history grows by the CPU time its 32
 * pthread_create() calls take, which a busy host stretches (the guest's
 * clock runs on while its vCPU waits); 32 charges would add 252 ms more,
 * so half of that beyond the CPU time tells them apart.
 */
TEST_F_TIMEOUT(ule, thread_creation_charges_nothing, 30)
{
	long run0 = UNSET, run1 = UNSET, slp1 = UNSET, thread_run = UNSET, thread_slp = UNSET;
	long cpu = UNSET;
	char rest[256] = "";
	int n;

	if (setup_skipped(_metadata))
		return;
	ASSERT_TRUE(load_line(self->out, "spawn.txt", "main", rest, sizeof(rest), "spawn", "32",
			      NULL));
	TH_LOG("main %s", rest);
	n = sscanf(rest, "%ld %ld %ld thread %ld %ld cpu %ld", &run0, &run1, &slp1, &thread_run,
		   &thread_slp, &cpu);
	ASSERT_EQ(6, n);
	EXPECT_LT(run1 - run0 - cpu, 32 * 7874 / 2);
	EXPECT_LT(600000, thread_slp);
	EXPECT_GE(thread_slp * 10, slp1 * 9);
}

/*
 * Renice: two spinners share CPU 2; when the first has just got the CPU,
 * another CPU renices it from 0 to 19. FreeBSD's sched_nice() only
 * updates its priority: the second, now better, waits for the end of the
 * first's slice (88-95 ms median in two runs); CFS and an immediate
 * switch give it the CPU within the reschedule IPI.
 */
TEST_F_TIMEOUT(ule, reniced_running_spinner_keeps_its_slice, 60)
{
	long trials = 0, med = -1, max_slice = knob_num(ULE_DIR "slice_us");
	char rest[256] = "";

	if (setup_skipped(_metadata))
		return;
	ASSERT_TRUE(load_line(self->out, "renice.txt", "renice", rest, sizeof(rest), "renice", "2",
			      "15"));
	TH_LOG("renice %s", rest);
	if (sscanf(rest, "trials %ld med_us %ld", &trials, &med) != 2)
		trials = 0;
	metric("reniced_running_spinner_keeps_its_slice", "median_wait_us", med, "us");
	EXPECT_LE(10, trials);
	EXPECT_TRUE(med >= max_slice / 2 && med <= 2 * max_slice)
		TH_LOG("want %ld-%ld us", max_slice / 2, 2 * max_slice);
}

/* Allow every thread of process @pid CPUs @c1 and @c2 (taskset -a). */
static void bind_threads(int pid, int c1, int c2)
{
	struct dirent *te;
	char dir[PATH_LEN];
	DIR *tasks;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	tasks = opendir(dir);
	while (tasks && (te = readdir(tasks))) {
		cpu_set_t set;

		if (atoi(te->d_name) <= 0)
			continue;
		CPU_ZERO(&set);
		CPU_SET(c1, &set);
		CPU_SET(c2, &set);
		sched_setaffinity(atoi(te->d_name), sizeof(set), &set);
	}
	if (tasks)
		closedir(tasks);
}

/*
 * Idle stealing past a CPU with nothing to give: in CPU 0's smallest
 * domain (0-3) CPU 1 runs 3 spinners allowed on 1 and 3, CPU 2 two
 * allowed on 0 and 2, CPU 3 one of its own, CPU 0 one of its own. The
 * balancer is held off, so when CPU 0's spinner ends only its idle steal
 * can take CPU 2's waiting spinner; the search first finds CPU 1, whose
 * tasks may not come (FreeBSD's tdq_idled() leaves it out and searches
 * the level again).
 */
TEST_F_TIMEOUT(ule, idle_steal_skips_a_cpu_with_nothing_to_give, 30)
{
	int a, b, c, d;

	if (setup_skipped(_metadata))
		return;
	ASSERT_EQ(0, write_text(ULE_DIR "balance_interval_ms", "60000"));
	sleep_ms(2000);
	b = track(&self->kids, load(NULL, 1, 1, 0, "spinners", "3", "60", NULL));
	c = track(&self->kids, load(NULL, 2, 2, 0, "spinners", "2", "60", NULL));
	d = track(&self->kids, load(NULL, 3, 3, 0, "spinner", "60", NULL));
	a = track(&self->kids, load(NULL, 0, 0, 0, "spinner", "60", NULL));
	ASSERT_LT(0, a);
	ASSERT_LT(0, d);
	sleep_ms(1000);
	bind_threads(b, 1, 3);
	bind_threads(c, 0, 2);
	sleep_ms(1000);
	ASSERT_EQ(0, trace_restart());
	ASSERT_EQ(0, trace_event("ule/ule_transfer", 1));
	stop(a);
	sleep_ms(1000);
	trace_event("ule/ule_transfer", 0);
	EXPECT_LE(1, trace_count("ule_transfer: ", " src=2 dst=0 ", " by=steal"));
}

/*
 * The idle steal looks at sysctl_sched_nr_migrate tasks of a queue at
 * most (ule.rst): a SCHED_IDLE spinner that may run on CPU 1, queued on
 * CPU 0 behind 40 spinners bound there, is not stolen when CPU 1 goes
 * idle at the default 32; at 64 it is, as FreeBSD's whole-queue walk
 * would steal it at once.
 */
TEST_F_TIMEOUT(ule, idle_steal_looks_at_nr_migrate_tasks, 60)
{
	if (setup_skipped(_metadata))
		return;
	ASSERT_EQ(0, bind_cpu(0, ULE_CPUS - 1));
	walk_cap_expect(_metadata, "idle_steal_looks_at_nr_migrate_tasks", 0, 1);
}

TEST_HARNESS_MAIN
