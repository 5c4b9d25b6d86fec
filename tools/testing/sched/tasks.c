// SPDX-License-Identifier: GPL-2.0
/*
 * Many tasks for the class-switch tests (switch_storm.c,
 * switch_irqsoff.sh). Prints "ready N" once they exist, then waits until it
 * is killed or its stdin closes.
 *
 *   tasks zombies N SPIN_MS  N children that each spin SPIN_MS ms of CPU and
 *                            exit; none is reaped while this process lives
 *   tasks threads N          N threads that sleep
 *   tasks spinners N         N threads that spin once all are made (just
 *                            after "ready"), with this process's policy,
 *                            nice and affinity (sched_watchdog.sh,
 *                            walk_irqsoff.sh, fallback_time.sh)
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin(double seconds)
{
	double end = cpu_seconds() + seconds;

	while (cpu_seconds() < end)
		;
}

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

/*
 * Spinners start together, so that making thousands is not a race with
 * them. A barrier, not a condition variable: after a broadcast thousands
 * of waiters would take its mutex one after another, each waiting for a
 * turn on a CPU full of spinners (ULE took minutes for 10,000).
 */
static pthread_barrier_t gate;

static void *spinner(void *arg)
{
	pthread_barrier_wait(&gate);
	for (;;)
		;
	return NULL;
}

static void wait_for_end(void)
{
	char buf[64];

	/* EOF on stdin or a signal ends us. */
	while (read(0, buf, sizeof(buf)) > 0)
		;
	pause();
}

int main(int argc, char **argv)
{
	long i, n;

	if (argc < 3) {
		fprintf(stderr, "usage: %s zombies N SPIN_MS | threads N | spinners N\n", argv[0]);
		return 2;
	}
	n = atol(argv[2]);
	if (n < 0 || n >= INT_MAX) {
		fprintf(stderr, "%s: N must be 0 to %d\n", argv[0], INT_MAX - 1);
		return 2;
	}
	/* Only spinners wait at the gate; for the rest it opens at once. */
	pthread_barrier_init(&gate, NULL, strcmp(argv[1], "spinners") ? 1 : n + 1);
	if (!strcmp(argv[1], "zombies") && argc == 4) {
		double spin_s = atol(argv[3]) / 1000.0;

		for (i = 0; i < n; i++) {
			pid_t pid = fork();

			if (pid < 0) {
				perror("fork");
				return 1;
			}
			if (!pid) {
				spin(spin_s);
				_exit(0);
			}
		}
	} else if (!strcmp(argv[1], "threads") || !strcmp(argv[1], "spinners")) {
		void *(*fn)(void *) = argv[1][0] == 't' ? sleeper : spinner;
		pthread_attr_t attr;
		pthread_t t;
		int err;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		for (i = 0; i < n; i++) {
			err = pthread_create(&t, &attr, fn, NULL);
			if (err) {
				fprintf(stderr, "pthread_create %ld: %s\n", i, strerror(err));
				return 1;
			}
		}
	} else {
		fprintf(stderr, "unknown mode %s\n", argv[1]);
		return 2;
	}
	/*
	 * Said before the gate opens: under ULE this thread, which ran all
	 * along, waits behind the spinners that slept until now.
	 */
	printf("ready %ld\n", n);
	fflush(stdout);
	pthread_barrier_wait(&gate);
	wait_for_end();
	return 0;
}
