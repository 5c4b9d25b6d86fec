// SPDX-License-Identifier: GPL-2.0
/*
 * ULE's balancing on kselftest_harness.h, one spinner per CPU, for a 2x2
 * guest booted with sched=ule (every vCPU busy: a small guest keeps the
 * samples frequent):
 *
 * - spinners started together end up one per CPU within 10 s and stay so
 *   for the next 5 s; trading places is reported, not failed;
 * - pinned to CPU 0, then all unpinned at once (sched_ule_always_steal
 *   on), with the event recorder and ftrace's task_migrate on: one per CPU
 *   10 s later. The host checks the idle steals and the balancer's runs
 *   in the recording, which goes to $ULE_BALANCE_OUT (default /tmp/out):
 *   balance.bin (the dump), balance.stats, balance-ftrace.txt,
 *   task_migrate.format and balance.txt (pid, tids, nproc, marker_cpu);
 * - two cpuset partitions (two root domains), idle stealing off: the
 *   periodic balancer spreads the spinners of each;
 * - the balancer held off with its longest interval and set back: the
 *   shorter interval applies at once.
 *
 * Usage: [ULELOAD=PATH] [ULE_BALANCE_OUT=DIR] [SCHED_TEST_METRICS=FILE] ule_balance
 */
#include "sched_test.h"

#define ULE_DIR			SYSCTL_DIR "sched_ule_"
#define ALWAYS_STEAL		ULE_DIR "always_steal"
#define STEAL_THRESH		ULE_DIR "steal_thresh"
#define INTERVAL		ULE_DIR "balance_interval_ms"
#define INTERVAL_MAX		"60000"
#define EVENTS_DIR		"/sys/kernel/debug/sched/events/"
#define MIGRATE_EVENT		"sched_events/task_migrate"
#define OBSERVER_PRIO		10
#define SAMPLE_MS		500
#define SETTLE_MS		10000
#define STAY_MS			5000
#define UNPINNED_MS		10000
#define MAX_CPUS		MAX_SPINNERS
#define RESET_ON_FORK		0x40000000	/* SCHED_RESET_ON_FORK */

FIXTURE(balance) {
	struct kids kids;
	char always[NAME_LEN], thresh[NAME_LEN], interval[NAME_LEN];
	int partitions, recording;
};

/* Where the recording goes. */
static const char *out_path(const char *name)
{
	static char path[PATH_LEN * 2];
	const char *dir = getenv("ULE_BALANCE_OUT");

	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "/tmp/out", name);
	return path;
}

FIXTURE_SETUP(balance)
{
	struct sched_param sp = { .sched_priority = OBSERVER_PRIO };
	char cls[NAME_LEN];

	if (read_line(CLASS_SYSCTL, cls, sizeof(cls)) || strcmp(cls, "ule"))
		SKIP(return, "normal tasks are not on ule");
	if (online_cpus() > MAX_CPUS)
		SKIP(return, "%d CPUs online, at most %d", online_cpus(), MAX_CPUS);
	if (access(uleload_path(), X_OK))
		SKIP(return, "no uleload at %.200s (ULELOAD=)", uleload_path());
	ASSERT_EQ(0, read_line(ALWAYS_STEAL, self->always, NAME_LEN));
	ASSERT_EQ(0, read_line(STEAL_THRESH, self->thresh, NAME_LEN));
	ASSERT_EQ(0, read_line(INTERVAL, self->interval, NAME_LEN));
	ASSERT_EQ(0, trace_ready());
	/*
	 * The observer must not be one of the loads: as a ULE timeshare task
	 * it waits up to a whole calendar turn behind a spinner at each
	 * wakeup (one 0.5 s sample took 10 s). As a realtime task it runs at
	 * once and adds no ULE load; its children start as normal tasks.
	 */
	ASSERT_EQ(0, sched_setscheduler(0, SCHED_FIFO | RESET_ON_FORK, &sp));
}

FIXTURE_TEARDOWN(balance)
{
	stop_all(&self->kids);
	if (self->recording) {
		write_text(EVENTS_DIR "control", "release");
		trace_event(MIGRATE_EVENT, 0);
	}
	if (self->partitions)
		partitions_remove();
	if (self->always[0])
		write_text(ALWAYS_STEAL, self->always);
	if (self->thresh[0])
		write_text(STEAL_THRESH, self->thresh);
	if (self->interval[0])
		write_text(INTERVAL, self->interval);
}

/* uleload spinners @n on @cpu (negative: anywhere); their tids in @tids. */
static int start_spinners(struct kids *kids, const char *file, int cpu, int n, int *tids)
{
	char count[16];
	int pid;

	snprintf(count, sizeof(count), "%d", n);
	pid = track(kids, load(file, cpu, cpu, 0, "spinners", count, "300", NULL));
	return pid < 0 || wait_tids(file, 10000, tids, n) ? -1 : pid;
}

