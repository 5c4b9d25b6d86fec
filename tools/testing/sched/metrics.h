/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metrics file of the workload programs (uleload.c, wakelat.c,
 * stencil.c): JSON objects, one a line, appended to the file that
 * SCHED_TEST_METRICS names, which the host reads. The tests on the
 * harness write theirs with sched_test.h's metric().
 */
#ifndef SCHED_METRICS_H
#define SCHED_METRICS_H

#include <stdio.h>
#include <stdlib.h>

/* The file to append to; NULL when none is named or it cannot be opened. */
static inline FILE *metrics_open(void)
{
	const char *path = getenv("SCHED_TEST_METRICS");
	FILE *f;

	if (!path || !*path)
		return NULL;
	f = fopen(path, "a");
	if (!f)
		perror(path);
	return f;
}

/* Close what metrics_open() gave, saying so if the lines were lost. */
static inline void metrics_close(FILE *f)
{
	if (fclose(f))
		perror(getenv("SCHED_TEST_METRICS"));
}

#endif
