// SPDX-License-Identifier: GPL-2.0
/*
 * Batch starvation ("The Battle of the Schedulers: FreeBSD ULE vs. Linux
 * CFS", ATC 2018, section 5.1) on kselftest_harness.h, for a 2x4 guest
 * under any class (the host runs it under sched=ule and sched=cfs and
 * compares the two):
 *
 * - on CPU 1 alone, a CPU-bound spinner shares the CPU with 80 threads
 *   that each run 1 ms and sleep 4 ms. Each sleeps four times as long as
 *   it runs, so ULE scores it interactive however long it waits, and
 *   together they want 16 CPUs' worth: ULE starves the spinner, a fair
 *   class gives it about 1/81;
 * - two starvations ULE must bound: a looping kernel thread (ksmd) beside
 *   the spinner, and a SCHED_IDLE task preempted in the kernel holding
 *   its mmap_lock while such a pool keeps CPU 1 busy.
 *
 * The stall watchdog runs at 2 s throughout: each starvation is behind
 * better work by ULE's rules and must not end the run by a fallback.
 *
 * Usage: [ULELOAD=PATH] [SCHED_TEST_METRICS=FILE] ule_starvation [harness options]
 */
#include "sched_test.h"

#define CPU			1	/* the CPU under test; this program keeps off it */
#define READER_CPU		2
#define THREADS			80
#define RUN_US			"1000"
#define SLEEP_US		"4000"
#define POOL_S			12
#define POOL_START_MS		2000	/* uleload starts the pool after the tids */
#define WINDOW_MS		3000
#define WATCHDOG_KNOB		SYSCTL_DIR "sched_watchdog_ms"
/* Far shorter than the POOL_S seconds the spinner starves under ULE. */
#define WATCHDOG_MS		"2000"
#define WATCHDOG_LINE		"sched: watchdog:"
#define PPM			1000000LL
/*
 * A fair class owes the spinner about 1/81 of the CPU (12345 ppm): the
 * threads wait ~80 ms for each 1 ms burst, so nearly all 81 tasks are
 * runnable all the time. ULE runs its timeshare queue only when no
 * interactive thread is runnable, which never happens here. Half the fair
 * share separates the two with room for tick-sized noise and CFS's wakeup
 * credit for sleepers; a bound like 5 % would pass CFS's 1.2 % as
 * starvation too.
 */
#define LIMIT_PPM		(PPM / (THREADS + 1) / 2)
#define ALONE_MIN_PPM		(PPM / 2)
#define POOL_BUSY_PPM		(PPM * 8 / 10)
#define SHARE_MIN_PPM		(PPM / 5)	/* ksmd beside the spinner: each */
#define LOCK_WAIT_MAX_US	500000
#define KSM_DIR			"/sys/kernel/mm/ksm/"
#define USER_HZ			100
#define STAT_STIME		15
/* FreeBSD's timeshare band as ULE's lines give it. */
#define PRI_BATCH_MIN		152
#define PRI_BATCH_MAX		223
#define BATCH_WAIT_MS		3000

FIXTURE(starve) {
	struct kids kids;
	char cls[NAME_LEN], watchdog[NAME_LEN], out[PATH_LEN];
	int watchdog_lines;
};

FIXTURE_SETUP(starve)
{
	ASSERT_EQ(0, read_line(CLASS_SYSCTL, self->cls, sizeof(self->cls)));
	if (online_cpus() <= READER_CPU)
		SKIP(return, "%d CPUs online, want more than %d", online_cpus(), READER_CPU);
	if (access(uleload_path(), X_OK))
		SKIP(return, "no uleload at %.200s (ULELOAD=)", uleload_path());
	ASSERT_EQ(0, read_line(WATCHDOG_KNOB, self->watchdog, sizeof(self->watchdog)));
	ASSERT_EQ(0, write_text(WATCHDOG_KNOB, WATCHDOG_MS));
	self->watchdog_lines = log_count(WATCHDOG_LINE);
	ASSERT_LE(0, self->watchdog_lines);
	snprintf(self->out, sizeof(self->out), "/tmp/ule_starvation.%d", (int)getpid());
	ASSERT_EQ(0, mkdir(self->out, 0755));
	/* This task and its helpers stay on CPU 0, off the CPU under test. */
	ASSERT_EQ(0, bind_cpu(0, 0));
}

