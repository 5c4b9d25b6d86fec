"""The statistics scripts/bench-sched and scripts/reproduce share: one
seeded percentile bootstrap of medians (of one sample, of several samples
resampled each on its own, or of groups resampled in two stages), its
interval and what the interval says."""

import random
import statistics

# Resamples of the bootstrap, and its level: a 95 % interval.
BOOTSTRAP_RESAMPLES = 4000
CONFIDENCE = 0.95
# Fewer paired rounds give an interval no wider than the runs themselves
# (two rounds: exactly their range), which would read as a measurement.
MIN_ROUNDS = 5


def bootstrap(samples, change=None, grouped=False, resamples=BOOTSTRAP_RESAMPLES,
              level=CONFIDENCE, seed=1):
    """Percentile bootstrap interval (low, high) of the median of the one
    sample in `samples`, or with `change` of change(median, ...) over the
    medians of every sample, each resampled on its own, in turn (the
    rounds of two separate runs do not pair). A change of None drops its
    resample (a ratio to a median of 0); (None, None) when every one was
    dropped. `grouped`: each sample is a list of groups (the boots that
    ran its values), resampled in two stages (resample()). Seeded, so a
    report is reproducible from its raw runs."""
    rng = random.Random(seed)
    estimates = []
    for _ in range(resamples):
        medians = [statistics.median(resample(rng, sample, grouped)) for sample in samples]
        estimate = change(*medians) if change else medians[0]
        if estimate is not None:
            estimates.append(estimate)
    if not estimates:
        return None, None
    return percentile_interval(estimates, level)


def resample(rng, sample, grouped=False):
    """`sample` drawn with replacement, as many values as it has; grouped,
    its groups drawn with replacement, then the values within each drawn
    group, pooled, so the interval widens when the groups disagree."""
    if not grouped:
        return rng.choices(sample, k=len(sample))
    drawn = []
    for group in rng.choices(sample, k=len(sample)):
        drawn += rng.choices(group, k=len(group))
    return drawn


def bootstrap_ci(values, resamples=BOOTSTRAP_RESAMPLES, level=CONFIDENCE, seed=1):
    """Percentile bootstrap interval of the median of `values`: (low, high),
    or (None, None) with fewer than MIN_ROUNDS values."""
    if len(values) < MIN_ROUNDS:
        return None, None
    return bootstrap([values], resamples=resamples, level=level, seed=seed)


def percentile_interval(estimates, level=CONFIDENCE):
    """The central `level` of bootstrap `estimates`: (low, high)."""
    estimates = sorted(estimates)
    n, tail = len(estimates), (1 - level) / 2
    return estimates[int(tail * n)], estimates[min(n - 1, int((1 - tail) * n))]


def verdict(low, high):
    """What an interval of a ratio of times (or of missed frames) to the
    base says: "slower" or "faster" only when it excludes 1."""
    if low is None:
        return "too few rounds"
    if low <= 1 <= high:
        return "no difference measured"
    return "slower" if low > 1 else "faster"
