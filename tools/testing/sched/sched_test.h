/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the in-guest checks on kselftest_harness.h
 * (class_generic.c, muqss_checks.c): files of /proc and /sys, the kernel
 * log, spinning children, CPU hotplug, the trace buffer, cpuset
 * partitions and the metrics file the host reads.
 *
 * Every helper is static inline, so that a test that leaves one unused
 * still builds with -Werror. It includes the harness itself, after the
 * libc headers that need _GNU_SOURCE.
 */
#ifndef SCHED_TEST_H
#define SCHED_TEST_H

#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SYSCTL_DIR		"/proc/sys/kernel/"
#define CLASS_SYSCTL		SYSCTL_DIR "sched_class"
#define TRACE_DIR		"/sys/kernel/tracing/"
#define CPU_DIR			"/sys/devices/system/cpu/"
#define NAME_LEN		32
#define PATH_LEN		1024
#define SWITCH_WAIT_MS		10000	/* a switch under way answers EBUSY */
#define HOTPLUG_WAIT_MS		10000	/* a CPU's hotplug and its task's move */
#define SYSLOG_READ_ALL		3
#define SYSLOG_SIZE_BUFFER	10
#define MAX_SPINNERS		64

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

#define NSEC_PER_SEC		1000000000LL

static inline long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline long now_ms(void)
{
	return now_ns() / 1000000;
}

static inline int online_cpus(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN);
}

/* The first line of @path without its newline; -errno on failure. */
static inline int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		ret = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

/* Write @text to @path in one write(); 0 or -errno. */
static inline int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	err = errno;
	close(fd);
	return n < 0 ? -err : 0;
}

/* Switch kernel.sched_class to @name, waiting out a switch under way. */
static inline int switch_class(const char *name)
{
	long end = now_ms() + SWITCH_WAIT_MS;
	int ret;

	while ((ret = write_text(CLASS_SYSCTL, name)) == -EBUSY && now_ms() < end)
		sleep_ms(10);
	return ret;
}

