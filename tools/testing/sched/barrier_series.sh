#!/bin/sh
# In-guest measurement of scripts/reproduce's barrier-hpc experiment
# ("The Battle of the Schedulers", section 6.3, the NAS MG kernel) under
# the class the guest runs now: stencil.c with one unpinned thread per
# CPU, every thread meeting the others at a barrier after each sweep, so
# the run takes as long as the slowest thread at every barrier.
#
# Usage: barrier_series.sh STENCIL   (sizes from the environment:
# ITERATIONS, CELLS per thread; scripts/reproduce --quick shortens them)
# Prints TAP and stencil's own result line, which stencil also writes
# to the JSON lines file SCHED_TEST_METRICS names.
stencil=${1:?usage: $0 STENCIL}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
ITERATIONS=${ITERATIONS:-1000}
CELLS=${CELLS:-65536}
OUT=/tmp/barrier-series.out

echo "TAP version 13"
echo "1..1"
"$stencil" "$(nproc)" "$ITERATIONS" "$CELLS" >$OUT 2>&1
cat $OUT
grep -q "^stencil threads .* elapsed_ms" $OUT && ok "stencil ran on $(nproc) CPUs" ||
	not_ok "stencil failed: $(tail -n 1 $OUT)"
tap_done
