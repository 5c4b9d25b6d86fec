// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads of the ULE tests (tools/testing/sched/ule_*.sh):
 *
 *   uleload sleeper RUN_US SLEEP_US SECONDS  runs RUN_US, sleeps SLEEP_US,
 *                                            over and over: interactive
 *   uleload spinner SECONDS                  one CPU-bound thread: batch
 *   uleload yielder SECONDS                  calls sched_yield() in a loop
 *   uleload yieldsleeper RUN_US SLEEP_US SECONDS
 *                                            calls sched_yield() in a loop
 *                                            for RUN_US, sleeps SLEEP_US,
 *                                            over and over
 *   uleload turn RUN_US SLEEP_US S1 S2       a sleeper for S1 seconds, then
 *                                            prints "spinning loops L" and
 *                                            spins S2 seconds
 *   uleload pool N RUN_US SLEEP_US SECONDS   N sleeper threads; prints
 *                                            "tids T1 ... TN" once all
 *                                            exist and 2 s later starts
 *                                            them together for SECONDS
 *   uleload spinners N SECONDS               N spinning threads, the same
 *                                            way but 0.5 s after the tids.
 *                                            On SIGUSR1 the main thread
 *                                            moves to the last CPU (a
 *                                            migration that marks the time
 *                                            in a recording), allows every
 *                                            spinner every CPU and prints
 *                                            "unpinned marker_cpu C"
 *   uleload orphans N SECONDS                N spinning threads, the same
 *                                            way, that outlive the main
 *                                            thread: it exits (pthread_exit())
 *                                            as soon as they start
 *   uleload forker SECONDS                   the main thread sleeps 1 s and
 *                                            waits for a second thread that
 *                                            forks a child spinning SECONDS
 *                                            and reaps it; prints "scores
 *                                            main M0 M1 forker F0 F1", the
 *                                            ule.score of both threads before
 *                                            the fork and after the reaping
 *   uleload spawn N                          the main thread sleeps 1 s, then
 *                                            creates N threads that block;
 *                                            prints "main RUN0 RUN1 SLP1
 *                                            thread RUN SLP cpu CPU": its
 *                                            ule.runtime_us before and after
 *                                            creating them, its
 *                                            ule.slptime_us after, the
 *                                            first thread's two values and
 *                                            the CPU time (us) the creation
 *                                            took the main thread
 *   uleload pi [WAITER_NICE]                 priority lending: an owner thread
 *                                            spins holding a PTHREAD_PRIO_INHERIT
 *                                            mutex; a waiter runs 0.5 ms and
 *                                            sleeps 19.5 ms until ULE has had
 *                                            it interactive for 3 s (at most
 *                                            20 s) or, given WAITER_NICE,
 *                                            sets that nice value and goes
 *                                            straight on, prints "waiting TID"
 *                                            and blocks on the mutex; 5 s
 *                                            later the owner unlocks, prints
 *                                            "unlocked TID", spins 5 s more.
 *                                            Prints "owner TID" before the
 *                                            waiter starts, "tids OWNER
 *                                            WAITER" once it has
 *   uleload frames FPS WORK_US SECONDS       a frame task: FPS times a second
 *                                            needs WORK_US of CPU time before
 *                                            the next frame is due; prints
 *                                            "frames F missed M" (frames
 *                                            finished late or skipped)
 *   uleload write FILE VALUE                 writes "VALUE\n" to FILE in one
 *                                            write(); prints "ok" or the
 *                                            errno name (EINVAL, ...)
 *   uleload mapper SECONDS                   maps 4 MiB and changes its
 *                                            protection back and forth, mapping
 *                                            and unmapping it every 1024 turns:
 *                                            nearly all its time in the kernel
 *                                            holding mmap_lock for writing
 *   uleload mapsread PID SECONDS             reads /proc/PID/maps (which takes
 *                                            PID's mmap_lock) over and over;
 *                                            prints "reads R worst_us W"
 *   uleload merge MIB SECONDS                MIB of identical pages offered
 *                                            to KSM (MADV_MERGEABLE), held for
 *                                            SECONDS: work for ksmd
 *   uleload burst KIB SECONDS [batch]        a sender spins 20 ms, then writes
 *                                            KIB in one write() to a unix
 *                                            stream socket, over and over; a
 *                                            reader thread (SCHED_BATCH with
 *                                            batch) blocks on the other end.
 *                                            Of the bursts read while ULE has
 *                                            the reader interactive (batch:
 *                                            after 1 s), prints "bursts N
 *                                            inside I return R later L": how
 *                                            many, and when the reader got
 *                                            the CPU: inside write(), on the
 *                                            sender's way back to user space,
 *                                            or after it
 *
 *   uleload renice CPU TRIALS                two spinner threads on CPU; each
 *                                            trial waits until the first has
 *                                            just got the CPU from the second,
 *                                            renices it from 0 to 19 from
 *                                            another CPU and times how long the
 *                                            second waits for the CPU after
 *                                            that; prints "renice trials N
 *                                            med_us M min_us L max_us H"
 *                                            (trials that found the first
 *                                            running within 2 s)
 *
 *   uleload flip PID CPU OTHER SECONDS       sets PID's affinity to CPU alone
 *                                            and to CPU and OTHER in turn, as
 *                                            fast as it can for SECONDS: the
 *                                            task never has to move, but every
 *                                            change takes it off its queue
 *                                            and back; prints "flips N"
 *
 *   uleload cpuwatch PID STEP_MS WINDOW_MS TID...
 *                                            sends PID SIGUSR1, then every
 *                                            STEP_MS for WINDOW_MS reads the
 *                                            CPU of each TID (field 39 of
 *                                            /proc/PID/task/TID/stat) and at
 *                                            the end prints "# spread T C1
 *                                            ... CN" per sample (T in cs
 *                                            since the signal, "-" for a
 *                                            thread gone): no fork, exec or
 *                                            output while it samples; PID
 *                                            0 signals nobody and reads each
 *                                            TID as a process
 *                                            (/proc/TID/task/TID/stat); the
 *                                            samples also go to
 *                                            SCHED_TEST_METRICS as JSON
 *
 * sleeper, spinner and pool end with "loops L cpu_ms C" (sleep cycles, CPU
 * time of the process). Bursts are timed by the monotonic clock, not by
 * thread CPU time: a class that updates CPU time only at ticks would
 * otherwise stretch a 1 ms burst to a whole tick and change how
 * interactive the thread looks.
 *
 * On SIGUSR1 the sleeper prints "late_med_us M late_p90_us P", how long
 * after its sleeps ended it got the CPU back (median and 90th percentile
 * of the wakeups since the last SIGUSR1, or since it started), and starts
 * counting anew.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"

