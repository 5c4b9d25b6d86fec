// SPDX-License-Identifier: GPL-2.0
/*
 * A barrier-synchronised HPC kernel in the spirit of NAS MG: one thread per
 * CPU, each relaxing its slab of a shared grid, all meeting at a barrier at
 * the end of every iteration. The run is as slow as the slowest thread at
 * each barrier, so a single badly placed thread (two sharing a CPU while
 * another CPU idles) shows in the completion time ("The Linux Scheduler: a
 * Decade of Wasted Cores"; "Battle of the Schedulers", §6.3).
 *
 *   stencil THREADS ITERATIONS CELLS_PER_THREAD
 *
 * THREADS threads (1..1024, not pinned: the scheduler places them) run
 * ITERATIONS (1..10000000) Jacobi sweeps over a 1-D grid of THREADS *
 * CELLS_PER_THREAD (1..16777216, at most 134217728 in all) doubles with
 * fixed ends: new[i] = 0.25 * (old[i - 1] + old[i + 1]) + 0.5 * old[i].
 * Thread t owns cells [t * CELLS_PER_THREAD, (t + 1) * CELLS_PER_THREAD)
 * and reads one halo cell of each neighbour. Old and new grids swap roles
 * every iteration, so one pthread_barrier_wait() per iteration is all it
 * takes: every thread has finished reading a grid before anyone overwrites
 * it.
 *
 * Prints one line when done (and with SCHED_TEST_METRICS set appends the
 * same as a JSON object to that file):
 *
 *   stencil threads T iterations I cells C elapsed_ms X wait_pct W checksum S
 *
 * C is CELLS_PER_THREAD. X is the wall time of the iteration loop (from
 * the first thread starting its first sweep to the last leaving the last
 * barrier), 3 decimals. W is the mean over the threads of the share of X
 * each spent in pthread_barrier_wait() (monotonic clock around the call),
 * in per cent, 1 decimal: how long threads wait for the slowest one,
 * including the time it takes to wake them. S (%.6e) is a weighted sum of
 * the final grid, computed by one thread after the run. The initial grid
 * depends only on the cell's index and every cell is updated by the same
 * arithmetic whichever thread owns it, so S depends only on ITERATIONS and
 * the total size THREADS * CELLS_PER_THREAD: "stencil 2 I 2C" and
 * "stencil 4 I C" print the same S, whatever the timing.
 *
 * Sizing: CELLS_PER_THREAD 32768 keeps a thread's two slabs (512 KiB) in
 * a mid-size L2 cache. A sweep of that (scalar code: gcc -O2 does not
 * vectorise it) takes about 32 us on a 2020s x86 core, so "stencil NCPUS
 * 50000 32768" is some 1.6 s of computing per thread, plus the barrier
 * waits: the smaller the slab, the larger their share. A guest under TCG
 * needs one to two orders of magnitude fewer iterations. Bad arguments
 * print a usage line and exit with status 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics.h"

#define MAX_THREADS		1024
#define MAX_ITERATIONS		10000000L
#define MAX_CELLS_PER_THREAD	16777216L	/* 128 MiB a grid */
#define MAX_CELLS		134217728L	/* 1 GiB a grid */
#define CACHE_LINE		64

/* Fixed values of the grid's end points (the halo of the outer slabs). */
#define LEFT_END		1.0
#define RIGHT_END		-1.0

static const char usage_line[] =
	"usage: stencil THREADS ITERATIONS CELLS_PER_THREAD (THREADS 1..1024)\n";

/* Written once a run, so sharing cache lines costs nothing. */
struct thread_info {
	pthread_t tid;
	long first, last;	/* grid indices owned: [first, last) */
	double start_ns, end_ns, wait_ns;
};

static struct thread_info *threads;
static pthread_barrier_t barrier;
static double *grid[2];		/* cells 1..nr_cells; 0 and nr_cells + 1: ends */
static long nr_cells, nr_iterations;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Initial value of cell @i in [0, 1): a hash of its index alone. */
static double initial_value(long i)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ULL;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;
	return (double)(x >> 11) / (double)(1ULL << 53);
}

static void sweep(const double *src, double *dst, long first, long last)
{
	long i;

	for (i = first; i < last; i++)
		dst[i] = 0.25 * (src[i - 1] + src[i + 1]) + 0.5 * src[i];
}

static void *stencil_thread(void *arg)
{
	struct thread_info *ti = arg;
	double wait_ns = 0, t;
	long i, it;

	/* First touch by the owner: its slabs land on its node. */
	for (i = ti->first; i < ti->last; i++) {
		grid[0][i] = initial_value(i);
		grid[1][i] = 0;
	}
	pthread_barrier_wait(&barrier);
	ti->start_ns = now_ns();
	for (it = 0; it < nr_iterations; it++) {
		sweep(grid[it & 1], grid[!(it & 1)], ti->first, ti->last);
		t = now_ns();
		pthread_barrier_wait(&barrier);
		wait_ns += now_ns() - t;
	}
	ti->end_ns = now_ns();
	ti->wait_ns = wait_ns;
	return NULL;
}