/* The CPU each of @n threads of @pid last ran on; how many distinct ones. */
static int cpus_of(int pid, const int *tids, int n, int *cpus, char *text, size_t len)
{
	bool seen[MAX_CPUS] = { false };
	int distinct = 0, i, at = 0;

	text[0] = '\0';
	for (i = 0; i < n; i++) {
		cpus[i] = thread_cpu(pid, tids[i]);
		if (cpus[i] >= 0 && cpus[i] < MAX_CPUS && !seen[cpus[i]]) {
			seen[cpus[i]] = true;
			distinct++;
		}
		if (at < (int)len)
			at += snprintf(text + at, len - at, "%s%d", i ? " " : "", cpus[i]);
	}
	return distinct;
}

/*
 * Started together, the spinners are one per CPU within 10 s and stay so
 * for 5 s more. A kernel thread waking next to a spinner makes that CPU's
 * load 2, and ULE's balancer (FreeBSD's sched_balance_pair) may then move
 * a spinner, which the emptied CPU steals back: spinners can trade
 * places, but each CPU keeps one.
 */
TEST_F_TIMEOUT(balance, spinners_spread_one_per_cpu_and_stay, 60)
{
	int n = online_cpus(), tids[MAX_CPUS], cpus[MAX_CPUS], where[MAX_CPUS];
	int pid, moved = 0, traded = 0, samples = 0;
	long start, settled = -1, t;
	char text[MAX_CPUS * 4];
	FILE *f;

	if (setup_skipped(_metadata))
		return;
	f = fopen(out_path("spread.txt"), "w");
	pid = start_spinners(&self->kids, "/tmp/spread.out", -1, n, tids);
	ASSERT_LT(0, pid);
	sleep_ms(SAMPLE_MS);	/* uleload starts them 0.5 s after the tids */
	start = now_ms();
	for (;;) {
		int distinct;

		sleep_ms(SAMPLE_MS);
		distinct = cpus_of(pid, tids, n, cpus, text, sizeof(text));
		t = now_ms() - start;
		samples++;
		if (f)
			fprintf(f, "%ld %s\n", t / 10, text);
		if (settled < 0) {
			if (distinct == n) {
				settled = t;
				memcpy(where, cpus, sizeof(where));
				TH_LOG("%d spinners one per CPU after %ld ms: %s", n, t, text);
			} else if (t > SETTLE_MS) {
				break;
			}
			continue;
		}
		if (memcmp(where, cpus, n * sizeof(*cpus))) {
			traded++;
			TH_LOG("traded places at %ld ms: %s", t, text);
		}
		if (distinct != n) {
			moved++;
			TH_LOG("not one per CPU at %ld ms: %s", t, text);
		}
		if (t >= settled + STAY_MS)
			break;
	}
	if (f)
		fclose(f);
	metric("spinners_spread_one_per_cpu_and_stay", "settled_ms", settled, "ms");
	ASSERT_LE(0, settled) TH_LOG("not one per CPU within %d ms: %s", SETTLE_MS, text);
	TH_LOG("%d samples, %d with places traded", samples, traded);
	EXPECT_EQ(0, moved);
}

/* Copy @from into the recording's file @name; its size, -1 on failure. */
static long copy_out(const char *from, const char *name)
{
	int in = open(from, O_RDONLY), out = open(out_path(name), O_WRONLY | O_CREAT | O_TRUNC,
						   0644);
	long total = 0;
	char buf[65536];
	ssize_t got;

	while (in >= 0 && out >= 0 && (got = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, got) != got) {
			total = -1;
			break;
		}
		total += got;
	}
	if (in < 0 || out < 0)
		total = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return total;
}

/*
 * Pinned to CPU 0, then all unpinned at once by uleload (SIGUSR1): the
 * idle CPUs steal at once when CPU 0's tick wakes them
 * (sched_ule_always_steal, off by default), and the balancer (every
 * 0.5-1.5 s) mends what they missed; 10 s hold several of its runs. This
 * task stays on CPU 0 with them, so the CPUs that should steal are idle.
 */