/* The value of field @key ("class", "policy") of a /proc/.../sched file. */
static inline int sched_field(const char *path, const char *key, char *out, size_t len)
{
	char line[256];
	size_t klen = strlen(key);
	FILE *f = fopen(path, "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		char *val;

		if (strncmp(line, key, klen) || !colon || (line[klen] != ' ' && line[klen] != ':'))
			continue;
		for (val = colon + 1; isspace((unsigned char)*val); val++)
			;
		val[strcspn(val, "\n")] = '\0';
		snprintf(out, len, "%s", val);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* Field @key of task @pid's sched file (0: this task) as a number; -1 if absent. */
static inline double task_sched_num(int pid, const char *key)
{
	char path[PATH_LEN], val[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/sched");
	if (sched_field(path, key, val, sizeof(val)))
		return -1;
	return atof(val);
}

/*
 * Field @n (3 or more: the state, the parent, ...) of the stat line in
 * @buf, past the command name, which may hold spaces; NULL if too short.
 */
static inline const char *stat_field(const char *buf, int n)
{
	const char *p = strrchr(buf, ')');
	int field;

	for (field = 2; field < n && p; field++)
		p = strchr(p + 1, ' ');
	return p ? p + 1 : NULL;
}

/* Field @n of task @pid's stat line (0: this task) as a number; -1 if gone. */
static inline long long task_stat_num(int pid, int n)
{
	char path[PATH_LEN], buf[1024];
	const char *val;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	if (read_line(path, buf, sizeof(buf)))
		return -1;
	val = stat_field(buf, n);
	return val ? atoll(val) : -1;
}

#define STAT_CPU		39	/* the CPU the task last ran on */
#define STAT_RT_PRIORITY	40
#define STAT_POLICY		41

/* The CPU task @pid last ran on; -1 when it is gone. */
static inline int last_cpu(int pid)
{
	return task_stat_num(pid, STAT_CPU);
}

/* The CPU time task @pid has had, in ns; -1 when it is gone. */
static inline long long runtime_ns(int pid)
{
	double ms = task_sched_num(pid, "se.sum_exec_runtime");

	return ms < 0 ? -1 : (long long)(ms * 1e6);
}

/* Run time and run-queue wait of task @pid (of its thread @tid if not 0), ns. */
static inline int task_schedstat(int pid, int tid, long long *run, long long *wait)
{
	char path[PATH_LEN], buf[128];

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	if (read_line(path, buf, sizeof(buf)) || sscanf(buf, "%lld %lld", run, wait) != 2)
		return -1;
	return 0;
}

/* How long task @pid waited runnable, in ns (schedstat); -1 when gone. */
static inline long long run_delay_ns(int pid)
{
	long long run, delay;

	return task_schedstat(pid, 0, &run, &delay) ? -1 : delay;
}

/* The CPU thread @tid of @pid last ran on (@pid 0: @tid as a process); -1 if gone. */
static inline int thread_cpu(int pid, int tid)
{
	char path[PATH_LEN], buf[1024];
	const char *field;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	field = read_line(path, buf, sizeof(buf)) ? NULL : stat_field(buf, STAT_CPU);
	return field ? atoi(field) : -1;
}

#define MAX_TASKS		16384

/*
 * Every task (thread) of the system as (pid, tid) pairs in @ids, at most
 * @max; how many, or -errno when /proc cannot be read.
 */
static inline int list_tasks(int (*ids)[2], int max)
{
	struct dirent *pe, *te;
	DIR *proc = opendir("/proc"), *tasks;
	char dir[PATH_LEN];
	int n = 0;

	if (!proc)
		return -errno;
	while (n < max && (pe = readdir(proc))) {
		int pid = atoi(pe->d_name);

		if (pid <= 0)
			continue;
		snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
		tasks = opendir(dir);
		while (tasks && n < max && (te = readdir(tasks))) {
			ids[n][0] = pid;
			ids[n][1] = atoi(te->d_name);
			n += ids[n][1] > 0;
		}
		if (tasks)
			closedir(tasks);
	}
	closedir(proc);
	return n;
}

/* The whole kernel log, NUL-terminated, to free(); NULL on failure. */
static inline char *kernel_log(void)
{
	int size = klogctl(SYSLOG_SIZE_BUFFER, NULL, 0), len;
	char *buf;

	if (size <= 0)
		return NULL;
	buf = malloc(size + 1);
	if (!buf)
		return NULL;
	len = klogctl(SYSLOG_READ_ALL, buf, size);
	if (len < 0) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* How many lines of the kernel log contain @needle; -1 if unreadable. */
static inline int log_count(const char *needle)
{
	char *buf = kernel_log(), *p;
	int n = 0;

	if (!buf)
		return -1;
	for (p = buf; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	free(buf);
	return n;
}

/* The rest of the last log line that holds @needle, after it; 0 if found. */
static inline int log_last(const char *needle, char *out, size_t len)
{
	char *buf = kernel_log(), *p, *last = NULL;

	if (!buf)
		return -EIO;
	for (p = buf; (p = strstr(p, needle)); p += strlen(needle))
		last = p + strlen(needle);
	if (last)
		snprintf(out, len, "%.*s", (int)strcspn(last, "\n"), last);
	free(buf);
	return last ? 0 : -ENOENT;
}

/* The first CPU of @cpu's SMT siblings (its core); -1 if unknown. */
static inline int core_of(int cpu)
{
	char path[PATH_LEN], list[64];

	snprintf(path, sizeof(path), CPU_DIR "cpu%d/topology/thread_siblings_list", cpu);
	return cpu < 0 || read_line(path, list, sizeof(list)) ? -1 : atoi(list);
}

/* The CPUs of a list such as "0-3,8" in @set; how many. */
static inline int cpulist(const char *list, cpu_set_t *set)
{
	const char *p = list;

	CPU_ZERO(set);
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			break;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		while (lo <= hi && lo < CPU_SETSIZE)
			CPU_SET(lo++, set);
		p = end + (*end == ',');
	}
	return CPU_COUNT(set);
}

/* Bind this task to CPUs @lo..@hi; 0 or -errno. */
static inline int bind_range(int pid, int lo, int hi)
{
	cpu_set_t set;
	int cpu;

	CPU_ZERO(&set);
	for (cpu = lo; cpu <= hi; cpu++)
		CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set) ? -errno : 0;
}

static inline int bind_cpu(int pid, int cpu)
{
	return bind_range(pid, cpu, cpu);
}

/* How a spinner starts: where, and as whom. */
struct spin {
	int lo, hi;		/* its CPUs; lo < 0: anywhere */
	int nice;
	int policy, prio;	/* set by the child itself when policy is not 0 */
	int nobody;		/* drop to uid and gid 65534 first */
};

#define NOBODY_ID		65534

/* Become the unprivileged user nobody; 0 or -errno. */
static inline int become_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY_ID, NOBODY_ID, NOBODY_ID) ||
	    setresuid(NOBODY_ID, NOBODY_ID, NOBODY_ID))
		return -errno;
	return 0;
}

