"""The "wasted cores" scenarios (Documentation/scheduler/sched-wasted-cores.rst):
boot once, run tools/testing/sched/wasted_cores.sh, and turn its recordings
into before/after tables with tools/sched-vis."""

import json
import subprocess
import sys

from . import build, paths, vm

SCHED_VIS = paths.REPO / "tools" / "sched-vis"

# Measured scenarios and the scheduler feature each switches.
MEASURED = {
    "group-imbalance": ("GROUP_MIN_LOAD", "a job of one thread per CPU + 2 CPU hogs, "
                        "3 sessions, autogroup on"),
    "overload-on-wakeup": ("WAKE_IDLE_LONGEST", "a barrier-synchronised pool of one "
                           "thread per CPU + transient threads, autogroup off"),
}
REGRESSION = {
    "missing-domains": "offline/online a CPU, then one thread per CPU reaches every node",
    "group-construction": "threads bound to the two farthest nodes use both",
}
SCENARIOS = list(MEASURED) + list(REGRESSION)


def parse(output):
    """The "result" lines of wasted_cores.sh: measured[scenario][fix]["runs"]
    in run order, and the regression verdicts."""
    measured, regression = {}, {}
    for line in output.splitlines():
        f = line.split()
        if len(f) < 4 or f[0] != "result":
            continue
        if f[1] in MEASURED and f[2] in ("off", "on"):
            vals = dict(zip(f[4::2], f[5::2]))
            measured.setdefault(f[1], {}).setdefault(f[2], {"runs": []})["runs"].append({
                "name": f"{f[1]}-{f[2]}-{f[3]}",
                "elapsed_ms": float(vals["elapsed_ms"]) if vals.get("elapsed_ms") else None,
                "violations": int(vals["violations"]) if vals.get("violations") else None,
            })
        elif f[1] in REGRESSION:
            regression[f[1]] = {"verdict": f[2], "detail": " ".join(f[3:])}
    return measured, regression


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


SUMMARISED = ("elapsed_ms", "violations", "idle_overloaded_ms", "idle_overloaded_fraction",
              "recorded_ms")


def analyse(outdir, measured):
    """Idle-while-overloaded time of each recording; each side of a
    scenario then carries the median of its runs. sched-vis (and numpy)
    are imported here, not at the top, so --help works before scripts/setup."""
    from sched_vis.analysis import idle_overload
    from sched_vis.loader import load

    for runs in measured.values():
        for side in runs.values():
            for run in side["runs"]:
                trace = load(str(outdir / f"{run['name']}.bin"))
                io = idle_overload(trace, top=0)
                run["idle_overloaded_ms"] = io["total_ns"] / 1e6
                run["idle_overloaded_fraction"] = io["fraction"]
                run["recorded_ms"] = (io["end_ns"] - io["start_ns"]) / 1e6
                run["lost_records"] = int(sum(s[3] for s in trace.sections))
            for key in SUMMARISED:
                side[key] = median(r[key] for r in side["runs"])
            side["lost_records"] = sum(r["lost_records"] for r in side["runs"])


def heatmaps(outdir, measured, names=("group-imbalance",)):
    """Per scenario, its first run with the fix off and on drawn by
    sched-vis compare: one time axis, one colour scale, so the two halves
    compare at a glance. The pictures' paths."""
    pictures = []
    for name in names:
        sides = measured.get(name, {})
        if set(sides) != {"off", "on"}:
            continue
        png = outdir / f"{name}-compare.png"
        subprocess.run([sys.executable, str(SCHED_VIS / "sched-vis"), "compare",
                        *(str(outdir / f"{sides[fix]['runs'][0]['name']}.bin")
                          for fix in ("off", "on")),
                        "--labels", "fix off,fix on", "--migrations",
                        "--title", f"{name}: runqueue length per CPU, fix off and on",
                        "-o", str(png)],
                       check=True, capture_output=True, timeout=600)
        pictures.append(png)
    return pictures


def run(scenarios, topology="8x8", config="base", seed=1, outdir=None, timeout=3600,
        env=None, verbose=False):
    """Boot once and run `scenarios`; returns (measured, regression, result).
    env: REPEAT, JOB_UNITS, POOL_ROUNDS, HOG_S for the guest script."""
    wcload = build.guest_program("wcload")
    outdir = (outdir or paths.BUILD / "wasted-cores").resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    assigns = " ".join(f"{k}={int(v)}" for k, v in (env or {}).items())
    cmd = (f"{assigns} sh {paths.GUEST_TESTS}/wasted_cores.sh /tmp/out {wcload} "
           f"{int(seed)} {' '.join(scenarios)}")
    result = vm.boot(cmd.strip(), topology, "", config=config, timeout=timeout,
                     outdir=outdir, verbose=verbose)
    measured, regression = parse(result.output)
    analyse(outdir, measured)
    (outdir / "results.json").write_text(json.dumps(
        {"topology": topology, "config": config, "seed": seed, "measured": measured,
         "regression": regression}, indent=1))
    return measured, regression, result


def ratio(on, off):
    return on / off if off else float("inf") if on else 1.0


def _row(label, r):
    return (f"  {label:9} {r['elapsed_ms'] or float('nan'):9.0f} "
            f"{r['idle_overloaded_ms']:25.1f} "
            f"{100 * r['idle_overloaded_fraction']:10.2f} {r['violations']:10g}")


def table(measured, regression):
    """One block per scenario: each run, then (with repeats) the medians
    and the ratio of the medians."""
    lines = []
    for name, runs in measured.items():
        feature, what = MEASURED[name]
        lines.append(f"{name} ({feature}): {what}")
        lines.append(f"  {'fix':9} {'job ms':>9} {'idle-while-overloaded ms':>25} "
                     f"{'% CPU time':>10} {'violations':>10}")
        for fix in ("off", "on"):
            side = runs.get(fix)
            if side is None:
                lines.append(f"  {fix:9} (did not run)")
                continue
            if len(side["runs"]) == 1:
                lines.append(_row(fix, side))
                continue
            for i, r in enumerate(side["runs"], 1):
                lines.append(_row(f"{fix} #{i}", r))
            lines.append(_row(f"{fix} med", side))
        if "off" in runs and "on" in runs:
            off, on = runs["off"], runs["on"]
            lines.append(f"  {'on/off':9} {ratio(on['elapsed_ms'], off['elapsed_ms']):9.2f} "
                         f"{ratio(on['idle_overloaded_ms'], off['idle_overloaded_ms']):25.2f}")
    for name, r in regression.items():
        lines.append(f"{name}: {r['verdict'].upper()} ({REGRESSION[name]}): {r['detail']}")
    return "\n".join(lines)