/* How long start_threads() holds new threads at the gate (see there). */
#define SPIN_HOLD_US 500000
#define POOL_HOLD_US 2000000

static atomic_ulong sink;
static long run_us, sleep_us;
static atomic_long end_us;
static atomic_long total_loops;
static atomic_int started;
static pthread_barrier_t gate;
static pid_t *tids;
/* Lateness of each wakeup of "sleeper" (one thread), in microseconds. */
#define MAX_LATE 100000
static long *late;
static long nr_late;
static atomic_int report_late;

static long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

/* CPU time of the calling thread. */
static long thread_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static long cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void spin(unsigned long iters)
{
	unsigned long i, x = 0;

	for (i = 0; i < iters; i++)
		x += i ^ (x >> 3);
	atomic_store_explicit(&sink, x, memory_order_relaxed);
}

static void spin_until(long t)
{
	while (now_us() < t)
		spin(200);
}

static void sleep_for(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static void print_lateness(void)
{
	if (!nr_late) {
		printf("late_med_us - late_p90_us -\n");
		return;
	}
	qsort(late, nr_late, sizeof(*late), cmp_long);
	printf("late_med_us %ld late_p90_us %ld\n", late[nr_late / 2], late[nr_late * 9 / 10]);
	nr_late = 0;
}

static void on_usr1(int sig)
{
	atomic_store(&report_late, 1);
}

/* yieldsleeper: the run part of each loop calls sched_yield() instead. */
static bool yield_runs;

static void run_for(long us)
{
	long t = now_us() + us;

	if (!yield_runs) {
		spin_until(t);
		return;
	}
	while (now_us() < t)
		sched_yield();
}

static void sleeper_loop(void)
{
	long loops = 0;

	long t;

	while (now_us() < atomic_load(&end_us)) {
		run_for(run_us);
		t = now_us() + sleep_us;
		sleep_for(sleep_us);
		if (late && nr_late < MAX_LATE)
			late[nr_late++] = now_us() - t;
		if (atomic_exchange(&report_late, 0))
			print_lateness();
		loops++;
	}
	atomic_fetch_add(&total_loops, loops);
}

/* Each thread notes its tid and waits at the gate until all exist. */
static void *pool_thread(void *arg)
{
	tids[(long)arg] = gettid();
	atomic_fetch_add(&started, 1);
	pthread_barrier_wait(&gate);
	sleeper_loop();
	return NULL;
}

static void *spin_thread(void *arg)
{
	tids[(long)arg] = gettid();
	atomic_fetch_add(&started, 1);
	pthread_barrier_wait(&gate);
	spin_until(atomic_load(&end_us));
	return NULL;
}

/*
 * Create n threads running fn, print their tids and, @hold_us later,
 * release them together for the next @seconds. Held at the gate, they
 * leave the CPU to this thread: running, each would make creating the
 * next one slower (80 on one CPU took longer than 10 s under TCG). The
 * hold also gives every thread the same sleep behind it. ULE judges a new
 * thread by the history it inherits, about 0.8 s of run time from the
 * test shell (which is charged its dead children's run time) against as
 * much sleep: a pool thread needs some 2 s of sleep on top to start
 * interactive, as the threads of an interactive program would be.
 */
static pthread_t *start_threads(long n, void *(*fn)(void *), long seconds, long hold_us)
{
	pthread_t *threads = calloc(n, sizeof(*threads));
	long i;

	tids = calloc(n, sizeof(*tids));
	if (!threads || !tids || pthread_barrier_init(&gate, NULL, n + 1))
		return NULL;
	for (i = 0; i < n; i++) {
		if (pthread_create(&threads[i], NULL, fn, (void *)i)) {
			perror("uleload: pthread_create");
			return NULL;
		}
	}
	while (atomic_load(&started) < n)
		sleep_for(1000);
	printf("tids");
	for (i = 0; i < n; i++)
		printf(" %d", tids[i]);
	printf("\n");
	sleep_for(hold_us);
	atomic_store(&end_us, now_us() + seconds * 1000000L);
	pthread_barrier_wait(&gate);
	return threads;
}

/* @tid on @cpu alone, or (@all_but) on every online CPU but @cpu. */
static int pin_to(pid_t tid, int cpu, bool all_but)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), i;
	cpu_set_t set;

	CPU_ZERO(&set);
	for (i = 0; i < ncpu; i++)
		if (all_but ? i != cpu : i == cpu)
			CPU_SET(i, &set);
	return sched_setaffinity(tid, sizeof(set), &set);
}