/*
 * A child that spins as @s says; returns its pid once it runs, -1 on
 * failure. The nice value is set from here once it does: a class that
 * never runs nice 19 beside nice 0 (BMQ) would otherwise never let the
 * child report. The caller stops it.
 */
static inline int spinner_as(const struct spin *s)
{
	int pipefd[2], pid;
	char c;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct sched_param sp = { .sched_priority = s->prio };

		close(pipefd[0]);
		/* A test the harness kills for its timeout leaves no spinner. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (s->lo >= 0 && bind_range(0, s->lo, s->hi))
			_exit(1);
		if (s->nobody && become_nobody())
			_exit(1);
		if (s->policy && sched_setscheduler(0, s->policy, &sp))
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			;
	}
	close(pipefd[1]);
	if (pid > 0 && (read(pipefd[0], &c, 1) != 1 || setpriority(PRIO_PROCESS, pid, s->nice))) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(pipefd[0]);
	return pid;
}

/* A spinner at @nice bound to @cpu (anywhere if negative). */
static inline int spinner(int cpu, int nice)
{
	struct spin s = { .lo = cpu, .hi = cpu, .nice = nice };

	return spinner_as(&s);
}

static inline void stop(int pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/*
 * @n spinners forked from CPU @from (fork placement starts them there),
 * each then allowed CPUs @lo..@hi; their pids in @pids. This task's
 * affinity is restored. 0, or -1 with none left running.
 */
static inline int spinners_from(int n, int from, int lo, int hi, int *pids)
{
	cpu_set_t mine;
	int i, ret = 0;

	if (n > MAX_SPINNERS || sched_getaffinity(0, sizeof(mine), &mine) || bind_cpu(0, from))
		return -1;
	for (i = 0; i < n; i++) {
		pids[i] = spinner(from, 0);
		if (pids[i] < 0 || bind_range(pids[i], lo, hi)) {
			ret = -1;
			break;
		}
	}
	if (ret)
		for (n = i + 1, i = 0; i < n; i++)
			stop(pids[i]);
	sched_setaffinity(0, sizeof(mine), &mine);
	return ret;
}

/* Write @value to CPU @cpu's online file, waiting out EBUSY; 0 or -errno. */
static inline int set_online(int cpu, const char *value)
{
	char path[PATH_LEN];
	long end = now_ms() + HOTPLUG_WAIT_MS;
	int ret;

	snprintf(path, sizeof(path), CPU_DIR "cpu%d/online", cpu);
	while ((ret = write_text(path, value)) == -EBUSY && now_ms() < end)
		sleep_ms(20);
	return ret;
}

/* Write to a file of the trace folder; 0 or -errno. */
static inline int trace_write(const char *file, const char *text)
{
	char path[PATH_LEN];

	snprintf(path, sizeof(path), TRACE_DIR "%s", file);
	return write_text(path, text);
}

/* Mount tracefs if needed; 0 or -errno. */
static inline int trace_ready(void)
{
	if (!access(TRACE_DIR "trace", F_OK))
		return 0;
	return mount("none", TRACE_DIR, "tracefs", 0, NULL) ? -errno : 0;
}

/* Record event @ev ("sched/sched_switch") or stop: @on 1 or 0. */
static inline int trace_event(const char *ev, int on)
{
	char file[NAME_LEN * 4];

	snprintf(file, sizeof(file), "events/%s/enable", ev);
	return trace_write(file, on ? "1" : "0");
}

/*
 * Empty the trace buffer and record. Only an open with O_TRUNC empties
 * it: a write of nothing, as write_text() would do, leaves every earlier
 * test's lines in it.
 */
static inline int trace_restart(void)
{
	int ret = trace_write("tracing_on", "0");

	if (!ret) {
		int fd = open(TRACE_DIR "trace", O_WRONLY | O_TRUNC);

		ret = fd < 0 ? -errno : 0;
		if (fd >= 0)
			close(fd);
	}
	if (!ret)
		ret = trace_write("tracing_on", "1");
	return ret;
}

/* The timestamp of a trace line in us; -1 when it has none. */
static inline long long trace_us(const char *line)
{
	const char *p;

	for (p = line; (p = strchr(p, ':')); p++) {
		const char *q = p;

		while (q > line && (isdigit((unsigned char)q[-1]) || q[-1] == '.'))
			q--;
		if (q < p && q > line && q[-1] == ' ' && strchr(q, '.') < p) {
			long long s, us;

			if (sscanf(q, "%lld.%lld", &s, &us) == 2)
				return s * 1000000 + us;
		}
	}
	return -1;
}

/* The CPU of a trace line ("[003]"); -1 when it has none. */
static inline int trace_cpu(const char *line)
{
	const char *p = strchr(line, '[');

	return p && isdigit((unsigned char)p[1]) ? atoi(p + 1) : -1;
}

/* The number after " @key=" in a trace line; -1 when it has none. */
static inline int trace_field(const char *line, const char *key)
{
	char needle[64];
	const char *p;

	snprintf(needle, sizeof(needle), " %s=", key);
	p = strstr(line, needle);
	return p ? atoi(p + strlen(needle)) : -1;
}

/* Does @line hold "KEY=VAL " (a sched_switch field, say)? */
static inline int trace_has(const char *line, const char *key, int val)
{
	char needle[64];

	snprintf(needle, sizeof(needle), " %s=%d ", key, val);
	return !!strstr(line, needle);
}

#define POLL_MS			100
#define MAX_KIDS		8

/*
 * A helper program's path in @path: $@env_name if set, else @name beside
 * this program (or @name alone when /proc/self/exe cannot be read).
 */
static inline const char *sibling_program(const char *env_name, const char *name,
					  char *path, size_t len)
{
	const char *env = getenv(env_name);
	char self[PATH_LEN];
	ssize_t n;

	if (env && *env) {
		snprintf(path, len, "%s", env);
		return path;
	}
	snprintf(path, len, "%s", name);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		snprintf(path, len, "%s/%s", dirname(self), name);
	}
	return path;
}

/* The workload program (uleload.c). */
static inline const char *uleload_path(void)
{
	static char path[PATH_LEN];

	return path[0] ? path : sibling_program("ULELOAD", "uleload", path, sizeof(path));
}

/*
 * Start uleload with @argv (argv[0] "uleload") on the CPUs of @set (NULL:
 * anywhere) at @nice, its output to @out (NULL: nowhere).
 */
static inline int load_argv(const char *out, const cpu_set_t *set, int nice,
			    const char * const *argv)
{
	int pid = fork();

	if (pid == 0) {
		int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		if (set && sched_setaffinity(0, sizeof(*set), set))
			_exit(126);
		if (nice && setpriority(PRIO_PROCESS, 0, nice))
			_exit(126);
		execv(uleload_path(), (char * const *)argv);
		_exit(127);
	}
	return pid;
}

#define LOAD_ARGS		16

/* The NULL-terminated arguments of @ap after argv[0], into @argv. */
static inline void load_collect(const char **argv, va_list ap)
{
	int argc = 1;

	while (argc < LOAD_ARGS - 1 && (argv[argc] = va_arg(ap, const char *)))
		argc++;
	argv[argc] = NULL;
}

/*
 * Start "uleload ARGS..." (a NULL-terminated list) on CPUs @lo..@hi (@lo
 * negative: anywhere) at @nice, its output to @out (NULL: nowhere).
 */
static inline int load(const char *out, int lo, int hi, int nice, ...)
{
	const char *argv[LOAD_ARGS] = { "uleload" };
	cpu_set_t set;
	va_list ap;
	int cpu;

	va_start(ap, nice);
	load_collect(argv, ap);
	va_end(ap);
	CPU_ZERO(&set);
	for (cpu = lo; cpu >= 0 && cpu <= hi; cpu++)
		CPU_SET(cpu, &set);
	return load_argv(out, lo >= 0 ? &set : NULL, nice, argv);
}

/* "uleload ARGS..." on the CPUs of @set, its output to @out. */
static inline int load_on(const char *out, const cpu_set_t *set, ...)
{
	const char *argv[LOAD_ARGS] = { "uleload" };
	va_list ap;

	va_start(ap, set);
	load_collect(argv, ap);
	va_end(ap);
	return load_argv(out, set, 0, argv);
}

/* Has the task of /proc/@pid exec'd uleload? Before, its state is our fork's. */
static inline bool runs_uleload(int pid)
{
	char path[PATH_LEN], comm[NAME_LEN];

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	return !read_line(path, comm, sizeof(comm)) && !strcmp(comm, "uleload");
}

/* Wait up to @ms for a line of @file that starts with @word; the rest of it. */
static inline bool wait_line(const char *file, const char *word, long ms, char *rest, size_t len)
{
	long end = now_ms() + ms;
	size_t wlen = strlen(word);
	char line[512];

	do {
		FILE *f = fopen(file, "r");

		while (f && fgets(line, sizeof(line), f)) {
			if (strncmp(line, word, wlen) || line[wlen] != ' ')
				continue;
			snprintf(rest, len, "%.*s", (int)strcspn(line + wlen + 1, "\n"),
				 line + wlen + 1);
			fclose(f);
			return true;
		}
		if (f)
			fclose(f);
		sleep_ms(POLL_MS);
	} while (now_ms() < end);
	return false;
}

/* A file for a workload's output, in the folder of a test. */
static inline const char *out_file(const char *dir, const char *name)
{
	static char path[PATH_LEN * 2];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/*
 * Wait up to @ms for uleload's "tids T1 ... TN" line in @file; 0 with
 * @n of them in @tids, -1 otherwise.
 */
static inline int wait_tids(const char *file, long ms, int *tids, int n)
{
	char rest[MAX_SPINNERS * 12 + 16], *p = rest, *end;
	int got = 0;

	if (n > MAX_SPINNERS * 2 || !wait_line(file, "tids", ms, rest, sizeof(rest)))
		return -1;
	while (got < n) {
		long tid = strtol(p, &end, 10);

		if (end == p)
			break;
		tids[got++] = tid;
		p = end;
	}
	return got == n ? 0 : -1;
}

/* How many lines of @file start with @word. */
static inline int count_lines(const char *file, const char *word)
{
	char line[512];
	FILE *f = fopen(file, "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += !strncmp(line, word, strlen(word));
	if (f)
		fclose(f);
	return n;
}

/* How many lines of the trace hold every one of @a, @b and @c. */
static inline int trace_count(const char *a, const char *b, const char *c)
{
	char line[1024];
	FILE *f = fopen(TRACE_DIR "trace", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, a) && (!b || strstr(line, b)) && (!c || strstr(line, c));
	if (f)
		fclose(f);
	return n;
}

/* The children a test started, stopped whatever way it ends. */
struct kids {
	int pids[MAX_KIDS];
	int n;
};

static inline int track(struct kids *k, int pid)
{
	if (pid > 0 && k->n < MAX_KIDS)
		k->pids[k->n++] = pid;
	return pid;
}

static inline void stop_all(struct kids *k)
{
	while (k->n)
		stop(k->pids[--k->n]);
}

/*
 * Two cpuset partitions (two root domains): p1 the first half of the
 * online CPUs, p2 the rest, made root domains by turning the root
 * cpuset's sched_load_balance off. The classes keep their idle marks per
 * root domain, and a CPU learns of waiting work through its own's.
 */
#define CPUSET_MNT		"/tmp/cpuset"
#define SPREAD_WINDOW_MS	500
#define SPREAD_LIMIT_MS		8000
#define SPREAD_BUSY_PCT		90	/* of a CPU per spinner */
#define USER_HZ_MS		10

static inline int cpuset_write(const char *file, const char *text)
{
	char path[PATH_LEN];

	snprintf(path, sizeof(path), CPUSET_MNT "/%s", file);
	return write_text(path, text);
}

static inline int partitions_make(int n)
{
	char mems[64], cpus[32];
	int half = n / 2;

	mkdir(CPUSET_MNT, 0755);
	if (mount("cpuset", CPUSET_MNT, "cgroup", 0, "cpuset"))
		return -errno;
	if (mkdir(CPUSET_MNT "/p1", 0755) || mkdir(CPUSET_MNT "/p2", 0755) ||
	    read_line(CPUSET_MNT "/cpuset.mems", mems, sizeof(mems)) ||
	    cpuset_write("p1/cpuset.mems", mems) || cpuset_write("p2/cpuset.mems", mems))
		return -EIO;
	snprintf(cpus, sizeof(cpus), "0-%d", half - 1);
	if (cpuset_write("p1/cpuset.cpus", cpus))
		return -EIO;
	snprintf(cpus, sizeof(cpus), "%d-%d", half, n - 1);
	if (cpuset_write("p2/cpuset.cpus", cpus))
		return -EIO;
	return cpuset_write("cpuset.sched_load_balance", "0");
}

/* One root domain again; safe to call when nothing was made. */
static inline void partitions_remove(void)
{
	cpuset_write("cpuset.sched_load_balance", "1");
	rmdir(CPUSET_MNT "/p1");
	rmdir(CPUSET_MNT "/p2");
	umount(CPUSET_MNT);
}

/* Each CPU's idle time in USER_HZ ticks (/proc/stat), CPUs 0..@n-1. */
static inline void idle_ticks(long long *idle, int n)
{
	char line[512];
	FILE *f = fopen("/proc/stat", "r");
	long long v[4];
	int cpu;

	memset(idle, 0, n * sizeof(*idle));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu%d %lld %lld %lld %lld",
			   &cpu, &v[0], &v[1], &v[2], &v[3]) == 5 && cpu >= 0 && cpu < n)
			idle[cpu] = v[3];
	fclose(f);
}

/*
 * @count spinners forked on CPU @from, then allowed CPUs @lo..@hi: do
 * they get @count CPUs' worth of time there (idle time under a tenth of a
 * CPU per spinner over a half-second window) within 8 s? Time, not where
 * each one ran: under a shared queue (MuQSS's rqshare) spinners change
 * CPUs all the time. @busy: hundredths of CPUs they got in the last
 * window; @ms: how long it took.
 */
static inline int spread(int count, int from, int lo, int hi, int *busy, long *ms)
{
	long long i0[MAX_SPINNERS], i1[MAX_SPINNERS], idle;
	int pids[MAX_SPINNERS], i, ok = 0;
	long t0 = now_ms(), w0, win;

	*busy = 0;
	*ms = 0;
	if (hi >= MAX_SPINNERS || spinners_from(count, from, lo, hi, pids))
		return 0;
	while (!ok && *ms < SPREAD_LIMIT_MS) {
		w0 = now_ms();
		idle_ticks(i0, hi + 1);
		sleep_ms(SPREAD_WINDOW_MS);
		idle_ticks(i1, hi + 1);
		win = now_ms() - w0;
		*ms = now_ms() - t0;
		for (idle = 0, i = lo; i <= hi; i++)
			idle += i1[i] - i0[i];
		*busy = ((hi - lo + 1) * win - idle * USER_HZ_MS) * 100 / win;
		ok = *busy >= count * SPREAD_BUSY_PCT;
	}
	for (i = 0; i < count; i++)
		stop(pids[i]);
	return ok;
}

/*
 * Metrics for the host, one JSON object a line, appended to the file that
 * SCHED_TEST_METRICS names (nothing is written without it): each test runs
 * in a child of its own, so a line is written whole in one write().
 */
static inline void metric(const char *test, const char *name, double value, const char *unit)
{
	const char *path = getenv("SCHED_TEST_METRICS");
	char line[512];
	int fd, len;

	if (!path)
		return;
	len = snprintf(line, sizeof(line),
		       "{\"test\": \"%s\", \"name\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n",
		       test, name, value, unit);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, len) != len)
		perror(path);
	close(fd);
}

