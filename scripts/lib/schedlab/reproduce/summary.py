"""scripts/reproduce's statistics over raw runs: the runs of each
variant paired with the base's by round, their medians, and the seeded
bootstrap interval (schedlab/stats.py) of each comparison, over boots
when several ran them; compare's change between two folders."""

import statistics

from .. import stats


def values_of(runs, bench_name, variant):
    """Every value of one benchmark and variant, in round order."""
    return [r["value"] for r in sorted(runs, key=lambda r: r["round"])
            if r["bench"] == bench_name and r["variant"] == variant]


def by_round(runs, bench_name, variant):
    """{round: value} of one benchmark and variant."""
    return {r["round"]: r["value"] for r in runs
            if r["bench"] == bench_name and r["variant"] == variant}


def paired(values, base_values, compare):
    """Per-round ratio (or difference) to the base of every round both ran;
    a ratio skips rounds whose base is not positive."""
    out = []
    for rnd in sorted(values):
        if rnd not in base_values:
            continue
        if compare == "difference":
            out.append(values[rnd] - base_values[rnd])
        elif base_values[rnd] > 0:
            out.append(values[rnd] / base_values[rnd])
    return out


def boot_of_rounds(runs):
    """{round: boot}: which boot ran each round (1 for documents from
    before --boots, whose rounds all ran in one boot)."""
    return {r["round"]: r.get("boot", 1) for r in runs}


def paired_by_boot(values, base_values, compare, boot_of):
    """paired() within each boot: one list of per-round ratios (or
    differences) per boot that ran any, in boot order."""
    boots = {}
    for rnd, value in values.items():
        boots.setdefault(boot_of.get(rnd, 1), {})[rnd] = value
    groups = [paired(vals, base_values, compare) for _, vals in sorted(boots.items())]
    return [g for g in groups if g]


def bootstrap_boots(groups, resamples=stats.BOOTSTRAP_RESAMPLES, level=stats.CONFIDENCE,
                    seed=1):
    """stats.bootstrap_ci() of the pooled values when one boot ran them all;
    over several boots a two-stage bootstrap: draw the boots with
    replacement, then the rounds within each drawn boot, so the interval
    widens when the boots disagree, which resampling pooled rounds would
    hide. (None, None) below stats.MIN_ROUNDS values in all."""
    if len(groups) <= 1:
        return stats.bootstrap_ci(groups[0] if groups else [], resamples, level, seed)
    if sum(len(g) for g in groups) < stats.MIN_ROUNDS:
        return None, None
    return stats.bootstrap([groups], grouped=True, resamples=resamples, level=level,
                           seed=seed)


def verdict(low, high, compare="ratio", worse="slower", better="faster"):
    """stats.verdict's wording ("no difference measured" when the interval
    holds the neutral value, "too few rounds" without one), with the
    benchmark's own words for a measured difference."""
    shift = 1 if compare == "difference" else 0
    said = stats.verdict(None if low is None else low + shift,
                         None if high is None else high + shift)
    return {"slower": worse, "faster": better}.get(said, said)


def summarise(doc):
    """Per benchmark: each variant's median, spread and count, and each
    other variant against the base: the median of the per-round ratios
    (or differences) with its seeded bootstrap 95 % interval (over boots,
    then rounds, when several boots ran them: bootstrap_boots()) and
    verdict. Computed from the raw runs, so a report is reproducible from
    them."""
    runs = doc["runs"]
    boot_of = boot_of_rounds(runs)
    out = {}
    for name, info in doc["benches"].items():
        entry = {**info, "variants": {}, "vs_base": {}}
        for variant in doc["variants"]:
            vals = values_of(runs, name, variant)
            if vals:
                entry["variants"][variant] = {
                    "n": len(vals), "median": statistics.median(vals),
                    "min": min(vals), "max": max(vals)}
        for variant in doc["variants"]:
            base = base_of(doc, variant)
            if variant == base:
                continue
            groups = paired_by_boot(by_round(runs, name, variant), by_round(runs, name, base),
                                    info["compare"], boot_of)
            pairs = [v for g in groups for v in g]
            if not pairs:
                continue
            low, high = bootstrap_boots(groups)
            said = verdict(low, high, info["compare"], info["worse"], info["better"])
            bound = both_bounded(runs, name, variant, base)
            if bound:
                said = f"not measured: both {bound} in most rounds"
            entry["vs_base"][variant] = {
                "n": len(pairs), "boots": len(groups), "median": statistics.median(pairs),
                "ci": [low, high], "verdict": said}
        out[name] = entry
    return out


def base_of(doc, variant):
    """What `variant` is compared with: a reference kernel's variant with
    the class it is the original of (prjc-bmq with bmq), when that ran;
    every other variant with the experiment's base."""
    like = doc.get("references", {}).get(variant, {}).get("like")
    return like if like in doc["variants"] else doc["base"]


# What a run flagged so (RUN_FLAGS) holds: only a bound on the time.
BOUND_WORDS = {"censored": "never got there within the window",
               "settled_at_first_sample": "there by the first sample"}


def both_bounded(runs, bench_name, variant, base):
    """The words for a flag that both variant and base carry in at least
    half of the rounds both ran, or None: their ratio then compares two
    bounds (two window lengths, or how soon two first samples came), not
    two times, whatever its interval says."""
    flags = {}
    for r in runs:
        if r["bench"] == bench_name and r["variant"] in (variant, base):
            flags.setdefault(r["round"], {})[r["variant"]] = r
    rounds = [v for v in flags.values() if len(v) == 2]
    for flag, words in BOUND_WORDS.items():
        both = sum(1 for v in rounds if v[variant].get(flag) and v[base].get(flag))
        if rounds and 2 * both >= len(rounds):
            return words
    return None


def bootstrap_change(a, b, compare="ratio", resamples=stats.BOOTSTRAP_RESAMPLES,
                     level=stats.CONFIDENCE, seed=1):
    """Percentile bootstrap interval of median(b) / median(a) (or b - a),
    resampling the rounds of each folder independently: the two runs are
    separate boots, so their rounds do not pair. (None, None) below
    stats.MIN_ROUNDS in either."""
    if min(len(a), len(b)) < stats.MIN_ROUNDS:
        return None, None
    return stats.bootstrap([a, b], lambda ma, mb: change_of_medians(ma, mb, compare),
                           resamples=resamples, level=level, seed=seed)


def change_of(a, b, compare="ratio"):
    """median(b) / median(a), or their difference; None without a base."""
    return change_of_medians(statistics.median(a), statistics.median(b), compare)


def change_of_medians(ma, mb, compare="ratio"):
    """mb / ma, or mb - ma; None for a ratio without a positive base."""
    if compare == "difference":
        return mb - ma
    return mb / ma if ma > 0 else None