FIXTURE_TEARDOWN(starve)
{
	stop_all(&self->kids);
	write_text(KSM_DIR "run", "0");
	if (self->watchdog[0])
		write_text(WATCHDOG_KNOB, self->watchdog);
}

/* A task's CPU share over a window: mark it, then measure it. */
struct share {
	int pid;
	long long run, wait, ms;
	long long ppm, waited_ms, window_ms;
};

static void mark(struct share *s, int pid)
{
	s->pid = pid;
	s->wait = 0;
	if (task_schedstat(pid, 0, &s->run, &s->wait))
		s->run = 0;
	s->ms = now_ms();
}

static void measure(struct share *s)
{
	long long run = 0, wait = 0;

	task_schedstat(s->pid, 0, &run, &wait);
	s->window_ms = now_ms() - s->ms;
	if (s->window_ms <= 0)
		s->window_ms = 1;
	s->ppm = (run - s->run) / s->window_ms;
	s->waited_ms = (wait - s->wait) / 1000000;
}

/* utime + stime of the whole process @pid, in clock ticks. */
static long long ticks(int pid)
{
	return task_stat_num(pid, STAT_UTIME) + task_stat_num(pid, STAT_STIME);
}

/* uleload spinner on CPU 1 that runs for @seconds, once it has exec'd. */
static int start_spinner(struct kids *kids, const char *seconds)
{
	int pid = track(kids, load(NULL, CPU, CPU, 0, "spinner", seconds, NULL));
	long end = now_ms() + BATCH_WAIT_MS;

	while (pid > 0 && !runs_uleload(pid) && now_ms() < end)
		sleep_ms(POLL_MS);
	return pid;
}

/* The uleload pool on CPU 1 for @seconds; its tids in @tids. */
static int start_pool(struct kids *kids, const char *file, const char *seconds,
		      int *tids, int max)
{
	int pid = track(kids, load(file, CPU, CPU, 0, "pool", "80", RUN_US, SLEEP_US,
				   seconds, NULL));

	return pid < 0 || wait_tids(file, 10000, tids, max) ? -1 : pid;
}

/* What ULE's sched file says of a task: its queue, else its class. */
static void where(int pid, int tid, bool ule, char *out, size_t len)
{
	char path[PATH_LEN];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/sched", pid, tid);
	if (sched_field(path, ule ? "ule.queue" : "class", out, len))
		snprintf(out, len, "gone");
}

/* Neither fallback nor log line: every starvation here is by the class's rules. */
static void watchdog_quiet(struct __test_metadata *_metadata, const char *was, int lines)
{
	char cls[NAME_LEN];

	EXPECT_EQ(lines, log_count(WATCHDOG_LINE)) {
		TH_LOG("a %s ms stall watchdog spoke during starvation the class causes by design",
		       WATCHDOG_MS);
	}
	ASSERT_EQ(0, read_line(CLASS_SYSCTL, cls, sizeof(cls)));
	EXPECT_STREQ(was, cls);
}

static bool is_ule(const char *cls)
{
	return !strcmp(cls, "ule");
}

#define PCT(ppm)		((double)(ppm) / 10000)
#define POOL_TEST		"spinner_starves_behind_an_interactive_pool"

/*
 * The spinner alone gets most of CPU 1; beside the pool ULE starves it
 * (under LIMIT_PPM) where a fair class shares (over it); the pool's
 * threads that ran did so from ULE's realtime queue (a fair class: all
 * of them, on it); the pool keeps CPU 1 busy; and once the pool is gone
 * the spinner runs again.
 */