/*
 * The walks over another CPU's waiting tasks (ULE's idle steal, MuQSS's
 * look across queues) stop after sysctl_sched_nr_migrate tasks, its
 * debugfs knob, as mainline's do.
 */
#define NR_MIGRATE_KNOB		"/sys/kernel/debug/sched/nr_migrate"
#define NR_MIGRATE_DEFAULT	"32"
#define NR_MIGRATE_PAST		"64"	/* past every task WALK_AHEAD queues */
#define WALK_AHEAD		40	/* nice-0 spinners bound to the busy CPU */
#define WALK_SETTLE_MS		300
#define WALK_WINDOW_MS		1000

/*
 * The ms a waiting spinner @mover runs in WALK_WINDOW_MS after a spinner
 * bound to @to stops, leaving @to idle; -1 when none could start.
 */
static inline long long walk_taken_ms(int to, int mover)
{
	int blocker = spinner(to, 0);
	long long before, after;

	if (blocker < 0)
		return -1;
	sleep_ms(WALK_SETTLE_MS);
	before = runtime_ns(mover);
	stop(blocker);
	sleep_ms(WALK_WINDOW_MS);
	after = runtime_ns(mover);
	return before < 0 || after < 0 ? -1 : (after - before) / 1000000;
}

/*
 * A SCHED_IDLE spinner allowed on CPUs @from and @to waits on @from
 * behind WALK_AHEAD nice-0 spinners bound there, which every walk meets
 * first, while @to goes idle: once with nr_migrate at its default, once
 * past them. The ms it ran in each window go to @capped and @uncapped.
 * The caller runs on neither CPU. 0, or -1 when the workload failed.
 */