TEST_F_TIMEOUT(balance, unpinned_spinners_stolen_and_recorded, 60)
{
	int n = online_cpus(), tids[MAX_CPUS], cpus[MAX_CPUS], pid, distinct, i;
	char text[MAX_CPUS * 4], marker[64];
	long size;
	FILE *f;

	if (setup_skipped(_metadata))
		return;
	ASSERT_EQ(0, bind_cpu(0, 0));
	ASSERT_EQ(0, write_text(ALWAYS_STEAL, "1"));
	pid = start_spinners(&self->kids, "/tmp/pinned.out", 0, n, tids);
	ASSERT_LT(0, pid);
	sleep_ms(1000);
	distinct = cpus_of(pid, tids, n, cpus, text, sizeof(text));
	EXPECT_TRUE(distinct == 1 && cpus[0] == 0) TH_LOG("pinned to CPU 0: %s", text);

	self->recording = 1;
	ASSERT_EQ(0, write_text(EVENTS_DIR "mode", "fill"));
	ASSERT_EQ(0, write_text(EVENTS_DIR "buffer_kb", "4096"));
	ASSERT_EQ(0, trace_restart());
	ASSERT_EQ(0, trace_event(MIGRATE_EVENT, 1));
	ASSERT_LT(0, copy_out(TRACE_DIR "events/" MIGRATE_EVENT "/format",
			      "task_migrate.format"));
	ASSERT_EQ(0, write_text(EVENTS_DIR "control", "start"));
	sleep_ms(1000);
	ASSERT_EQ(0, kill(pid, SIGUSR1));
	ASSERT_TRUE(wait_line("/tmp/pinned.out", "unpinned", 5000, marker, sizeof(marker)));
	sleep_ms(UNPINNED_MS);
	distinct = cpus_of(pid, tids, n, cpus, text, sizeof(text));
	TH_LOG("%d s after unpinning: %s", UNPINNED_MS / 1000, text);
	EXPECT_EQ(n, distinct);
	ASSERT_EQ(0, write_text(EVENTS_DIR "control", "stop"));
	trace_event(MIGRATE_EVENT, 0);
	size = copy_out(EVENTS_DIR "dump", "balance.bin");
	TH_LOG("recording dumped: %ld bytes; %s", size, marker);
	EXPECT_LT(0, size);
	copy_out(EVENTS_DIR "stats", "balance.stats");
	copy_out(TRACE_DIR "trace", "balance-ftrace.txt");
	f = fopen(out_path("balance.txt"), "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "pid %d\ntids", pid);
	for (i = 0; i < n; i++)
		fprintf(f, " %d", tids[i]);
	fprintf(f, "\nnproc %d\n%s\n", n, marker);
	fclose(f);
}

/*
 * A balancer per root domain: with the root cpuset's sched_load_balance
 * off, the two halves of the CPUs are two root domains. Idle stealing
 * off, so only the periodic balancer moves spinners; it used to balance
 * only the root domain of the CPU its timer fired on, and the other
 * partition stayed piled up for good.
 */
TEST_F_TIMEOUT(balance, balancer_spreads_each_partition, 60)
{
	if (setup_skipped(_metadata))
		return;
	ASSERT_EQ(0, write_text(STEAL_THRESH, "0"));
	ASSERT_EQ(0, partitions_make(online_cpus()));
	self->partitions = 1;
	spread_in_both_partitions(_metadata, "ule_balance_steal_off");
}

/*
 * A new interval applies at once: the longest one held for 2 s makes
 * the timer draw the next pass 30-90 s away; set back, spinners forked
 * on CPU 0 (stealing off) are spread by passes drawn from it, one move
 * per pass from CPU 0. A FreeBSD-like countdown left them piled up.
 */
TEST_F_TIMEOUT(balance, shorter_balance_interval_applies_at_once, 120)
{
	int n = online_cpus(), pids[MAX_CPUS], cpus[MAX_CPUS], distinct = 0, i;
	long start, limit, interval = atol(self->interval);
	char text[MAX_CPUS * 4];

	if (setup_skipped(_metadata))
		return;
	ASSERT_EQ(0, write_text(STEAL_THRESH, "0"));
	ASSERT_EQ(0, write_text(INTERVAL, INTERVAL_MAX));
	sleep_ms(2000);
	ASSERT_EQ(0, write_text(INTERVAL, self->interval));
	/* Children of this test: they die with it (PR_SET_PDEATHSIG). */
	ASSERT_EQ(0, spinners_from(n, 0, 0, n - 1, pids));
	/* Up to 1.5 intervals a pass and one move a pass, with 3 s to spare. */
	limit = interval * 3 * n / 2 + 3000;
	start = now_ms();
	while (distinct < n && now_ms() - start <= limit) {
		sleep_ms(SAMPLE_MS);
		distinct = cpus_of(0, pids, n, cpus, text, sizeof(text));
	}
	TH_LOG("interval %s ms set back to %ld: on CPUs %s after %ld ms", INTERVAL_MAX,
	       interval, text, now_ms() - start);
	metric("shorter_balance_interval_applies_at_once", "spread_ms", now_ms() - start, "ms");
	for (i = 0; i < n; i++)
		stop(pids[i]);
	EXPECT_EQ(n, distinct);
}

TEST_HARNESS_MAIN