TEST_F_TIMEOUT(starve, spinner_starves_behind_an_interactive_pool, 120)
{
	const char *pool_out = out_file(self->out, "pool.out");
	long long run0[THREADS], run1[THREADS], wait, pool_ticks;
	int tids[THREADS], ran = 0, ran_there = 0, spin, pool, i;
	struct share alone, beside, after;
	char val[NAME_LEN], rest[128];
	long long pool_ppm;
	bool running;

	if (setup_skipped(_metadata))
		return;
	spin = start_spinner(&self->kids, "40");
	ASSERT_LT(0, spin);
	if (is_ule(self->cls)) {
		long start = now_ms(), prio = -1;

		/* FreeBSD scores a task by its run and sleep history: batch soon. */
		while (now_ms() - start < BATCH_WAIT_MS) {
			prio = task_sched_num(spin, "ule.prio");
			if (prio >= PRI_BATCH_MIN && prio <= PRI_BATCH_MAX)
				break;
			sleep_ms(POLL_MS);
		}
		ASSERT_TRUE(prio >= PRI_BATCH_MIN && prio <= PRI_BATCH_MAX) {
			TH_LOG("the spinner is not batch within %d ms: ule.prio %ld",
			       BATCH_WAIT_MS, prio);
		}
		TH_LOG("spinner batch after %ld ms, ule.prio %ld", now_ms() - start, prio);
	} else {
		char path[PATH_LEN];

		sleep_ms(1000);
		snprintf(path, sizeof(path), "/proc/%d/sched", spin);
		ASSERT_EQ(0, sched_field(path, "class", val, sizeof(val)));
		ASSERT_STREQ(self->cls, val);
	}

	mark(&alone, spin);
	sleep_ms(1000);
	measure(&alone);
	TH_LOG("spinner alone: %.2f %% of CPU %d (waited %lld ms in %lld ms)",
	       PCT(alone.ppm), CPU, alone.waited_ms, alone.window_ms);
	EXPECT_LT(ALONE_MIN_PPM, alone.ppm);

	pool = start_pool(&self->kids, pool_out, "12", tids, THREADS);
	ASSERT_LT(0, pool);
	/* The window starts 1 s into the pool and ends well before it stops. */
	sleep_ms(POOL_START_MS + 1000);
	for (i = 0; i < THREADS; i++)
		if (task_schedstat(pool, tids[i], &run0[i], &wait))
			run0[i] = -1;
	mark(&beside, spin);
	pool_ticks = ticks(pool);
	sleep_ms(WINDOW_MS);
	measure(&beside);
	pool_ticks = ticks(pool) - pool_ticks;
	running = !kill(pool, 0) && !wait_line(pool_out, "loops", 0, rest, sizeof(rest));
	for (i = 0; i < THREADS; i++) {
		if (run0[i] < 0 || task_schedstat(pool, tids[i], &run1[i], &wait))
			continue;
		if (run1[i] <= run0[i])
			continue;
		ran++;
		where(pool, tids[i], is_ule(self->cls), val, sizeof(val));
		ran_there += !strcmp(val, is_ule(self->cls) ? "realtime" : self->cls);
	}
	pool_ppm = pool_ticks * PPM / (beside.window_ms * USER_HZ / 1000);
	TH_LOG("beside the pool: spinner %.2f %%, pool %.2f %% of CPU %d; %d threads ran, %d %s",
	       PCT(beside.ppm), PCT(pool_ppm), CPU, ran, ran_there,
	       is_ule(self->cls) ? "from the realtime queue" : "on the class");
	ASSERT_TRUE(running) TH_LOG("the pool ended before the window did");
	EXPECT_TRUE(is_ule(self->cls) ? beside.ppm < LIMIT_PPM : beside.ppm > LIMIT_PPM) {
		TH_LOG("want %s %.2f %%", is_ule(self->cls) ? "<" : ">", PCT(LIMIT_PPM));
	}
	/*
	 * Under ULE the threads that keep the CPU must be interactive, or the
	 * test shows nothing; pool threads that start batch (their history
	 * is this program's) starve with the spinner. A fair class runs all.
	 */
	if (is_ule(self->cls)) {
		EXPECT_LT(0, ran);
		EXPECT_EQ(ran, ran_there);
	} else {
		EXPECT_EQ(THREADS, ran);
		EXPECT_EQ(THREADS, ran_there);
	}
	EXPECT_LT(POOL_BUSY_PPM, pool_ppm);
	waitpid(pool, NULL, 0);
	if (wait_line(pool_out, "loops", 0, rest, sizeof(rest)))
		TH_LOG("pool: loops %s", rest);

	mark(&after, spin);
	sleep_ms(1000);
	measure(&after);
	TH_LOG("spinner once the pool is gone: %.2f %%", PCT(after.ppm));
	EXPECT_LT(ALONE_MIN_PPM, after.ppm);

	metric(POOL_TEST, "alone_ppm", alone.ppm, "ppm");
	metric(POOL_TEST, "share_ppm", beside.ppm, "ppm");
	metric(POOL_TEST, "pool_ppm", pool_ppm, "ppm");
	metric(POOL_TEST, "after_ppm", after.ppm, "ppm");
	metric(POOL_TEST, "limit_ppm", LIMIT_PPM, "ppm");
	metric(POOL_TEST, "ran", ran, "threads");
	metric(POOL_TEST, "ran_there", ran_there, "threads");
	watchdog_quiet(_metadata, self->cls, self->watchdog_lines);
}