static inline int walk_cap_run(int from, int to, long long *capped, long long *uncapped)
{
	struct spin idle = { .lo = from, .hi = from, .policy = SCHED_IDLE };
	int ahead[WALK_AHEAD], mover, i, n = 0, ret = -1;
	char saved[NAME_LEN];
	cpu_set_t both;

	*capped = *uncapped = -1;
	if (read_line(NR_MIGRATE_KNOB, saved, sizeof(saved)) ||
	    write_text(NR_MIGRATE_KNOB, NR_MIGRATE_DEFAULT))
		return -1;
	/* SCHED_IDLE must run once to report: before the others come. */
	mover = spinner_as(&idle);
	for (; n < WALK_AHEAD && mover > 0; n++) {
		ahead[n] = spinner(from, 0);
		if (ahead[n] < 0)
			break;
	}
	CPU_ZERO(&both);
	CPU_SET(from, &both);
	CPU_SET(to, &both);
	if (n == WALK_AHEAD && !sched_setaffinity(mover, sizeof(both), &both)) {
		*capped = walk_taken_ms(to, mover);
		if (!write_text(NR_MIGRATE_KNOB, NR_MIGRATE_PAST))
			*uncapped = walk_taken_ms(to, mover);
		ret = *capped < 0 || *uncapped < 0 ? -1 : 0;
	}
	stop(mover);
	for (i = 0; i < n; i++)
		stop(ahead[i]);
	write_text(NR_MIGRATE_KNOB, saved);
	return ret;
}