/*
 * Leaving CPU 0 (where the caller pinned everything) for the last CPU
 * forces a migration of this thread right before the spinners are
 * unpinned: its time in an event recording is the time of the unpinning.
 */
static void unpin(long n)
{
	int last = sysconf(_SC_NPROCESSORS_ONLN) - 1;
	cpu_set_t set;
	long i;

	if (pin_to(0, last, false))
		perror("uleload: sched_setaffinity marker");
	for (i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	for (i = 0; i < n; i++)
		if (sched_setaffinity(tids[i], sizeof(set), &set))
			perror("uleload: sched_setaffinity");
	printf("unpinned marker_cpu %d\n", last);
}

/* Spin until the end; unpin all spinners when SIGUSR1 comes. */
static int spinners(long n, long seconds)
{
	pthread_t *threads;
	struct timespec ts;
	sigset_t usr1;
	long i, left;

	/* Blocked before the threads exist, so only sigtimedwait() takes it. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	threads = start_threads(n, spin_thread, seconds, SPIN_HOLD_US);
	if (!threads)
		return 1;
	while ((left = atomic_load(&end_us) - now_us()) > 0) {
		ts.tv_sec = left / 1000000;
		ts.tv_nsec = left % 1000000 * 1000;
		if (sigtimedwait(&usr1, NULL, &ts) == SIGUSR1)
			unpin(n);
	}
	for (i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	return 0;
}

/* The group leader dies first and its threads finish without it. */
static int orphans(long n, long seconds)
{
	if (!start_threads(n, spin_thread, seconds, SPIN_HOLD_US))
		return 1;
	pthread_exit(NULL);
}

/*
 * The value of line @key in /proc/self/task/@tid/sched into @buf (empty
 * if there is none): the ULE lines tell what the class makes of a thread.
 */
static void ule_line_of(pid_t tid, const char *key, char *buf, size_t size)
{
	char path[64], line[128], *colon;
	size_t len = strlen(key);
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/sched", tid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		colon = strchr(line, ':');
		if (colon && !strncmp(line, key, len) && line[len] == ' ')
			snprintf(buf, size, "%s", colon + 1 + strspn(colon + 1, " "));
	}
	fclose(f);
}

/* A numeric ULE line of thread @tid of this process, -1 if there is none. */
static long ule_value_of(pid_t tid, const char *key)
{
	char value[64];

	ule_line_of(tid, key, value, sizeof(value));
	return value[0] ? atol(value) : -1;
}

/* Is this thread on ULE's realtime (interactive) queue? */
static int ule_interactive_now(void)
{
	char queue[64];

	ule_line_of(gettid(), "ule.queue", queue, sizeof(queue));
	return !strncmp(queue, "realtime", 8);
}

static pid_t forker_main;
static long forker_seconds;

/*
 * Forks from a thread other than the main one, which sleeps meanwhile:
 * which of the two does ULE charge with the dead child's run time?
 */
static void *forker_thread(void *arg)
{
	long main0, main1, me0, me1;
	pid_t child;

	/* The main thread is asleep in pthread_join() by then. */
	sleep_for(500000);
	main0 = ule_value_of(forker_main, "ule.score");
	me0 = ule_value_of(gettid(), "ule.score");
	child = fork();
	if (child < 0) {
		perror("uleload: fork");
		return NULL;
	}
	if (!child) {
		spin_until(now_us() + forker_seconds * 1000000L);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	main1 = ule_value_of(forker_main, "ule.score");
	me1 = ule_value_of(gettid(), "ule.score");
	printf("scores main %ld %ld forker %ld %ld\n", main0, main1, me0, me1);
	return NULL;
}

static int forker(long seconds)
{
	pthread_t thread;

	forker_main = gettid();
	forker_seconds = seconds;
	/* Interactive before the child's time arrives, whatever it inherited. */
	sleep_for(1000000);
	if (pthread_create(&thread, NULL, forker_thread, NULL)) {
		perror("uleload: pthread_create");
		return 1;
	}
	pthread_join(thread, NULL);
	return 0;
}

static pthread_barrier_t spawn_gate;

static void *spawn_thread(void *arg)
{
	__atomic_store_n(&tids[(long)arg], gettid(), __ATOMIC_RELEASE);
	pthread_barrier_wait(&spawn_gate);
	return NULL;
}

/*
 * FreeBSD's sched_fork_thread(): a new thread starts with its creator's
 * whole history (no 0.5 s cut), and the creator pays nothing for it.
 */
static int spawn(long n)
{
	pthread_t *threads = calloc(n, sizeof(*threads));
	long run0, run1, slp1, cpu0, i;
	pid_t me = gettid();

	tids = calloc(n, sizeof(*tids));
	if (!threads || !tids || pthread_barrier_init(&spawn_gate, NULL, n + 1))
		return 1;
	sleep_for(1000000);
	run0 = ule_value_of(me, "ule.runtime_us");
	cpu0 = thread_cpu_us();
	for (i = 0; i < n; i++) {
		if (pthread_create(&threads[i], NULL, spawn_thread, (void *)i)) {
			perror("uleload: pthread_create");
			return 1;
		}
	}
	cpu0 = thread_cpu_us() - cpu0;
	run1 = ule_value_of(me, "ule.runtime_us");
	slp1 = ule_value_of(me, "ule.slptime_us");
	while (!__atomic_load_n(&tids[0], __ATOMIC_ACQUIRE))
		sleep_for(1000);
	printf("main %ld %ld %ld thread %ld %ld cpu %ld\n", run0, run1, slp1,
	       ule_value_of(tids[0], "ule.runtime_us"), ule_value_of(tids[0], "ule.slptime_us"),
	       cpu0);
	pthread_barrier_wait(&spawn_gate);
	for (i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	return 0;
}

static int pool(long n, long seconds)
{
	pthread_t *threads = start_threads(n, pool_thread, seconds, POOL_HOLD_US);
	long i;

	if (!threads)
		return 1;
	for (i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	return 0;
}

static pthread_mutex_t pi_mutex;
static atomic_long pi_waiting_us;
/* pi NICE: the waiter's nice value; without it, wait to be interactive. */
static int pi_nice_set, pi_nice;

static void *pi_owner(void *arg)
{
	long waiting;

	__atomic_store_n(&tids[0], gettid(), __ATOMIC_RELEASE);
	pthread_mutex_lock(&pi_mutex);
	atomic_fetch_add(&started, 1);
	while (!(waiting = atomic_load(&pi_waiting_us)))
		spin(200);
	spin_until(waiting + 5000000);
	pthread_mutex_unlock(&pi_mutex);
	printf("unlocked %d\n", gettid());
	spin_until(now_us() + 5000000);
	return NULL;
}

static void *pi_waiter(void *arg)
{
	long end = now_us() + 20000000, since = 0, loops = 0;
	int err;

	__atomic_store_n(&tids[1], gettid(), __ATOMIC_RELEASE);
	if (pi_nice_set && setpriority(PRIO_PROCESS, gettid(), pi_nice)) {
		printf("setpriority failed: %s\n", strerror(errno));
		end = 0;
	}
	/* Until ULE has had it interactive for 3 s running (checked 5/s). */
	while (!pi_nice_set && now_us() < end) {
		spin_until(now_us() + 500);
		sleep_for(19500);
		if (++loops % 10)
			continue;
		if (!ule_interactive_now())
			since = 0;
		else if (!since)
			since = now_us();
		else if (now_us() - since > 3000000)
			break;
	}
	printf("waiting %d\n", gettid());
	atomic_store(&pi_waiting_us, now_us());
	err = pthread_mutex_lock(&pi_mutex);
	if (err) {
		printf("lock failed: %s\n", strerror(err));
		return NULL;
	}
	printf("locked\n");
	pthread_mutex_unlock(&pi_mutex);
	return NULL;
}

static void sleep_until_us(long t)
{
	struct timespec ts = { .tv_sec = t / 1000000, .tv_nsec = t % 1000000 * 1000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * Frame k is released at start + k * period and due one period later. A
 * frame done after its deadline is missed; frames whose deadline passed
 * while an earlier one ran are skipped and count as missed too.
 */
static int frame_task(long fps, long work, long seconds)
{
	long period = 1000000 / fps, start = now_us(), k = 0, n = 0, missed = 0;
	long nframes = seconds * fps, t;

	while (k < nframes) {
		long cpu_end = thread_cpu_us() + work;

		while (thread_cpu_us() < cpu_end)
			spin(200);
		t = now_us();
		n++;
		if (t > start + (k + 1) * period)
			missed++;
		for (k++; k < nframes && start + (k + 1) * period <= t; k++) {
			n++;
			missed++;
		}
		if (k < nframes && start + k * period > t)
			sleep_until_us(start + k * period);
	}
	printf("frames %ld missed %ld\n", n, missed);
	return 0;
}

/*
 * A batch thread holds a priority-inheritance mutex that an interactive
 * thread then waits for: ULE lends the waiter's priority to the owner.
 */
static int pi(void)
{
	pthread_mutexattr_t attr;
	pthread_t owner, waiter;

	tids = calloc(2, sizeof(*tids));
	if (!tids || pthread_mutexattr_init(&attr) ||
	    pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT) ||
	    pthread_mutex_init(&pi_mutex, &attr)) {
		fprintf(stderr, "uleload: no PI mutex\n");
		return 1;
	}
	if (pthread_create(&owner, NULL, pi_owner, NULL))
		return 1;
	while (!atomic_load(&started))		/* the owner holds the mutex */
		sleep_for(1000);
	/* Now: a boosted owner may keep this thread off its CPU for 5 s. */
	printf("owner %d\n", __atomic_load_n(&tids[0], __ATOMIC_ACQUIRE));
	if (pthread_create(&waiter, NULL, pi_waiter, NULL))
		return 1;
	while (!__atomic_load_n(&tids[1], __ATOMIC_ACQUIRE))
		sleep_for(1000);
	printf("tids %d %d\n", tids[0], tids[1]);
	pthread_join(owner, NULL);
	pthread_join(waiter, NULL);
	return 0;
}

static int write_value(const char *path, const char *value)
{
	char buf[256];
	int len = snprintf(buf, sizeof(buf), "%s\n", value);
	ssize_t done;
	int fd;

	if (len >= (int)sizeof(buf)) {
		printf("E2BIG\n");
		return 1;
	}
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		printf("%s\n", strerrorname_np(errno));
		return 1;
	}
	done = write(fd, buf, len);
	if (done < 0)
		printf("%s\n", strerrorname_np(errno));
	else
		printf("%s\n", done == len ? "ok" : "short");
	close(fd);
	return done != len;
}

#define MAPPER_BYTES	(4L << 20)
#define MAPPER_REMAP	1024

static void *mapper_map(void)
{
	void *p = mmap(NULL, MAPPER_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static int mapper(long seconds)
{
	long end = now_us() + seconds * 1000000L, turns = 0;
	void *p = mapper_map();

	while (now_us() < end) {
		if (mprotect(p, MAPPER_BYTES, PROT_READ) ||
		    mprotect(p, MAPPER_BYTES, PROT_READ | PROT_WRITE)) {
			perror("mprotect");
			return 1;
		}
		if (++turns % MAPPER_REMAP == 0) {
			munmap(p, MAPPER_BYTES);
			p = mapper_map();
		}
	}
	printf("turns %ld\n", turns);
	return 0;
}

static int maps_read(long pid, long seconds)
{
	long end = now_us() + seconds * 1000000L, reads = 0, worst = 0, t;
	char path[64], buf[4096];
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	while ((t = now_us()) < end) {
		fd = open(path, O_RDONLY);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
		t = now_us() - t;
		if (t > worst)
			worst = t;
		reads++;
		usleep(1000);
	}
	printf("reads %ld worst_us %ld\n", reads, worst);
	return 0;
}

static int merge(long mib, long seconds)
{
	size_t len = (size_t)mib << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(p, 0x5a, len);
	if (madvise(p, len, MADV_MERGEABLE)) {
		perror("madvise");
		return 1;
	}
	printf("mergeable %ld MiB\n", mib);
	sleep(seconds);
	return 0;
}

/*
 * burst: when the reader gets the CPU after the sender's write() woke it.
 * Inside write() (kernel code preempted), its first read of the burst
 * gets a part; on the sender's way back to user space, all of it before
 * the sender has marked the write done; any later, all of it after.
 */
#define BURST_SPIN_US	20000
#define BURST_WARMUP_US	1000000

static int burst_fd[2];
static long burst_len;
static bool burst_batch;
static atomic_long burst_done;	/* bursts whose write() has returned */
static long nr_bursts, nr_inside, nr_return, nr_later;

static void *burst_reader(void *arg)
{
	long got = 0, seen = 0, start = now_us();
	char *buf = malloc(burst_len);
	struct sched_param zero = { 0 };
	bool counting = false;
	ssize_t n;

	if (!buf)
		return NULL;
	if (burst_batch && sched_setscheduler(0, SCHED_BATCH, &zero))
		perror("uleload: SCHED_BATCH");
	while ((n = read(burst_fd[1], buf, burst_len - got)) > 0) {
		if (!got && counting) {
			nr_bursts++;
			if (n < burst_len)
				nr_inside++;
			else if (atomic_load(&burst_done) <= seen)
				nr_return++;
			else
				nr_later++;
		}
		got += n;
		if (got < burst_len)
			continue;
		got = 0;
		seen++;
		/* Interactive, as ULE sees it, or batch past its start. */
		if (seen % 10 == 0)
			counting = burst_batch ? now_us() - start > BURST_WARMUP_US :
						 ule_interactive_now();
	}
	free(buf);
	return NULL;
}

static int burst(long kib, long seconds, bool batch)
{
	long end = now_us() + seconds * 1000000L, sent;
	int sndbuf = 4 * kib * 1024;
	pthread_t reader;
	char *buf;
	ssize_t n;

	burst_len = kib * 1024;
	burst_batch = batch;
	buf = calloc(1, burst_len);
	if (!buf || socketpair(AF_UNIX, SOCK_STREAM, 0, burst_fd)) {
		perror("uleload: socketpair");
		return 1;
	}
	/* Room for whole bursts: a full socket would block the sender. */
	if (setsockopt(burst_fd[0], SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)))
		perror("uleload: SO_SNDBUFFORCE");
	if (pthread_create(&reader, NULL, burst_reader, NULL))
		return 1;
	while (now_us() < end) {
		spin_until(now_us() + BURST_SPIN_US);
		for (sent = 0; sent < burst_len; sent += n) {
			n = write(burst_fd[0], buf + sent, burst_len - sent);
			if (n <= 0) {
				perror("uleload: write to the socket");
				return 1;
			}
		}
		atomic_fetch_add(&burst_done, 1);
	}
	shutdown(burst_fd[0], SHUT_WR);
	pthread_join(reader, NULL);
	printf("bursts %ld inside %ld return %ld later %ld\n", nr_bursts, nr_inside, nr_return,
	       nr_later);
	return 0;
}

/*
 * renice: a spinner that has been off its CPU longer than RENICE_GAP_US
 * notes when it got it back. Switches between the two come a slice
 * apart; a timer interrupt costs far less than the gap.
 */
#define RENICE_GAP_US 1000
#define RENICE_WAIT_US 2000000
#define RENICE_POLL_US 100
static atomic_long renice_stamp[2], renice_resumed[2];
static atomic_int renice_stop;
static pid_t renice_tid[2];

static void *renice_spinner(void *arg)
{
	long i = (long)arg, last = now_us(), t;

	renice_tid[i] = gettid();
	atomic_fetch_add(&started, 1);
	while (!atomic_load(&renice_stop)) {
		t = now_us();
		if (t - last > RENICE_GAP_US)
			atomic_store(&renice_resumed[i], t);
		atomic_store(&renice_stamp[i], t);
		last = t;
	}
	return NULL;
}

/* Spinner 0 got the CPU from spinner 1 a moment ago and holds it. */
static bool renice_first_just_ran(void)
{
	long t = now_us();

	return t - atomic_load(&renice_resumed[0]) < 2 * RENICE_GAP_US &&
	       t - atomic_load(&renice_stamp[0]) < RENICE_GAP_US / 2 &&
	       t - atomic_load(&renice_stamp[1]) > RENICE_GAP_US;
}

static int renice_wait(long cpu, long trials)
{
	long *waited = calloc(trials, sizeof(*waited)), n = 0, k, t0, end;
	pthread_t threads[2];

	if (!waited || cpu >= sysconf(_SC_NPROCESSORS_ONLN) || pin_to(0, cpu, true)) {
		fprintf(stderr, "uleload: renice needs CPU %ld and another one\n", cpu);
		free(waited);
		return 1;
	}
	for (k = 0; k < 2; k++)
		if (pthread_create(&threads[k], NULL, renice_spinner, (void *)k)) {
			perror("uleload: pthread_create");
			exit(1);
		}
	while (atomic_load(&started) < 2)
		sleep_for(1000);
	for (k = 0; k < 2; k++)
		if (pin_to(renice_tid[k], cpu, false))
			perror("uleload: sched_setaffinity");
	/* Both batch, on the CPU together. */
	sleep_for(1000000);
	for (k = 0; k < trials; k++) {
		if (setpriority(PRIO_PROCESS, renice_tid[0], 0))
			perror("uleload: setpriority 0");
		end = now_us() + RENICE_WAIT_US;
		while (!renice_first_just_ran() && now_us() < end)
			sleep_for(RENICE_POLL_US);
		if (!renice_first_just_ran())
			continue;
		t0 = now_us();
		if (setpriority(PRIO_PROCESS, renice_tid[0], 19))
			perror("uleload: setpriority 19");
		while (atomic_load(&renice_resumed[1]) < t0 && now_us() < t0 + RENICE_WAIT_US)
			sleep_for(RENICE_POLL_US);
		waited[n++] = atomic_load(&renice_resumed[1]) < t0 ? RENICE_WAIT_US :
				atomic_load(&renice_resumed[1]) - t0;
	}
	atomic_store(&renice_stop, 1);
	for (k = 0; k < 2; k++)
		pthread_join(threads[k], NULL);
	qsort(waited, n, sizeof(*waited), cmp_long);
	printf("renice trials %ld med_us %ld min_us %ld max_us %ld\n", n,
	       n ? waited[n / 2] : -1, n ? waited[0] : -1, n ? waited[n - 1] : -1);
	free(waited);
	return 0;
}

static long arg(char **argv, int i, long min)
{
	char *end;
	long v = strtol(argv[i], &end, 10);

	if (!*argv[i] || *end || v < min) {
		fprintf(stderr, "uleload: bad number '%s'\n", argv[i]);
		exit(2);
	}
	return v;
}

/* Affinity changes that leave the task where it is (see the usage above). */
static int flip(long pid, long cpu, long other, long seconds)
{
	long end = now_us() + seconds * 1000000L, flips = 0;
	cpu_set_t one, both;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	both = one;
	CPU_SET(other, &both);
	while (now_us() < end) {
		if (sched_setaffinity(pid, sizeof(one), &one) ||
		    sched_setaffinity(pid, sizeof(both), &both)) {
			perror("sched_setaffinity");
			return 1;
		}
		flips += 2;
	}
	printf("flips %ld\n", flips);
	return 0;
}

/* The CPU field (39) of /proc/PID/task/TID/stat, or -1 if it is gone. */
static int task_cpu_of(long pid, long tid)
{
	char path[64], buf[1024], *p;
	int fd, field, cpu = -1;
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/stat", pid, tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = 0;
	/* The command may hold spaces and parentheses: fields follow the last ')'. */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 39; field++)
		p = strchr(p + 1, ' ');
	if (p)
		cpu = atoi(p + 1);
	return cpu;
}

/*
 * The sampler of unpin_series.sh and smt_spread.sh: the shell's loop forked
 * a sleep and wrote a console line per sample, which with every vCPU
 * spinning took seconds of guest time each, and its children's exits and
 * execs woke kthreads beside the tasks it watched. Samples stay in memory
 * until the window ends. PID 0 signals nobody and watches processes: each
 * TID is then its own PID.
 */
/*
 * cpuwatch's samples for the host, one JSON object a line appended to the
 * file SCHED_TEST_METRICS names (nothing if unset or empty), as tap.sh's and
 * sched_test.h's metric() do: {"name": "spread", "t_cs": T, "cpus":
 * [CPU or null for a thread that is gone, ...]}.
 */
static void spread_metrics(const long *at, const int *cpus, long done, int n)
{
	FILE *f = metrics_open();
	long i;
	int j;

	if (!f)
		return;
	for (i = 0; i < done; i++) {
		fprintf(f, "{\"name\": \"spread\", \"t_cs\": %ld, \"cpus\": [", at[i]);
		for (j = 0; j < n; j++) {
			if (cpus[i * n + j] < 0)
				fprintf(f, "%snull", j ? ", " : "");
			else
				fprintf(f, "%s%d", j ? ", " : "", cpus[i * n + j]);
		}
		fprintf(f, "]}\n");
	}
	metrics_close(f);
}

static int cpuwatch(long pid, long step_ms, long window_ms, const long *tids, int n)
{
	long max = window_ms / step_ms + 2, done = 0, i, t0;
	struct timespec next;
	long *at = calloc(max, sizeof(*at));
	int *cpus = calloc(max * n, sizeof(*cpus));

	if (!at || !cpus) {
		free(at);
		free(cpus);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	t0 = now_us();
	if (pid && kill(pid, SIGUSR1)) {
		perror("uleload: kill");
		return 1;
	}
	while (done < max) {
		next.tv_nsec += step_ms % 1000 * 1000000;
		next.tv_sec += step_ms / 1000 + next.tv_nsec / 1000000000;
		next.tv_nsec %= 1000000000;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		at[done] = (now_us() - t0) / 10000;
		for (i = 0; i < n; i++)
			cpus[done * n + i] = task_cpu_of(pid ? pid : tids[i], tids[i]);
		if (at[done++] * 10 >= window_ms)
			break;
	}
	for (i = 0; i < done; i++) {
		int j;

		printf("# spread %ld", at[i]);
		for (j = 0; j < n; j++) {
			if (cpus[i * n + j] < 0)
				printf(" -");
			else
				printf(" %d", cpus[i * n + j]);
		}
		printf("\n");
	}
	spread_metrics(at, cpus, done, n);
	free(at);
	free(cpus);
	return 0;
}

static int print_usage(void)
{
	fprintf(stderr, "usage: uleload sleeper RUN_US SLEEP_US SECONDS | spinner SECONDS |\n"
			"       yielder SECONDS | yieldsleeper RUN_US SLEEP_US SECONDS |\n"
			"       turn RUN_US SLEEP_US S1 S2 | frames FPS WORK_US SECONDS |\n"
			"       pool N RUN_US SLEEP_US SECONDS | spinners N SECONDS |\n"
			"       orphans N SECONDS | forker SECONDS | spawn N |\n"
			"       pi [WAITER_NICE] | write FILE VALUE | mapper SECONDS |\n"
			"       mapsread PID SECONDS | merge MIB SECONDS |\n"
			"       burst KIB SECONDS [batch] | renice CPU TRIALS |\n"
			"       flip PID CPU OTHER SECONDS |\n"
			"       cpuwatch PID STEP_MS WINDOW_MS TID...\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "write") && argc == 4)
		return write_value(argv[2], argv[3]);
	if (!strcmp(cmd, "pi") && (argc == 2 || argc == 3)) {
		if (argc == 3) {
			pi_nice = arg(argv, 2, -20);
			pi_nice_set = 1;
		}
		return pi();
	}
	if (!strcmp(cmd, "frames") && argc == 5)
		return frame_task(arg(argv, 2, 1), arg(argv, 3, 1), arg(argv, 4, 1));
	if (!strcmp(cmd, "spinners") && argc == 4)
		return spinners(arg(argv, 2, 1), arg(argv, 3, 1));
	if (!strcmp(cmd, "orphans") && argc == 4)
		return orphans(arg(argv, 2, 1), arg(argv, 3, 1));
	if (!strcmp(cmd, "forker") && argc == 3)
		return forker(arg(argv, 2, 1));
	if (!strcmp(cmd, "spawn") && argc == 3)
		return spawn(arg(argv, 2, 1));
	if (!strcmp(cmd, "cpuwatch") && argc >= 6) {
		long *tids = calloc(argc - 5, sizeof(*tids));
		int i;

		if (!tids)
			return 1;
		for (i = 5; i < argc; i++)
			tids[i - 5] = arg(argv, i, 1);
		err = cpuwatch(arg(argv, 2, 0), arg(argv, 3, 1), arg(argv, 4, 1),
			       tids, argc - 5);
		free(tids);
		return err;
	}
	if (!strcmp(cmd, "mapper") && argc == 3)
		return mapper(arg(argv, 2, 1));
	if (!strcmp(cmd, "mapsread") && argc == 4)
		return maps_read(arg(argv, 2, 1), arg(argv, 3, 1));
	if (!strcmp(cmd, "merge") && argc == 4)
		return merge(arg(argv, 2, 1), arg(argv, 3, 1));
	if (!strcmp(cmd, "burst") && (argc == 4 || (argc == 5 && !strcmp(argv[4], "batch"))))
		return burst(arg(argv, 2, 1), arg(argv, 3, 1), argc == 5);
	if (!strcmp(cmd, "flip") && argc == 6)
		return flip(arg(argv, 2, 1), arg(argv, 3, 0), arg(argv, 4, 0), arg(argv, 5, 1));
	if (!strcmp(cmd, "renice") && argc == 4)
		return renice_wait(arg(argv, 2, 0), arg(argv, 3, 1));
	if (!strcmp(cmd, "spinner") && argc == 3) {
		spin_until(now_us() + arg(argv, 2, 1) * 1000000L);
		err = 0;
	} else if (!strcmp(cmd, "yielder") && argc == 3) {
		long end = now_us() + arg(argv, 2, 1) * 1000000L;

		while (now_us() < end)
			sched_yield();
		err = 0;
	} else if ((!strcmp(cmd, "sleeper") || !strcmp(cmd, "yieldsleeper")) && argc == 5) {
		yield_runs = cmd[0] == 'y';
		run_us = arg(argv, 2, 1);
		sleep_us = arg(argv, 3, 1);
		atomic_store(&end_us, now_us() + arg(argv, 4, 1) * 1000000L);
		late = calloc(MAX_LATE, sizeof(*late));
		signal(SIGUSR1, on_usr1);
		sleeper_loop();
		err = 0;
	} else if (!strcmp(cmd, "turn") && argc == 6) {
		run_us = arg(argv, 2, 1);
		sleep_us = arg(argv, 3, 1);
		atomic_store(&end_us, now_us() + arg(argv, 4, 1) * 1000000L);
		sleeper_loop();
		printf("spinning loops %ld\n", atomic_load(&total_loops));
		spin_until(now_us() + arg(argv, 5, 1) * 1000000L);
		err = 0;
	} else if (!strcmp(cmd, "pool") && argc == 6) {
		run_us = arg(argv, 3, 1);
		sleep_us = arg(argv, 4, 1);
		err = pool(arg(argv, 2, 1), arg(argv, 5, 1));
	} else {
		return print_usage();
	}
	printf("loops %ld cpu_ms %ld\n", atomic_load(&total_loops), cpu_ms());
	return err;
}