/* An integer in [1, max], or exit 2 naming the argument. */
static long parse_arg(const char *name, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < 1 || v > max) {
		fprintf(stderr, "stencil: %s must be an integer in 1..%ld, not '%s'\n",
			name, max, s);
		fputs(usage_line, stderr);
		exit(2);
	}
	return v;
}

/* Cells weighted 1..16 by index, so a misplaced value changes the sum. */
static double checksum(const double *g)
{
	double sum = 0;
	long i;

	for (i = 1; i <= nr_cells; i++)
		sum += g[i] * (double)(1 + (i & 15));
	return sum;
}

static double *alloc_grid(void)
{
	size_t size = (nr_cells + 2) * sizeof(double);
	double *g;

	size = (size + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
	g = aligned_alloc(CACHE_LINE, size);
	if (!g)
		return NULL;
	g[0] = LEFT_END;
	g[nr_cells + 1] = RIGHT_END;
	return g;
}

/*
 * The result for the host too, one JSON object appended to the file
 * SCHED_TEST_METRICS names (nothing if unset or empty); the checksum as
 * the string printed, which runs compare.
 */
static void metrics_line(long nr_threads, long per_thread, double elapsed_ms, double wait_pct,
			 double sum)
{
	FILE *f = metrics_open();

	if (!f)
		return;
	fprintf(f, "{\"name\": \"stencil\", \"threads\": %ld, \"iterations\": %ld",
		nr_threads, nr_iterations);
	fprintf(f, ", \"cells\": %ld, \"elapsed_ms\": %.3f, \"wait_pct\": %.1f",
		per_thread, elapsed_ms, wait_pct);
	fprintf(f, ", \"checksum\": \"%.6e\"}\n", sum);
	metrics_close(f);
}

int main(int argc, char **argv)
{
	double start = 0, end = 0, wait_pct = 0, elapsed, sum;
	long nr_threads, per_thread, t;
	int err;

	if (argc != 4) {
		fputs(usage_line, stderr);
		return 2;
	}
	nr_threads = parse_arg("THREADS", argv[1], MAX_THREADS);
	nr_iterations = parse_arg("ITERATIONS", argv[2], MAX_ITERATIONS);
	per_thread = parse_arg("CELLS_PER_THREAD", argv[3], MAX_CELLS_PER_THREAD);
	if (nr_threads * per_thread > MAX_CELLS) {
		fprintf(stderr, "stencil: THREADS * CELLS_PER_THREAD must be at most %ld\n",
			MAX_CELLS);
		fputs(usage_line, stderr);
		return 2;
	}
	nr_cells = nr_threads * per_thread;

	grid[0] = alloc_grid();
	grid[1] = alloc_grid();
	threads = calloc(nr_threads, sizeof(*threads));
	if (!grid[0] || !grid[1] || !threads) {
		fprintf(stderr, "stencil: out of memory for %ld cells\n", nr_cells);
		return 1;
	}
	err = pthread_barrier_init(&barrier, NULL, nr_threads);
	if (err) {
		fprintf(stderr, "stencil: pthread_barrier_init: %s\n", strerror(err));
		return 1;
	}
	for (t = 0; t < nr_threads; t++) {
		threads[t].first = 1 + t * per_thread;
		threads[t].last = 1 + (t + 1) * per_thread;
		err = pthread_create(&threads[t].tid, NULL, stencil_thread, &threads[t]);
		if (err) {
			fprintf(stderr, "stencil: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (t = 0; t < nr_threads; t++)
		pthread_join(threads[t].tid, NULL);

	for (t = 0; t < nr_threads; t++) {
		if (!t || threads[t].start_ns < start)
			start = threads[t].start_ns;
		if (!t || threads[t].end_ns > end)
			end = threads[t].end_ns;
	}
	elapsed = end - start;
	for (t = 0; t < nr_threads && elapsed > 0; t++)
		wait_pct += 100.0 * threads[t].wait_ns / elapsed;
	wait_pct /= nr_threads;

	sum = checksum(grid[nr_iterations & 1]);
	printf("stencil threads %ld iterations %ld cells %ld", nr_threads, nr_iterations,
	       per_thread);
	printf(" elapsed_ms %.3f wait_pct %.1f checksum %.6e\n", elapsed / 1e6, wait_pct, sum);
	metrics_line(nr_threads, per_thread, elapsed / 1e6, wait_pct, sum);
	return 0;
}