#include "kselftest_harness.h"

/*
 * SCHED_TEST_ONLY="FIXTURE[.TEST],...": the tests it names run, every
 * other one skips in its fixture's setup. 6.1's harness has no -f or -t
 * filter, and a boot that shares a program between topologies (the smt
 * preset's BMQ checks) runs only part of it.
 */
static inline bool test_wanted(const struct __test_metadata *m)
{
	const char *only = getenv("SCHED_TEST_ONLY"), *p;
	size_t flen = strlen(m->fixture->name), tlen = strlen(m->name);

	if (!only || !*only)
		return true;
	for (p = only; *p; p += strcspn(p, ","), p += !!*p) {
		size_t len = strcspn(p, ",");

		if (len == flen && !strncmp(p, m->fixture->name, flen))
			return true;
		if (len == flen + 1 + tlen && !strncmp(p, m->fixture->name, flen) &&
		    p[flen] == '.' && !strncmp(p + flen + 1, m->name, tlen))
			return true;
	}
	return false;
}

/*
 * 6.1's harness runs a test's body after its setup skipped it (later
 * kernels return): every body of a fixture whose setup may skip starts
 * with this.
 */
static inline int setup_skipped(struct __test_metadata *_metadata)
{
	return _metadata->skip;
}

/*
 * In each of the two partitions, spinners forked on its first CPU get its
 * CPUs (the marks of each root domain tell its idle CPUs); @when names
 * the case in the log and the metrics.
 */
