// SPDX-License-Identifier: GPL-2.0
/*
 * In-guest checks of the run-time class switch under churn
 * (Documentation/scheduler/sched-class-select.rst, "Switching at run
 * time") on kselftest_harness.h, for a boot on cfs with ULE, BMQ and
 * MuQSS built:
 *
 * - zombies: a hog and ZOMBIES unreaped children that each spun on CPU 1;
 *   cfs -> ule -> cfs must not move the zombies (task_dead() already gave
 *   their load back), a zombie keeps the class it died on, and CPU 1's
 *   CFS utilisation and load stay what the hog explains;
 * - churn: one hog per CPU, threads that come and go, a fork storm and a
 *   setscheduler storm (stress-ng --pthread, --fork, --schedpolicy) while
 *   the class changes SWITCH_STORM_ROUNDS times: every write succeeds and
 *   each switch is logged once; the kernel warns if a class still holds a
 *   task after its walk, which the host fails on. In the end every
 *   stressor dies when killed (a task no class picks again would not),
 *   normal tasks are on cfs and every hog runs there.
 *
 * The setscheduler stressor turns SCHED_IDLE while running and runs up
 * seconds of vruntime debt, which CFS has it wait out; preempted in an RCU
 * read-side section it makes RCU report a stall, which the host accepts
 * for that task alone. The stall watchdog is off during the churn: the
 * same stressor starves by design as SCHED_IDLE under ULE behind the hogs,
 * and a switch that takes tens of seconds while threads exit lets the
 * watchdog fall back, rightly, between two writes (sched_watchdog.sh
 * tests the watchdog).
 *
 * Usage: [SWITCH_STORM_TASKS=PATH] [SWITCH_STORM_ROUNDS=50] switch_storm
 * The tasks program (tasks.c) defaults to the one beside this program.
 */
#include "sched_test.h"

#define WATCHDOG_KNOB		SYSCTL_DIR "sched_watchdog_ms"
#define DEBUG_FILE		"/sys/kernel/debug/sched/debug"
#define ZOMBIES			500
#define ZOMBIES_ARG		"500"
#define ZOMBIE_SPIN_MS		"2"
#define ZOMBIE_CPU		1
#define ZOMBIES_OUT		"/tmp/switch_storm.zombies"
#define READY_WAIT_MS		300000
#define AVG_SLACK		200	/* util and load beyond the hog's */
#define MOVED_LINE		"sched: normal tasks moved from "
#define CHURN_SETTLE_MS		2000
#define STRESS_INT_WAIT_MS	30000
/* A SCHED_IDLE stressor child may first wait out up to 40 s of CFS debt. */
#define STRESS_KILL_WAIT_MS	60000
#define RECHECK_MS		500

static const char *tasks_path(void)
{
	static char path[PATH_LEN];

	return sibling_program("SWITCH_STORM_TASKS", "tasks", path, sizeof(path));
}

FIXTURE(storm) {
	int pids[MAX_SPINNERS + 2];
	int n;
};

FIXTURE_SETUP(storm)
{
	char cls[NAME_LEN];

	ASSERT_EQ(0, read_line(CLASS_SYSCTL, cls, sizeof(cls)));
	ASSERT_STREQ("cfs", cls) TH_LOG("the storm starts from a boot on cfs");
	ASSERT_EQ(0, access(tasks_path(), X_OK)) TH_LOG("no tasks program at %s", tasks_path());
}

FIXTURE_TEARDOWN(storm)
{
	int i;

	for (i = 0; i < self->n; i++)
		stop(self->pids[i]);
}

/* Field @key of section @sec ("cfs_rq[1]:/") of the sched debug file; -1. */
static long long debug_num(const char *sec, const char *key)
{
	char line[256], name[128];
	long long val = -1, v;
	bool on = false;
	FILE *f = fopen(DEBUG_FILE, "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, sec, strlen(sec))) {
			on = true;
			continue;
		}
		if (!strncmp(line, "cpu#", 4) || !strncmp(line, "cfs_rq[", 7) ||
		    !strncmp(line, "rt_rq[", 6) || !strncmp(line, "dl_rq[", 6))
			on = false;
		if (on && sscanf(line, " .%127s : %lld", name, &v) == 2 && !strcmp(name, key)) {
			val = v;
			break;
		}
	}
	if (f)
		fclose(f);
	return val;
}

