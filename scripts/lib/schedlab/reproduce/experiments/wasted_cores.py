"""The wasted-cores experiment: tools/testing/sched/wasted_cores.sh's
two scenarios, each fix off and on in one boot (the wasted-cores paper)."""

from ... import paths
from ..document import _number
from ..registry import Outcome, ReproduceError, bench_info, experiment


WASTED_SCENARIOS = ("group-imbalance", "overload-on-wakeup")


@experiment(
    "wasted-cores",
    title="the wasted-cores fixes, off vs on",
    seed="the wasted-cores paper §3.1 (Group Imbalance, Figure 2) and §3.3 (Overload-on-Wakeup, "
         "Figure 3, Table 2)",
    published="Fixing Group Imbalance cut a make job's time by 13 % beside two R processes "
              "(lu with R: 13x); fixing Overload-on-Wakeup cut TPC-H query 18 by 22.2 % and "
              "the full TPC-H by 13.2 %; both left no core idle while threads waited.",
    classes=("cfs",), variants=("off", "on"), base="off",
    features=("GROUP_MIN_LOAD", "WAKE_IDLE_LONGEST"), default_topology="4x2",
    seconds_per_round=50, quick_seconds=40)
def wasted_cores(ctx, topology):
    """tools/testing/sched/wasted_cores.sh's two measured scenarios, each
    fix off and on alternating in one boot (REPEAT = rounds), analysed by
    wasted.parse/analyse: the job's time and the CPU time idle while
    another CPU had waiting work, each on/off."""
    from ... import wasted   # imports tools/sched-vis: only when this runs

    tag = f"wasted-cores-{topology}"
    env = {"REPEAT": ctx.rounds}
    if ctx.quick:
        env.update(JOB_UNITS=40, POOL_ROUNDS=10)
    assigns = " ".join(f"{k}={v}" for k, v in env.items())
    cmd = (f"{assigns} sh {paths.GUEST_TESTS}/wasted_cores.sh {ctx.runner.shared_dir(tag)} "
           f"{ctx.program('wcload')} 1 {' '.join(WASTED_SCENARIOS)}")
    boot = ctx.runner.run(cmd, topology, tag, ctx.track(r"^result \S+ o\S+ (\d+) "),
                          ctx.timeout())
    measured, _ = wasted.parse(boot.output)
    if not measured:
        raise ReproduceError(f"wasted_cores.sh gave no result (exit {boot.status}); "
                             f"output in {boot.files}")
    wasted.analyse(boot.files, measured)
    return Outcome(runs=wasted_runs(measured, topology), benches=WASTED_BENCHES,
                   commands={s: cmd for s in WASTED_SCENARIOS}, release=boot.release,
                   failures=[{"bench": s, "why": "no run"} for s in WASTED_SCENARIOS
                             if s not in measured])


WASTED_BENCHES = {}
for _s in WASTED_SCENARIOS:
    WASTED_BENCHES[f"{_s} job"] = bench_info("ms")
    WASTED_BENCHES[f"{_s} idle-while-overloaded"] = bench_info("ms", worse="more",
                                                                better="less")


def wasted_runs(measured, topology):
    """Raw runs from wasted.parse/analyse: two values per run (job time and
    idle-while-overloaded time), its round from the recording's name."""
    runs = []
    for scenario, sides in measured.items():
        for fix, side in sides.items():
            for run in side["runs"]:
                rnd = int(run["name"].rsplit("-", 1)[1])
                extra = {"violations": run.get("violations"),
                         "lost_records": run.get("lost_records"),
                         "idle_overloaded_fraction": run.get("idle_overloaded_fraction"),
                         "topology": topology}
                for suffix, key in (("job", "elapsed_ms"),
                                    ("idle-while-overloaded", "idle_overloaded_ms")):
                    if _number(run.get(key)):
                        runs.append({"bench": f"{scenario} {suffix}", "variant": fix,
                                     "round": rnd, "value": run[key], "unit": "ms", **extra})
    return runs