static inline void spread_in_both_partitions(struct __test_metadata *_metadata,
					     const char *when)
{
	int n = online_cpus(), half = n / 2, busy1, busy2, ok1, ok2;
	long ms1, ms2;

	ok1 = spread(half, 0, 0, half - 1, &busy1, &ms1);
	ok2 = spread(n - half, half, half, n - 1, &busy2, &ms2);
	TH_LOG("%s: p1 %d %% after %ld ms, p2 %d %% after %ld ms", when, busy1, ms1, busy2, ms2);
	metric("partitions", when, ms1 > ms2 ? ms1 : ms2, "ms");
	EXPECT_TRUE(ok1) TH_LOG("p1's %d spinners did not get its CPUs within 8 s", half);
	EXPECT_TRUE(ok2) TH_LOG("p2's %d spinners did not get its CPUs within 8 s", n - half);
}

/* The partitions gone, one spinner per CPU from CPU 0 keeps every CPU busy. */
static inline void spread_over_every_cpu(struct __test_metadata *_metadata)
{
	int n = online_cpus(), busy, ok;
	long ms;

	ok = spread(n, 0, 0, n - 1, &busy, &ms);
	metric("partitions", "one_root_domain_again", ms, "ms");
	TH_LOG("%d spinners from CPU 0: %d %% after %ld ms", n, busy, ms);
	EXPECT_TRUE(ok);
}

