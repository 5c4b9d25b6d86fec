// SPDX-License-Identifier: GPL-2.0
/*
 * In-guest stress checks of the class that runs normal tasks, on
 * kselftest_harness.h. Run on the debug kernel: the host fails the boot
 * on any splat, hang or RCU stall, which is most of what these look for.
 *
 * - storm: stress-ng's fork, switch, affinity and cpu-online stressors
 *   together must succeed, and every CPU be online after them;
 * - hotplug_under_load: with two spinners per CPU, every CPU but 0 goes
 *   offline and online again, some rounds: no spinner is on a CPU while
 *   it is offline, and at the end every one is alive, gains CPU time and
 *   is on the class;
 * - throttled_group_across_hotplug (CFS only): a cgroup capped by cpu.max
 *   to 1 ms per second is throttled while every CPU but 0 goes offline
 *   and while the cpuset flag rebuilds the sched domains. Both take
 *   runqueues offline with throttled groups on them, which 6.1 unthrottled
 *   with one clock update each: the guests run with WARN_DOUBLE_CLOCK on,
 *   so the log must stay free of that warning, and the capped tasks must
 *   survive.
 *
 * Usage: CLASS_STRESS_CLASS=NAME [CLASS_STRESS_SECONDS=30]
 *        [CLASS_STRESS_ROUNDS=3] class_stress
 * Every test first checks that normal tasks run on NAME.
 */
#include "sched_test.h"

#define STORM_LOG		"/tmp/class_stress.log"
#define OFFLINE_FILE		CPU_DIR "offline"
#define OFFLINE_SETTLE_MS	200
#define SPINNERS_PER_CPU	2
#define CGROUP_DIR		"/sys/fs/cgroup/"
#define CAPPED_DIR		CGROUP_DIR "class_stress_capped/"
#define CAP			"1000 1000000"	/* 1 ms per second */
#define THROTTLE_WAIT_MS	2000
#define DOUBLE_CLOCK		"RQCF_UPDATED"
#define JOIN_WAIT_MS		60000	/* a cgroup.procs write waits for RCU */
#define RMDIR_WAIT_MS		10000

static const char *env_or(const char *name, const char *fallback)
{
	const char *val = getenv(name);

	return val && *val ? val : fallback;
}

FIXTURE(stress) {
	char cls[NAME_LEN];
};

FIXTURE_SETUP(stress)
{
	const char *want = getenv("CLASS_STRESS_CLASS");

	ASSERT_NE(NULL, want) TH_LOG("CLASS_STRESS_CLASS names the class to stress");
	ASSERT_EQ(0, read_line(CLASS_SYSCTL, self->cls, sizeof(self->cls)));
	ASSERT_STREQ(want, self->cls) TH_LOG("normal tasks run on %s, not %s", self->cls, want);
}

FIXTURE_TEARDOWN(stress)
{
}

/* Log the lines of @path that hold @needle (NULL: the last @tail lines). */
static void log_lines(struct __test_metadata *_metadata, const char *path, const char *needle,
		      int tail)
{
	char line[512];
	int n = 0, skip;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (!needle && fgets(line, sizeof(line), f))
		n++;
	rewind(f);
	skip = needle ? 0 : n - tail;
	while (fgets(line, sizeof(line), f)) {
		if (skip-- > 0 || (needle && !strstr(line, needle)))
			continue;
		line[strcspn(line, "\n")] = '\0';
		TH_LOG("%s", line);
	}
	fclose(f);
}

/*
 * cpu-online is "pathological" to stress-ng (it may hang a machine):
 * hanging is what this looks for, and the host times the boot out.
 */
