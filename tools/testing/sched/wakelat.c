// SPDX-License-Identifier: GPL-2.0
/*
 * Wakeup latency of message passing, in the spirit of schbench: how long a
 * blocked thread that is sent a message takes to get a CPU.
 *
 *   wakelat MESSAGE_THREADS WORKERS_PER_MESSAGE SECONDS [WORK_US [INTERVAL_US]]
 *
 * Each of MESSAGE_THREADS (1..1024) message threads owns
 * WORKERS_PER_MESSAGE (1..1024; at most 4096 workers in all) worker
 * threads. For SECONDS (1..3600) a message thread picks its workers in
 * turn: it stores the monotonic time in the worker's slot, hands the
 * worker the message (a futex word) and FUTEX_WAKEs it, then sleeps
 * INTERVAL_US (0..1000000, default 1000; clock_nanosleep) before the
 * next message. A worker blocks in FUTEX_WAIT; woken, it takes the time
 * now minus the stored time as one latency sample, spins WORK_US
 * (0..1000000, default 100) of wall time (its think time) and waits again.
 *
 * A message that finds its worker not waiting (still thinking, or not yet
 * run since the previous message, whose latency is still to come) is not
 * delivered: it is counted as "busy" and neither queued nor sampled, so
 * no wakeup is lost or counted twice and samples + busy is the number of
 * messages sent. A worker that has announced it is about to wait but is
 * not in the kernel yet counts as waiting: it finds the message without
 * sleeping, a sample of about nothing.
 *
 * Prints one line at the end (split here):
 *
 *   wakelat messages M workers W seconds S samples N
 *           p50_us A p90_us B p99_us C p999_us D max_us E busy K
 *
 * M, W and S are the arguments, N the number of latency samples, A..D the
 * 50th, 90th, 99th and 99.9th percentiles and E the largest sample, whole
 * microseconds (truncated), K the busy messages; with SCHED_TEST_METRICS
 * set, the same as a JSON line appended to that file. The percentiles are
 * nearest-rank: the P-th is the smallest sample that at least P per cent
 * of the N samples do not exceed (the ceil(P * N / 100)-th smallest). Each
 * worker keeps its own histogram, merged at the end: 1 us buckets below
 * 10 ms, then 100 us buckets to 100 ms, 1 ms to 1 s, 10 ms to 10 s, and
 * one bucket above. A percentile in a coarse bucket is reported as the
 * bucket's upper end (never above E), so it may be too high by less than
 * a bucket, never too low.
 *
 * Bad arguments print a usage line and exit with status 2; a run without
 * a single sample (none of the messages found its worker waiting) prints
 * why on stderr and exits with status 1.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"

#define MAX_MESSAGE_THREADS	1024
#define MAX_WORKERS_PER_MESSAGE	1024
#define MAX_WORKERS		4096
#define MAX_SECONDS		3600
#define MAX_US_ARG		1000000
#define DEFAULT_WORK_US		100
#define DEFAULT_INTERVAL_US	1000
#define THREAD_STACK		(256 * 1024)
#define CACHE_LINE		64
#define NSEC_PER_USEC		1000L
#define NSEC_PER_SEC		1000000000L

/* States of a worker's futex word. */
enum {
	W_RUNNING,	/* thinking, or not started */
	W_WAITING,	/* waiting for a message: the only state one is sent in */
	W_POSTED,	/* a message is waiting for the worker */
	W_STOPPED,	/* the run is over */
};

/*
 * Histogram tiers: below end_us, buckets of width_us. Samples from the
 * last end_us on share one more bucket.
 */