/*
 * walk_cap_run() as test @name: at the default nr_migrate the task stays
 * off idle CPU @to, past the tasks ahead it runs there.
 */
static inline void walk_cap_expect(struct __test_metadata *_metadata, const char *name,
				   int from, int to)
{
	long long capped, uncapped;
	int ret = walk_cap_run(from, to, &capped, &uncapped);

	EXPECT_EQ(0, ret) TH_LOG("the workload did not start");
	if (ret)
		return;
	metric(name, "capped_ms", capped, "ms");
	metric(name, "uncapped_ms", uncapped, "ms");
	TH_LOG("ran on idle CPU %d within %d ms: %lld ms at nr_migrate %s, %lld ms at %s",
	       to, WALK_WINDOW_MS, capped, NR_MIGRATE_DEFAULT, uncapped, NR_MIGRATE_PAST);
	EXPECT_GT(WALK_WINDOW_MS / 10, capped);
	EXPECT_LT(WALK_WINDOW_MS / 2, uncapped);
}

/*
 * State and policy (field 41) of task @tid of process @pid; -errno when
 * the task is gone.
 */
static inline int task_state(int pid, int tid, char *state, int *policy)
{
	char path[PATH_LEN], buf[1024];
	const char *st, *pol;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	ret = read_line(path, buf, sizeof(buf));
	if (ret)
		return ret;
	st = stat_field(buf, 3);
	pol = stat_field(buf, 41);
	if (!st || !pol)
		return -EIO;
	*state = *st;
	*policy = atoi(pol);
	return 0;
}

/*
 * Tasks not where they belong: a normal policy (0 normal, 3 batch, 5
 * idle) not on class @cls, any other not on rt, dl or stop; each logged.
 * Zombies keep the class they died on and are left out. Counts both kinds
 * in @normal and @others; -1 when /proc cannot be read.
 */
static inline int normal_tasks_off(struct __test_metadata *_metadata, const char *cls,
				   int *normal, int *others)
{
	static int ids[MAX_TASKS][2];
	int n = list_tasks(ids, MAX_TASKS), bad = 0, i;

	*normal = *others = 0;
	if (n <= 0)
		return -1;
	for (i = 0; i < n; i++) {
		char path[PATH_LEN], on[NAME_LEN], state;
		int pid = ids[i][0], tid = ids[i][1], policy;
		bool ok;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/sched", pid, tid);
		if (task_state(pid, tid, &state, &policy) ||
		    sched_field(path, "class", on, sizeof(on)))
			continue;	/* gone meanwhile */
		if (state == 'Z' || state == 'X')
			continue;
		if (policy == SCHED_OTHER || policy == SCHED_BATCH || policy == SCHED_IDLE) {
			(*normal)++;
			ok = !strcmp(on, cls);
		} else {
			(*others)++;
			ok = !strcmp(on, "rt") || !strcmp(on, "dl") || !strcmp(on, "stop");
		}
		if (!ok) {
			bad++;
			TH_LOG("%d/%d: policy %d on %s", pid, tid, policy, on);
		}
	}
	return bad;
}

#define GAIN_WAIT_MS		2000
#define STAT_UTIME		14

/*
 * Spinners @pids that are gone, gain no CPU time in GAIN_WAIT_MS, or are
 * not on class @cls; each logged.
 */
static inline int spinners_stuck(struct __test_metadata *_metadata, const int *pids, int n,
				 const char *cls)
{
	long long before[MAX_SPINNERS], after;
	char path[PATH_LEN], on[NAME_LEN];
	int i, stuck = 0;

	for (i = 0; i < n && i < MAX_SPINNERS; i++)
		before[i] = task_stat_num(pids[i], STAT_UTIME);
	sleep_ms(GAIN_WAIT_MS);
	for (i = 0; i < n && i < MAX_SPINNERS; i++) {
		after = task_stat_num(pids[i], STAT_UTIME);
		on[0] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/sched", pids[i]);
		if (after >= 0 && before[i] >= 0 && after > before[i] &&
		    !sched_field(path, "class", on, sizeof(on)) && !strcmp(on, cls))
			continue;
		TH_LOG("spinner %d: utime %lld -> %lld, class %s", pids[i], before[i], after,
		       after < 0 ? "gone" : on);
		stuck++;
	}
	return stuck;
}

#endif /* SCHED_TEST_H */