/* Zombie children of @parent; the first in @first. */
static int zombies_of(int parent, int *first)
{
	struct dirent *e;
	DIR *proc = opendir("/proc");
	char path[PATH_LEN], buf[1024];
	const char *st, *pp;
	int n = 0;

	*first = -1;
	while (proc && (e = readdir(proc))) {
		int pid = atoi(e->d_name);

		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (pid <= 0 || read_line(path, buf, sizeof(buf)))
			continue;
		st = stat_field(buf, 3);
		pp = stat_field(buf, 4);
		if (!st || !pp || *st != 'Z' || atoi(pp) != parent)
			continue;
		if (*first < 0)
			*first = pid;
		n++;
	}
	if (proc)
		closedir(proc);
	return n;
}

/* The task count of the last "normal tasks moved" line; -1 if none. */
static int moved_last(void)
{
	char rest[256], *open;

	if (log_last(MOVED_LINE, rest, sizeof(rest)))
		return -1;
	open = strchr(rest, '(');
	return open ? atoi(open + 1) : -1;
}

TEST_F_TIMEOUT(storm, zombies_stay_on_the_class_they_died_on, 600)
{
	char rest[64], cls[NAME_LEN], path[PATH_LEN];
	long long util, load, hog_util, hog_load;
	int parent, hog, nz, z1, moved;

	hog = spinner(ZOMBIE_CPU, 0);
	ASSERT_LT(0, hog);
	self->pids[self->n++] = hog;
	parent = fork();
	if (parent == 0) {
		int out = open(ZOMBIES_OUT, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int in = open("/dev/null", O_RDONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (out < 0 || in < 0 || dup2(out, 1) < 0 || dup2(in, 0) < 0 ||
		    bind_cpu(0, ZOMBIE_CPU))
			_exit(126);
		execl(tasks_path(), "tasks", "zombies", ZOMBIES_ARG, ZOMBIE_SPIN_MS, (char *)NULL);
		_exit(127);
	}
	ASSERT_LT(0, parent);
	self->pids[self->n++] = parent;
	ASSERT_TRUE(wait_line(ZOMBIES_OUT, "ready", READY_WAIT_MS, rest, sizeof(rest)));
	nz = zombies_of(parent, &z1);
	EXPECT_EQ(ZOMBIES, nz) TH_LOG("unreaped zombies that ran on CPU %d", ZOMBIE_CPU);
	ASSERT_LT(0, z1);

	ASSERT_EQ(0, switch_class("ule"));
	moved = moved_last();
	TH_LOG("cfs -> ule moved %d tasks with %d zombies around", moved, nz);
	EXPECT_TRUE(moved >= 0 && moved < ZOMBIES) TH_LOG("the switch moved the zombies");
	snprintf(path, sizeof(path), "/proc/%d/sched", z1);
	ASSERT_EQ(0, sched_field(path, "class", cls, sizeof(cls)));
	EXPECT_STREQ("cfs", cls) TH_LOG("zombie %d is on %s", z1, cls);

	ASSERT_EQ(0, switch_class("cfs"));
	/* Moving the zombies out and back would add each one's util and load again. */
	util = debug_num("cfs_rq[1]:/", "util_avg");
	load = debug_num("cfs_rq[1]:/", "load_avg");
	hog_util = (long long)task_sched_num(hog, "se.avg.util_avg");
	hog_load = (long long)task_sched_num(hog, "se.avg.load_avg");
	TH_LOG("back on cfs: CPU 1's root cfs_rq util_avg %lld load_avg %lld",
	       util, load);
	TH_LOG("the hog's util_avg %lld load_avg %lld", hog_util, hog_load);
	EXPECT_TRUE(util >= 0 && hog_util >= 0 && util <= hog_util + AVG_SLACK &&
		    load >= 0 && hog_load >= 0 && load <= hog_load + AVG_SLACK)
		TH_LOG("CPU 1's CFS utilisation and load are more than the hog explains");
}

/* Processes whose comm starts with "stress-ng"; SIGKILLed when @kill. */
static int stressors(struct __test_metadata *_metadata, bool kill_them, bool log)
{
	struct dirent *e;
	DIR *proc = opendir("/proc");
	char path[PATH_LEN], comm[NAME_LEN], cls[NAME_LEN];
	int n = 0;

	while (proc && (e = readdir(proc))) {
		int pid = atoi(e->d_name);

		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if (pid <= 0 || read_line(path, comm, sizeof(comm)) ||
		    strncmp(comm, "stress-ng", strlen("stress-ng")))
			continue;
		n++;
		if (kill_them)
			kill(pid, SIGKILL);
		if (!log)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/sched", pid);
		if (sched_field(path, "class", cls, sizeof(cls)))
			snprintf(cls, sizeof(cls), "gone");
		TH_LOG("left: %d (%s) on CPU %d, class %s, policy %lld, vruntime %.3f", pid, comm,
		       last_cpu(pid), cls, task_stat_num(pid, STAT_POLICY),
		       task_sched_num(pid, "se.vruntime"));
	}
	if (proc)
		closedir(proc);
	return n;
}

static const char * const storm_order[] = { "cfs", "ule", "bmq", "muqss" };

TEST_F_TIMEOUT(storm, switches_under_churn, 1200)
{
	const char *env = getenv("SWITCH_STORM_ROUNDS");
	int rounds = env && *env ? atoi(env) : 50, ncpu = online_cpus();
	int stress, failed = 0, same = 0, before, after, r, i, bad, normal, others, left;
	char watchdog[NAME_LEN], cls[NAME_LEN];
	long end;

	ASSERT_GE(MAX_SPINNERS, ncpu);
	for (i = 0; i < ncpu; i++) {
		self->pids[self->n] = spinner(i, 0);
		ASSERT_LT(0, self->pids[self->n]);
		self->n++;
	}
	stress = fork();
	if (stress == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(126);
		execlp("stress-ng", "stress-ng", "--quiet", "--pthread", "2", "--fork", "2",
		       "--schedpolicy", "2", "--timeout", "0", (char *)NULL);
		_exit(127);
	}
	ASSERT_LT(0, stress);
	sleep_ms(CHURN_SETTLE_MS);
	ASSERT_EQ(0, read_line(WATCHDOG_KNOB, watchdog, sizeof(watchdog)));
	ASSERT_EQ(0, write_text(WATCHDOG_KNOB, "0"));
	before = log_count(MOVED_LINE);
	for (r = 1; r <= rounds; r++) {
		const char *to = r == rounds ? "cfs" : storm_order[r % ARRAY_SIZE(storm_order)];

		/* Writing the class already running is no switch and logs nothing. */
		same += !read_line(CLASS_SYSCTL, cls, sizeof(cls)) && !strcmp(cls, to);
		if (write_text(CLASS_SYSCTL, to) || read_line(CLASS_SYSCTL, cls, sizeof(cls)) ||
		    strcmp(cls, to))
			failed++;
	}
	after = log_count(MOVED_LINE);
	EXPECT_EQ(0, failed) TH_LOG("%d of %d writes under churn failed", failed, rounds);
	EXPECT_EQ(rounds - same, after - before)
		TH_LOG("each switch logged once (%d writes of the running class)", same);
	EXPECT_EQ(0, write_text(WATCHDOG_KNOB, watchdog));

	kill(stress, SIGINT);
	for (end = now_ms() + STRESS_INT_WAIT_MS; now_ms() < end; sleep_ms(POLL_MS))
		if (waitpid(stress, NULL, WNOHANG) == stress)
			break;
	kill(stress, SIGKILL);
	waitpid(stress, NULL, 0);
	stressors(_metadata, true, false);
	for (end = now_ms() + STRESS_KILL_WAIT_MS; now_ms() < end; sleep_ms(POLL_MS))
		if (!stressors(_metadata, false, false))
			break;
	left = stressors(_metadata, false, true);
	EXPECT_EQ(0, left) TH_LOG("%d stressors did not die within %d s of SIGKILL", left,
				  STRESS_KILL_WAIT_MS / 1000);

	ASSERT_EQ(0, read_line(CLASS_SYSCTL, cls, sizeof(cls)));
	EXPECT_STREQ("cfs", cls);
	bad = normal_tasks_off(_metadata, "cfs", &normal, &others);
	if (bad) {
		/* A task that exited meanwhile may be read half-way. */
		sleep_ms(RECHECK_MS);
		bad = normal_tasks_off(_metadata, "cfs", &normal, &others);
	}
	TH_LOG("%d normal-policy tasks, %d others", normal, others);
	EXPECT_EQ(0, bad) TH_LOG("normal tasks not on cfs after the storm");
	EXPECT_EQ(0, spinners_stuck(_metadata, self->pids, self->n, "cfs"));
}

TEST_HARNESS_MAIN
