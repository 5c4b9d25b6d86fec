"""The applications experiment: packaged applications alone and in
pairs, and make -j1/-jN, under each class (the ULE paper §6.3-§6.4, the MuQSS thesis
§4.2)."""

from ..registry import CLASSES, bench_info, experiment
from .inputs import apps_inputs
from .series import parse_series, series_experiment

APPS_MARK = "reproduce-apps"
APPS_ALONE = ("make-j1", "make-jN", "povray", "x264", "xz", "zstd", "7z")
APPS_PAIRS = ("make-jN+x264", "povray+xz")
# --quick: make -jN of one of Lua's objects, and one pair.
APPS_QUICK_ENV = "ALONE='make-jN' PAIRS='xz+zstd' MAKE_OBJS='lzio.o' "


def app_bench(name, pair=None):
    """The benchmark name of an application alone or in a pair."""
    if not pair:
        return f"{name} alone"
    other = [a for a in pair.split("+") if a != name]
    return f"{name} beside {other[0] if other else name}"


def app_benches(alone, pairs):
    """bench_info() of every application alone and of each in its pair."""
    names = [app_bench(a) for a in alone]
    names += [app_bench(a, p) for p in pairs for a in p.split("+")]
    return {n: bench_info("s") for n in names}


def parse_apps_run(lines, metrics):
    """One run of apps_series.sh, its metrics: ({bench: seconds, or None
    for an application that failed}, {"why": {bench: its last line}},
    problems of the run). The script's TAP checks only repeat the
    failures; a record it does not write is a problem."""
    values, why, problems = {}, {}, []
    for record in metrics:
        app, pair = record.get("app"), record.get("pair")
        if record.get("name") != "app" or not isinstance(app, str) or \
                not isinstance(pair, (str, type(None))):
            problems.append(f"a record the applications series does not write: {record}")
        elif isinstance(record.get("seconds"), (int, float)):
            values[app_bench(app, pair)] = float(record["seconds"])
        elif isinstance(record.get("failed"), str):
            bench_name = app_bench(app, pair)
            values[bench_name], why[bench_name] = None, f"failed: {record['failed']}"
        else:
            problems.append(f"a record the applications series does not write: {record}")
    if not values:
        problems.append("no application ran")
    return values, {"why": why}, problems


def parse_apps(output, topology, files=None):
    """Raw runs and failures of the applications experiment's output and
    the metrics files in the boot's shared folder `files`."""
    return parse_series(output, topology, APPS_MARK, parse_apps_run, lambda name: "s", "",
                        files=files)


@experiment(
    "applications",
    title="packaged applications alone and in pairs, and make -j1/-jN turnaround",
    seed="the ULE paper §6.3-§6.4 (Figures 8-9: applications, multi-application mixes) and "
         "the MuQSS thesis §4.2 (turnaround: make -j1 and -jN)",
    published="On 32 cores ULE and CFS differed by 2.75 % on average over the "
              "applications, in ULE's favour, a few by much more (MG 73 % faster on ULE, "
              "sysbench slower); paired with another application, two background ones "
              "(c-ray and EP) ran alike on both, while ULE let an interactive one run "
              "first (blackscholes more than 80 % slower beside ferret) where CFS shared "
              "fairly. The MuQSS thesis found make -j1 a little faster on MuQSS than on "
              "CFS and make -j4 the same.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    seconds_per_round=260, quick_seconds=40)
def applications(ctx, topology):
    """tools/testing/sched/apps_series.sh under each class in one boot:
    make -j1 and -jN of eight Lua objects, POV-Ray, x264, xz, zstd and
    7-Zip, each alone, then make -jN beside x264 and POV-Ray beside xz;
    every time as a ratio to CFS. The inputs are made on the host first."""
    alone, pairs = (("make-jN",), ("xz+zstd",)) if ctx.quick else (APPS_ALONE, APPS_PAIRS)
    return series_experiment(ctx, topology, "applications", "apps_series.sh",
                             APPS_QUICK_ENV if ctx.quick else "", APPS_MARK, parse_apps,
                             app_benches(alone, pairs), programs=(), args=(apps_inputs(),))