static const struct tier {
	long end_us, width_us;
} tiers[] = {
	{ 10000, 1 },
	{ 100000, 100 },
	{ 1000000, 1000 },
	{ 10000000, 10000 },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NR_TIERS	ARRAY_SIZE(tiers)

struct worker {
	atomic_uint state;	/* the futex word */
	atomic_long stamp_ns;	/* when the message was sent */
	unsigned int *hist;	/* nr_buckets counters, this worker's only */
	long samples, max_ns;
	pthread_t tid;
};

static_assert(sizeof(struct worker) <= CACHE_LINE, "a worker fits a cache line");

struct messenger {
	struct worker **workers;	/* its WORKERS_PER_MESSAGE */
	long busy;
	pthread_t tid;
};

static const char usage_line[] =
	"usage: wakelat MESSAGE_THREADS WORKERS_PER_MESSAGE SECONDS [WORK_US [INTERVAL_US]]\n";

static long nr_messengers, nr_per_messenger, nr_workers, seconds;
static long work_us = DEFAULT_WORK_US, interval_us = DEFAULT_INTERVAL_US;
static long nr_buckets;
static long deadline_ns;
static atomic_int stopping;
static pthread_barrier_t start_gate;
static atomic_ulong sink;

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_us(long us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = us % 1000000 * NSEC_PER_USEC,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* Keep a CPU busy for @us of wall time. */
static void spin_us(long us)
{
	long end = now_ns() + us * NSEC_PER_USEC;
	unsigned long i, x = 0;

	while (now_ns() < end)
		for (i = 0; i < 100; i++)
			x += i ^ (x >> 3);
	atomic_store_explicit(&sink, x, memory_order_relaxed);
}

static void futex_wait(atomic_uint *word, unsigned int val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(atomic_uint *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static long bucket_of(long us)
{
	long start = 0, base = 0;
	unsigned int i;

	for (i = 0; i < NR_TIERS; i++) {
		if (us < tiers[i].end_us)
			return base + (us - start) / tiers[i].width_us;
		base += (tiers[i].end_us - start) / tiers[i].width_us;
		start = tiers[i].end_us;
	}
	return base;
}

/* The largest whole microsecond in bucket @b; -1 for the open last one. */
static long bucket_top_us(long b)
{
	long start = 0, n;
	unsigned int i;

	for (i = 0; i < NR_TIERS; i++) {
		n = (tiers[i].end_us - start) / tiers[i].width_us;
		if (b < n)
			return start + (b + 1) * tiers[i].width_us - 1;
		b -= n;
		start = tiers[i].end_us;
	}
	return -1;
}

static void record(struct worker *w, long lat_ns)
{
	if (lat_ns < 0)
		lat_ns = 0;
	w->hist[bucket_of(lat_ns / NSEC_PER_USEC)]++;
	w->samples++;
	if (lat_ns > w->max_ns)
		w->max_ns = lat_ns;
}

static void *worker_thread(void *arg)
{
	struct worker *w = arg;
	unsigned int state;

	for (;;) {
		/* Sequentially consistent: pairs with stop_workers(). */
		atomic_store(&w->state, W_WAITING);
		if (atomic_load(&stopping))
			break;
		while ((state = atomic_load_explicit(&w->state, memory_order_acquire)) ==
		       W_WAITING)
			futex_wait(&w->state, W_WAITING);
		if (state == W_STOPPED)
			break;
		record(w, now_ns() - atomic_load_explicit(&w->stamp_ns, memory_order_relaxed));
		atomic_store_explicit(&w->state, W_RUNNING, memory_order_relaxed);
		spin_us(work_us);
	}
	return NULL;
}

static void *messenger_thread(void *arg)
{
	struct messenger *m = arg;
	struct worker *w;
	long next = 0;

	pthread_barrier_wait(&start_gate);
	while (now_ns() < deadline_ns) {
		w = m->workers[next];
		next = (next + 1) % nr_per_messenger;
		/* Only this thread moves the worker on from W_WAITING. */
		if (atomic_load_explicit(&w->state, memory_order_acquire) == W_WAITING) {
			atomic_store_explicit(&w->stamp_ns, now_ns(), memory_order_relaxed);
			atomic_store_explicit(&w->state, W_POSTED, memory_order_release);
			futex_wake(&w->state);
		} else {
			m->busy++;
		}
		sleep_us(interval_us);
	}
	return NULL;
}

/*
 * Once no message can come any more. A worker either still sees
 * W_WAITING here (then it is stopped and woken) or, storing W_WAITING
 * after this, sees stopping set.
 */
static void stop_workers(struct worker **workers)
{
	unsigned int waiting;
	long i;

	atomic_store(&stopping, 1);
	for (i = 0; i < nr_workers; i++) {
		waiting = W_WAITING;
		if (atomic_compare_exchange_strong(&workers[i]->state, &waiting, W_STOPPED))
			futex_wake(&workers[i]->state);
	}
}

/* An integer in [min, max], or exit 2 naming the argument. */
static long parse_arg(const char *name, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < min || v > max) {
		fprintf(stderr, "wakelat: %s must be an integer in %ld..%ld, not '%s'\n",
			name, min, max, s);
		fputs(usage_line, stderr);
		exit(2);
	}
	return v;
}

static void parse_args(int argc, char **argv)
{
	if (argc < 4 || argc > 6) {
		fputs(usage_line, stderr);
		exit(2);
	}
	nr_messengers = parse_arg("MESSAGE_THREADS", argv[1], 1, MAX_MESSAGE_THREADS);
	nr_per_messenger = parse_arg("WORKERS_PER_MESSAGE", argv[2], 1,
				     MAX_WORKERS_PER_MESSAGE);
	seconds = parse_arg("SECONDS", argv[3], 1, MAX_SECONDS);
	if (argc > 4)
		work_us = parse_arg("WORK_US", argv[4], 0, MAX_US_ARG);
	if (argc > 5)
		interval_us = parse_arg("INTERVAL_US", argv[5], 0, MAX_US_ARG);
	nr_workers = nr_messengers * nr_per_messenger;
	if (nr_workers > MAX_WORKERS) {
		fprintf(stderr, "wakelat: MESSAGE_THREADS * WORKERS_PER_MESSAGE %s %d\n",
			"must be at most", MAX_WORKERS);
		fputs(usage_line, stderr);
		exit(2);
	}
}

/* The @permille-th per mille of @total samples in @hist, nearest rank. */
static long percentile_us(const unsigned long *hist, unsigned long total, long permille,
			  long max_us)
{
	unsigned long rank = (total * permille + 999) / 1000, seen = 0;
	long b, top;

	for (b = 0; b < nr_buckets; b++) {
		seen += hist[b];
		if (seen >= rank)
			break;
	}
	top = bucket_top_us(b);
	return top < 0 || top > max_us ? max_us : top;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "wakelat: %s: %s\n", what, strerror(err));
	return 1;
}

/*
 * The summary for the host too, one JSON object appended to the file
 * SCHED_TEST_METRICS names (nothing if unset or empty), as tap.sh's
 * metric() writes for the scripts.
 */
static void metrics_line(unsigned long samples, const long *pct, long max_us, long busy)
{
	FILE *f = metrics_open();

	if (!f)
		return;
	fprintf(f, "{\"name\": \"wakelat\", \"samples\": %lu", samples);
	fprintf(f, ", \"p50_us\": %ld, \"p90_us\": %ld", pct[0], pct[1]);
	fprintf(f, ", \"p99_us\": %ld, \"p999_us\": %ld", pct[2], pct[3]);
	fprintf(f, ", \"max_us\": %ld, \"busy\": %ld}\n", max_us, busy);
	metrics_close(f);
}

int main(int argc, char **argv)
{
	struct messenger *messengers;
	struct worker **workers;
	static const long permille[] = { 500, 900, 990, 999 };
	long i, b, stride, max_ns = 0, max_us, busy = 0, pct[ARRAY_SIZE(permille)];
	unsigned long *hist, samples = 0;
	unsigned int *counters;
	pthread_attr_t attr;
	int err;

	parse_args(argc, argv);
	nr_buckets = bucket_of(tiers[NR_TIERS - 1].end_us) + 1;
	/* Whole cache lines a histogram, so no two workers share one. */
	stride = (nr_buckets * sizeof(*counters) + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE /
		 sizeof(*counters);

	messengers = calloc(nr_messengers, sizeof(*messengers));
	workers = calloc(nr_workers, sizeof(*workers));
	/* Large enough to be mapped fresh: only pages that count are touched. */
	counters = calloc(nr_workers * stride, sizeof(*counters));
	hist = calloc(nr_buckets, sizeof(*hist));
	if (!messengers || !workers || !counters || !hist)
		return die("calloc", ENOMEM);
	err = pthread_attr_init(&attr);
	if (!err)
		err = pthread_attr_setstacksize(&attr, THREAD_STACK);
	if (err)
		return die("pthread_attr", err);
	err = pthread_barrier_init(&start_gate, NULL, nr_messengers + 1);
	if (err)
		return die("pthread_barrier_init", err);

	for (i = 0; i < nr_workers; i++) {
		/* Its own cache line: a worker's futex word is its hottest data. */
		workers[i] = aligned_alloc(CACHE_LINE, CACHE_LINE);
		if (!workers[i])
			return die("aligned_alloc", ENOMEM);
		memset(workers[i], 0, sizeof(*workers[i]));
		atomic_init(&workers[i]->state, W_RUNNING);
		workers[i]->hist = counters + i * stride;
		err = pthread_create(&workers[i]->tid, &attr, worker_thread, workers[i]);
		if (err)
			return die("pthread_create", err);
	}
	/* No message before every worker has started waiting. */
	for (i = 0; i < nr_workers; i++)
		while (atomic_load(&workers[i]->state) != W_WAITING)
			sleep_us(1000);
	for (i = 0; i < nr_messengers; i++) {
		messengers[i].workers = workers + i * nr_per_messenger;
		err = pthread_create(&messengers[i].tid, &attr, messenger_thread, &messengers[i]);
		if (err)
			return die("pthread_create", err);
	}
	deadline_ns = now_ns() + seconds * NSEC_PER_SEC;
	pthread_barrier_wait(&start_gate);

	for (i = 0; i < nr_messengers; i++) {
		pthread_join(messengers[i].tid, NULL);
		busy += messengers[i].busy;
	}
	stop_workers(workers);
	for (i = 0; i < nr_workers; i++) {
		pthread_join(workers[i]->tid, NULL);
		for (b = 0; b < nr_buckets; b++)
			hist[b] += workers[i]->hist[b];
		samples += workers[i]->samples;
		if (workers[i]->max_ns > max_ns)
			max_ns = workers[i]->max_ns;
	}
	if (!samples) {
		fprintf(stderr, "wakelat: no samples (%ld busy messages)\n", busy);
		return 1;
	}

	max_us = max_ns / NSEC_PER_USEC;
	for (i = 0; i < (long)ARRAY_SIZE(pct); i++)
		pct[i] = percentile_us(hist, samples, permille[i], max_us);
	printf("wakelat messages %ld workers %ld seconds %ld samples %lu", nr_messengers,
	       nr_per_messenger, seconds, samples);
	printf(" p50_us %ld p90_us %ld p99_us %ld p999_us %ld max_us %ld busy %ld\n",
	       pct[0], pct[1], pct[2], pct[3], max_us, busy);
	metrics_line(samples, pct, max_us, busy);
	return 0;
}