TEST_F_TIMEOUT(stress, storm, 900)
{
	const char *secs = env_or("CLASS_STRESS_SECONDS", "30");
	char ncpu[16], timeout[32], offline[64];
	int pid, status = -1;

	snprintf(ncpu, sizeof(ncpu), "%d", online_cpus());
	snprintf(timeout, sizeof(timeout), "%ss", secs);
	pid = fork();
	if (pid == 0) {
		int fd = open(STORM_LOG, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execlp("stress-ng", "stress-ng", "--fork", ncpu, "--switch", ncpu, "--affinity",
		       ncpu, "--cpu-online", "1", "--pathological", "--timeout", timeout,
		       "--metrics-brief", (char *)NULL);
		_exit(127);
	}
	ASSERT_LT(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	log_lines(_metadata, STORM_LOG, "metrc", 0);
	log_lines(_metadata, STORM_LOG, "skipped", 0);
	log_lines(_metadata, STORM_LOG, "cpu-online", 0);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("stress-ng's fork/switch/affinity/cpu-online storm for %s s: status %#x",
		       secs, status);
		log_lines(_metadata, STORM_LOG, NULL, 20);
	}
	/* stress-ng brings every CPU back. */
	ASSERT_EQ(0, read_line(OFFLINE_FILE, offline, sizeof(offline)));
	EXPECT_STREQ("", offline) TH_LOG("CPUs %s offline after the storm", offline);
}

TEST_F_TIMEOUT(stress, hotplug_under_load, 600)
{
	int rounds = atoi(env_or("CLASS_STRESS_ROUNDS", "3"));
	int ncpu = online_cpus(), n = SPINNERS_PER_CPU * ncpu, pids[MAX_SPINNERS];
	char path[PATH_LEN];
	int i, r, cpu, wrong = 0, stuck;

	ASSERT_GE(MAX_SPINNERS, n);
	for (i = 0; i < n; i++) {
		pids[i] = spinner(-1, 0);
		ASSERT_LT(0, pids[i]);
	}
	for (r = 0; r < rounds; r++) {
		for (cpu = 1; cpu < ncpu; cpu++) {
			snprintf(path, sizeof(path), CPU_DIR "cpu%d/online", cpu);
			if (access(path, W_OK))
				continue;
			if (set_online(cpu, "0")) {
				TH_LOG("round %d: CPU %d did not go offline", r + 1, cpu);
				wrong++;
				continue;
			}
			sleep_ms(OFFLINE_SETTLE_MS);
			for (i = 0; i < n; i++) {
				if (last_cpu(pids[i]) != cpu)
					continue;
				TH_LOG("round %d: spinner %d on offline CPU %d",
				       r + 1, pids[i], cpu);
				wrong++;
			}
			if (set_online(cpu, "1")) {
				TH_LOG("round %d: CPU %d did not come back", r + 1, cpu);
				wrong++;
			}
		}
	}
	EXPECT_EQ(0, wrong) TH_LOG("%d rounds of offlining each CPU under load", rounds);

	stuck = spinners_stuck(_metadata, pids, n, self->cls);
	EXPECT_EQ(0, stuck) TH_LOG("all %d spinners alive, running and on %s after hotplug",
				   n, self->cls);
	for (i = 0; i < n; i++)
		stop(pids[i]);
}

/* The pids of @file (cgroup.procs), at most @max; how many. */
static int procs_of(const char *file, int *pids, int max)
{
	FILE *f = fopen(file, "r");
	int n = 0;

	while (f && n < max && fscanf(f, "%d", &pids[n]) == 1)
		n++;
	if (f)
		fclose(f);
	return n;
}

/* The number after "@key " on a line of @path; -1 if there is none. */
static long long file_num(const char *path, const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long long val = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			val = atoll(line + klen + 1);
	if (f)
		fclose(f);
	return val;
}

/* A child that joins the capped group, then forks @n spinners there. */
static int capped_group(int n)
{
	char pid[16];
	int child = fork(), i;

	if (child)
		return child;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(pid, sizeof(pid), "%d", getpid());
	/* One write: each waits for an RCU grace period, seconds under TCG. */
	if (write_text(CAPPED_DIR "cgroup.procs", pid))
		_exit(1);
	for (i = 0; i < n; i++)
		if (!fork())
			for (;;)
				;
	for (;;)
		pause();
}

/* Take CPUs 1..@ncpu-1 offline and back; how many writes failed. */
static int cycle_cpus(int ncpu)
{
	char path[PATH_LEN];
	int cpu, failed = 0;

	for (cpu = 1; cpu < ncpu; cpu++) {
		snprintf(path, sizeof(path), CPU_DIR "cpu%d/online", cpu);
		if (access(path, W_OK))
			continue;
		failed += !!set_online(cpu, "0");
		failed += !!set_online(cpu, "1");
	}
	return failed;
}

TEST_F_TIMEOUT(stress, throttled_group_across_hotplug, 300)
{
	int ncpu = online_cpus(), pids[MAX_SPINNERS + 1], helper, n = 0, i, lost = 0;
	long long throttled;
	long end;

	if (strcmp(self->cls, "cfs"))
		SKIP(return, "no CFS bandwidth control under %s", self->cls);
	ASSERT_GE(MAX_SPINNERS, ncpu);
	ASSERT_EQ(0, write_text(CGROUP_DIR "cgroup.subtree_control", "+cpu"));
	ASSERT_EQ(0, mkdir(CAPPED_DIR, 0755));
	helper = capped_group(ncpu);
	ASSERT_LT(0, helper);
	for (end = now_ms() + JOIN_WAIT_MS; now_ms() < end; sleep_ms(POLL_MS)) {
		n = procs_of(CAPPED_DIR "cgroup.procs", pids, ARRAY_SIZE(pids));
		if (n > ncpu)
			break;
	}
	ASSERT_LT(ncpu, n) TH_LOG("%d tasks joined the capped group", n);
	/* Capped once all are in: a task throttled inside its own join holds cgroup_mutex. */
	ASSERT_EQ(0, write_text(CAPPED_DIR "cpu.max", CAP));
	sleep_ms(THROTTLE_WAIT_MS);
	throttled = file_num(CAPPED_DIR "cpu.stat", "nr_throttled");
	EXPECT_EQ(0, cycle_cpus(ncpu));
	mkdir(CPUSET_MNT, 0755);
	ASSERT_EQ(0, mount("cpuset", CPUSET_MNT, "cgroup", 0, "cpuset"));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, cpuset_write("cpuset.sched_load_balance", i % 2 ? "1" : "0"));
		sleep_ms(OFFLINE_SETTLE_MS);
	}
	umount(CPUSET_MNT);
	TH_LOG("capped group throttled in %lld periods before the hotplug", throttled);
	EXPECT_LT(0, throttled);
	EXPECT_EQ(0, log_count(DOUBLE_CLOCK)) TH_LOG("a double clock update was reported");
	for (i = 0; i < n; i++)
		lost += kill(pids[i], 0) != 0;
	EXPECT_EQ(0, lost) TH_LOG("%d of the %d capped tasks are gone", lost, n);

	write_text(CAPPED_DIR "cpu.max", "max");
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	waitpid(helper, NULL, 0);
	for (end = now_ms() + RMDIR_WAIT_MS; rmdir(CAPPED_DIR) && now_ms() < end;)
		sleep_ms(POLL_MS);
}

TEST_HARNESS_MAIN