/* The pid of the task named @comm; -1 if none. */
static int pid_of(const char *comm)
{
	char path[PATH_LEN], name[NAME_LEN];
	struct dirent *d;
	DIR *proc = opendir("/proc");
	int pid = -1;

	while (proc && pid < 0 && (d = readdir(proc))) {
		if (!isdigit(d->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (!read_line(path, name, sizeof(name)) && !strcmp(name, comm))
			pid = atoi(d->d_name);
	}
	if (proc)
		closedir(proc);
	return pid;
}

/*
 * Starvation ULE's design does not have, 1: a kernel thread that loops.
 * ksmd with no sleep between its passes over 16 MiB of mergeable pages,
 * bound beside the spinner: ULE gives kernel threads the kernel band, but
 * one that runs a whole slice without sleeping drops to what its history
 * gives a user task (ule_kthread_prio()), so the two share CPU 1. ksmd is
 * nice 5; CFS gives the spinner about 3/4.
 */
TEST_F_TIMEOUT(starve, looping_kernel_thread_shares_the_cpu, 60)
{
	const char *merge_out = out_file(self->out, "merge.out");
	struct share spin_share, ksmd_share;
	int spin, ksmd, merge;
	char rest[64];

	if (setup_skipped(_metadata))
		return;
	if (access(KSM_DIR "run", W_OK))
		SKIP(return, "no KSM (CONFIG_KSM)");
	ksmd = pid_of("ksmd");
	ASSERT_LT(0, ksmd);
	spin = start_spinner(&self->kids, "30");
	ASSERT_LT(0, spin);
	merge = track(&self->kids, load(merge_out, -1, -1, 0, "merge", "16", "30", NULL));
	ASSERT_LT(0, merge);
	ASSERT_TRUE(wait_line(merge_out, "mergeable", 10000, rest, sizeof(rest)));
	ASSERT_EQ(0, write_text(KSM_DIR "sleep_millisecs", "0"));
	ASSERT_EQ(0, write_text(KSM_DIR "pages_to_scan", "4096"));
	ASSERT_EQ(0, bind_cpu(ksmd, CPU));
	ASSERT_EQ(0, write_text(KSM_DIR "run", "1"));
	sleep_ms(1000);
	mark(&ksmd_share, ksmd);
	mark(&spin_share, spin);
	sleep_ms(2000);
	measure(&spin_share);
	measure(&ksmd_share);
	write_text(KSM_DIR "run", "0");
	TH_LOG("beside a looping ksmd: spinner %.2f %%, ksmd %.2f %% of CPU %d",
	       PCT(spin_share.ppm), PCT(ksmd_share.ppm), CPU);
	if (is_ule(self->cls))
		TH_LOG("ksmd: ule.prio %.0f", task_sched_num(ksmd, "ule.prio"));
	EXPECT_LT(SHARE_MIN_PPM, spin_share.ppm);
	EXPECT_LT(SHARE_MIN_PPM, ksmd_share.ppm);
	metric("looping_kernel_thread_shares_the_cpu", "spinner_ppm", spin_share.ppm, "ppm");
	metric("looping_kernel_thread_shares_the_cpu", "ksmd_ppm", ksmd_share.ppm, "ppm");
	watchdog_quiet(_metadata, self->cls, self->watchdog_lines);
}

/* uleload mapper for @seconds on CPU 1 as SCHED_IDLE. */
static int idle_mapper(const char *seconds)
{
	int pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		struct sched_param sp = { 0 };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		if (bind_cpu(0, CPU) || sched_setscheduler(0, SCHED_IDLE, &sp))
			_exit(126);
		execl(uleload_path(), "uleload", "mapper", seconds, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * 2: a task preempted inside the kernel holding a lock. A SCHED_IDLE task
 * changes the protection of a mapping over and over (mmap_lock held for
 * writing nearly all the time) on CPU 1 until the pool's interactive
 * threads take the CPU; a reader of its /proc/PID/maps on CPU 2 needs
 * that lock. ULE would leave the SCHED_IDLE task waiting, lock held, as
 * long as the pool runs; a task preempted in the kernel finishes its
 * system call first (ULE_PRI_KERNEL_PREEMPT), so the reader's worst wait
 * is short. CFS gives a SCHED_IDLE task so little beside the pool that it
 * has the same inversion: its figure is logged, not checked.
 */
TEST_F_TIMEOUT(starve, sched_idle_lock_holder_preempted_in_the_kernel_releases, 60)
{
	const char *pool_out = out_file(self->out, "pool.out");
	const char *reads_out = out_file(self->out, "reads.out");
	long long run0, run1, wait;
	long reads = -1, worst_us = -1;
	int tids[THREADS], mapper, pool, reader, fields;
	char rest[128], pid_arg[16];
	bool running;

	if (setup_skipped(_metadata))
		return;
	mapper = track(&self->kids, idle_mapper("20"));
	ASSERT_LT(0, mapper);
	sleep_ms(500);
	pool = start_pool(&self->kids, pool_out, "6", tids, THREADS);
	ASSERT_LT(0, pool);
	sleep_ms(POOL_START_MS + 500);
	ASSERT_EQ(0, task_schedstat(mapper, 0, &run0, &wait));
	snprintf(pid_arg, sizeof(pid_arg), "%d", mapper);
	reader = load(reads_out, READER_CPU, READER_CPU, 0, "mapsread", pid_arg, "3", NULL);
	ASSERT_LT(0, reader);
	waitpid(reader, NULL, 0);
	ASSERT_EQ(0, task_schedstat(mapper, 0, &run1, &wait));
	running = !kill(pool, 0) && !wait_line(pool_out, "loops", 0, rest, sizeof(rest));
	ASSERT_TRUE(wait_line(reads_out, "reads", 0, rest, sizeof(rest)));
	fields = sscanf(rest, "%ld worst_us %ld", &reads, &worst_us);
	ASSERT_EQ(2, fields);
	TH_LOG("maps reads: %ld, worst wait %ld us; the mapper ran %lld ms meanwhile",
	       reads, worst_us, (run1 - run0) / 1000000);
	metric("sched_idle_lock_holder_preempted_in_the_kernel_releases", "worst_us", worst_us,
	       "us");
	if (is_ule(self->cls)) {
		ASSERT_TRUE(running) TH_LOG("the pool ended before the reads did");
		EXPECT_GT(LOCK_WAIT_MAX_US, worst_us);
	}
	waitpid(pool, NULL, 0);
	watchdog_quiet(_metadata, self->cls, self->watchdog_lines);
}

TEST_HARNESS_MAIN
