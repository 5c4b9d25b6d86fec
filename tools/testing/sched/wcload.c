// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads of the "wasted cores" scenarios (Documentation/scheduler/
 * sched-wasted-cores.rst), deterministic for a given seed so that fix-off
 * and fix-on runs do the same work:
 *
 *   wcload job  THREADS UNITS SEED   build-like job: THREADS threads take
 *                                    UNITS work units from a shared counter;
 *                                    a unit spins 0.5-1.5 ms of work and then
 *                                    sleeps 0-400 us (files, pipes)
 *   wcload pool THREADS ROUNDS SEED  worker pool: every round each thread
 *                                    spins ~1 ms then waits at a barrier;
 *                                    every 5 ms a transient thread spins
 *                                    ~0.3 ms and exits
 *   wcload hog  SECONDS              one CPU-bound thread (an "R process")
 *   wcload spread THREADS SECONDS    THREADS spinners; prints the CPU each
 *                                    ends on, one per line
 *   wcload calibrate                 prints loop iterations per microsecond
 *
 * job and pool print "elapsed_ms N". Work is counted in loop iterations,
 * WCLOAD_IPU per microsecond (else calibrated at start): pass the same value
 * to runs that must do the same work, so a smaller CPU share shows up as a
 * longer run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long iters_per_us;
static unsigned int seed;
static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void spin(unsigned long iters)
{
	unsigned long i, x = 0;

	for (i = 0; i < iters; i++)
		x += i ^ (x >> 3);
	sink = x;
}

static void spin_us(unsigned long us)
{
	spin(us * iters_per_us);
}

/* Iterations per microsecond on this CPU, from the best of a few tries. */
static void calibrate(void)
{
	unsigned long n = 1UL << 20, best = 0;
	int i;

	for (i = 0; i < 5; i++) {
		double t = now_ms();

		spin(n);
		t = (now_ms() - t) * 1e3;
		if (t > 0 && n / t > best)
			best = n / t;
	}
	iters_per_us = best ? best : 1;
}

/* The work of unit @i: the same for a given seed whatever thread takes it. */
static unsigned int unit_rand(unsigned long i, unsigned int salt)
{
	unsigned int x = (unsigned int)i * 2654435761u ^ seed ^ salt;

	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	return x;
}

static void sleep_us(unsigned long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static atomic_long next_unit;
static long nr_units;

static void *job_thread(void *arg)
{
	long i;

	while ((i = atomic_fetch_add(&next_unit, 1)) < nr_units) {
		spin_us(500 + unit_rand(i, 1) % 1000);
		sleep_us(unit_rand(i, 2) % 400);
	}
	return NULL;
}

static pthread_barrier_t barrier;
static long nr_rounds;
static atomic_int pool_done;

static void *pool_thread(void *arg)
{
	long r, id = (long)arg;

	for (r = 0; r < nr_rounds; r++) {
		spin_us(800 + unit_rand(r * 131 + id, 3) % 400);
		pthread_barrier_wait(&barrier);
	}
	return NULL;
}

static void *transient_thread(void *arg)
{
	spin_us(300);
	return NULL;
}

static void *spawner_thread(void *arg)
{
	pthread_t t;

	while (!atomic_load(&pool_done)) {
		if (!pthread_create(&t, NULL, transient_thread, NULL))
			pthread_detach(t);
		sleep_us(5000);
	}
	return NULL;
}

static int run_threads(long n, void *(*fn)(void *))
{
	pthread_t *tid = calloc(n, sizeof(*tid));
	long i;

	if (!tid)
		return -1;
	for (i = 0; i < n; i++)
		if (pthread_create(&tid[i], NULL, fn, (void *)i))
			return -1;
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	return 0;
}

static double spread_end_ms;

static void *spread_thread(void *arg)
{
	double end = spread_end_ms;

	while (now_ms() < end)
		spin(10000);
	printf("%d\n", sched_getcpu());
	return NULL;
}

static long arg(char **argv, int i)
{
	char *end;
	long v = strtol(argv[i], &end, 10);

	if (*end || v <= 0) {
		fprintf(stderr, "wcload: bad number '%s'\n", argv[i]);
		exit(2);
	}
	return v;
}

static int usage(void)
{
	fprintf(stderr, "usage: wcload job THREADS UNITS SEED | pool THREADS ROUNDS SEED |\n"
			"       hog SECONDS | spread THREADS SECONDS | calibrate\n");
	return 2;
}

int main(int argc, char **argv)
{
	double t0;
	int err;

	if (argc < 2)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("WCLOAD_IPU"))
		iters_per_us = strtoul(getenv("WCLOAD_IPU"), NULL, 10);
	if (!iters_per_us)
		calibrate();
	if (!strcmp(argv[1], "calibrate") && argc == 2) {
		printf("%lu\n", iters_per_us);
		return 0;
	}
	if (argc < 3)
		return usage();

	if (!strcmp(argv[1], "hog") && argc == 3) {
		double end = now_ms() + arg(argv, 2) * 1e3;

		while (now_ms() < end)
			spin(100000);
		return 0;
	}
	if (!strcmp(argv[1], "spread") && argc == 4) {
		spread_end_ms = now_ms() + arg(argv, 3) * 1e3;
		if (run_threads(arg(argv, 2), spread_thread)) {
			perror("wcload: pthread_create");
			return 1;
		}
		return 0;
	}
	if (argc != 5)
		return usage();
	seed = arg(argv, 4);
	t0 = now_ms();
	if (!strcmp(argv[1], "job")) {
		nr_units = arg(argv, 3);
		err = run_threads(arg(argv, 2), job_thread);
	} else if (!strcmp(argv[1], "pool")) {
		pthread_t spawner;

		nr_rounds = arg(argv, 3);
		if (pthread_barrier_init(&barrier, NULL, arg(argv, 2)))
			return 1;
		if (pthread_create(&spawner, NULL, spawner_thread, NULL))
			return 1;
		err = run_threads(arg(argv, 2), pool_thread);
		atomic_store(&pool_done, 1);
		pthread_join(spawner, NULL);
	} else {
		return usage();
	}
	if (err) {
		perror("wcload: pthread_create");
		return 1;
	}
	printf("elapsed_ms %.1f\n", now_ms() - t0);
	return 0;
}
