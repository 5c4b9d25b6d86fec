"""Host-side tests of scripts/reproduce's adapters for seed 000 §5.2 and
§6.3, the wakeup-latency percentiles and the applications
(interactivity-trace, barrier-hpc, wakeup-latency, applications): their
parsers on guest output of the documented shapes, their commands, and
the figures. tests/test_reproduce.py's quick run boots them."""

import json
import tarfile
from pathlib import Path

import pytest

from schedlab import build, paths, reproduce, vm
from schedlab.reproduce.document import check_png, document, validate
from schedlab.reproduce.experiments.applications import APPS_MARK, app_benches, parse_apps_run
from schedlab.reproduce.experiments.barrier import BARRIER_MARK
from schedlab.reproduce.experiments.inputs import apps_inputs, write_corpus, write_video
from schedlab.reproduce.experiments.interactivity import (ITRACE_MARK, jain, parse_itrace_run,
                                                           valid_threads)
from schedlab.reproduce.experiments.latency import LATENCY_MARK, parse_latency_run, percentile
from schedlab.reproduce.experiments.series import metrics_file
from schedlab.reproduce.experiments.smt import SMT_MARK, parse_smt_run
from schedlab.reproduce.metadata import metadata
from schedlab.reproduce.registry import CLASSES, EXPERIMENTS, SHARE_CLASSES, ReproduceError
from schedlab.reproduce.report import save, thread_panels
from schedlab.reproduce.runner import RELEASE_MARK, Context, run_experiment
from test_reproduce import FakeRunner


def marked(mark, runs, files=None, metrics=None):
    """Guest output of rotated_command(): {(round, class): [lines]}; with
    `files`, each run's `metrics` ({(round, class): [records]}) written
    there as the guest writes them."""
    lines = [f"{RELEASE_MARK} 6.1.192-fake"]
    for (rnd, cls), body in runs.items():
        lines += [f"{mark} {rnd} {cls}", *body]
    for (rnd, cls), records in (metrics or {}).items():
        (files / metrics_file(mark, rnd, cls)).write_text(
            "".join(json.dumps(r) + "\n" for r in records))
    return "\n".join(lines) + "\n"


def run_adapter(tmp_path, name, output, quick=True, programs="/bin/true"):
    runner = FakeRunner(tmp_path, output)
    ctx = Context(rounds=1, quick=quick, runner=runner)
    ctx.program = lambda prog: Path(programs)
    outcome, topologies = run_experiment(EXPERIMENTS[name], 0, ctx, None, False)
    return runner, outcome, topologies


def save_doc(tmp_path, name, outcome, topologies):
    exp = EXPERIMENTS[name]
    meta = metadata(exp, release=outcome.release, config="debug",
                    config_sha256="0" * 64, topologies=topologies,
                    qemu_mode=exp.qemu_mode, rounds=1, quick=True,
                    argv=["scripts/reproduce"], git=("abc1234", False), cpu="Test CPU")
    doc = document(exp, outcome.runs, outcome.benches, outcome.commands, outcome.failures, meta)
    assert validate(doc) == []
    json_path, png, report = save(doc, tmp_path / "r")
    assert check_png(png) == []
    return json.loads(json_path.read_text()), report.read_text()


# -- interactivity-trace -------------------------------------------------------

def itrace_metrics(running, starving, samples=6, score=True):
    """interactivity_series.sh's records: the main thread, then `running`
    workers that gain 10 ms per sample and `starving` ones that never run,
    every 0.5 s; scores 10 and 60 on ULE."""
    n = running + starving
    out = [{"name": "itrace", "class": "ule", "cpu": 1, "threads": n, "run_us": 1000,
            "sleep_us": 4000, "seconds": 3, "step": 0.5},
           {"name": "threads", "t_cs": 1000, "threads": [[90, 5000, 50 if score else None]]}]
    for k in range(samples):
        threads = [[90, 6000, 40 if score else None]]
        threads += [[100 + i, 10000 * k, 10 if score else None] for i in range(running)]
        threads += [[200 + i, 0, 60 if score else None] for i in range(starving)]
        out.append({"name": "threads", "t_cs": 1050 + 50 * k, "threads": threads})
    return out + [{"name": "events", "events": 100}]


def test_itrace_counts_the_threads_that_starve_and_keeps_the_samples():
    values, extra, problems = parse_itrace_run(["ok 1 - x"], itrace_metrics(3, 5))
    assert problems == []
    assert values == {"starved threads": 5, "fairness": 0.375}
    assert extra["series"][-1] == [2.5, 3]
    assert extra["per_thread"]["x"][0] == 0 and len(extra["per_thread"]["run_ms"][0]) == 8
    assert extra["per_thread"]["score"][1][:4] == [10, 10, 10, 60]


def test_itrace_without_enough_samples_of_every_thread_is_a_problem():
    values, _, problems = parse_itrace_run([], itrace_metrics(2, 0, samples=2))
    assert values == {} and "fewer than 3 samples saw all 2 threads" in problems[0]
    _, _, problems = parse_itrace_run([], [{"name": "threads", "t_cs": 1,
                                            "threads": [[90, "5000", None]]}])
    assert problems[0].startswith("a record the interactivity series does not write")


def test_jain_index():
    assert jain([5, 5, 5]) == 1.0
    assert jain([9, 0, 0]) == pytest.approx(1 / 3, abs=1e-4)
    assert jain([0, 0]) is None


def test_thread_sampler_reads_run_times_with_or_without_sched_debug(monkeypatch):
    """thread_sampler.py reads /proc/PID/task/TID/sched where SCHED_DEBUG
    made it, else schedstat (Project C's reference kernel has no
    SCHED_DEBUG: its interactivity-trace rounds printed no samples). A
    spinner's run time, sampled with its sched files and with them
    hidden, grows in both."""
    import builtins
    import importlib.util
    import subprocess
    import sys
    import time

    spec = importlib.util.spec_from_file_location("thread_sampler",
                                                  paths.GUEST_TESTS / "thread_sampler.py")
    sampler = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sampler)

    def run_us(pid):
        threads = sampler.sample(pid)
        assert threads and valid_threads([list(t) for t in threads])
        return threads[0][1]

    def no_sched(path, *args, **kwargs):
        if str(path).endswith("/sched"):
            raise FileNotFoundError(path)
        return builtins.open(path, *args, **kwargs)

    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        with_sched = run_us(spinner.pid)
        monkeypatch.setattr(sampler, "open", no_sched, raising=False)
        first = run_us(spinner.pid)
        time.sleep(0.2)
        assert run_us(spinner.pid) > first > 0 and with_sched > 0
    finally:
        spinner.kill()
        spinner.wait()


def test_itrace_adapter_keeps_per_thread_samples_of_round_1_and_draws_them(tmp_path):
    metrics = {(1, "cfs"): itrace_metrics(8, 0, score=False), (1, "ule"): itrace_metrics(3, 5),
               (1, "bmq"): itrace_metrics(6, 2, score=False), (2, "ule"): itrace_metrics(4, 4)}
    output = marked(ITRACE_MARK, {run: ["ok 1 - x"] for run in metrics}, tmp_path, metrics)
    runner, outcome, topologies = run_adapter(tmp_path, "interactivity-trace", output)
    assert "THREADS=16 RUN_S=3 sh " in runner.commands[0][0]
    starved = {(r["variant"], r["round"]): r["value"] for r in outcome.runs
               if r["bench"] == "starved threads"}
    assert starved == {("cfs", 1): 0, ("ule", 1): 5, ("bmq", 1): 2, ("ule", 2): 4}
    assert [r["round"] for r in outcome.runs if "per_thread" in r] == [1, 1, 1]
    doc, report = save_doc(tmp_path, "interactivity-trace", outcome, topologies)
    panels = thread_panels(doc)
    assert [(v, k) for v, _, k in panels] == [("cfs", "run_ms"), ("ule", "run_ms"),
                                              ("ule", "score"), ("bmq", "run_ms")]
    assert "## interactivity-trace:" in report


# -- wakeup-latency -------------------------------------------------------------

def test_percentile_is_nearest_rank():
    hist = {10: 50, 20: 49, 900: 1}
    assert percentile(hist, 50) == 10
    assert percentile(hist, 99) == 20
    assert percentile(hist, 99.9) == 900
    assert percentile({7: 1}, 50) == 7
    with pytest.raises(ValueError):
        percentile({}, 50)


LATENCY_RUN = [
    "# latency class cfs load 2 seconds 10",
    "ok 1 - 2 spinners started",
    "ok 2 - cyclictest ran",
    "ok 3 - rt-app ran",
    "wakelat messages 2 workers 4 seconds 10 samples 5000 p50_us 12 p90_us 40 p99_us 900 "
    "p999_us 4000 max_us 9000 busy 3",
    "ok 4 - wakelat ran",
]
LATENCY_METRICS = [
    {"name": "hist", "probe": "cyclictest", "bins": [[50, 900], [60, 90], [4000, 9], [20000, 1]]},
    {"name": "hist", "probe": "rt-app", "bins": [[100, 998], [3000, 2]]},
    {"name": "wakelat", "samples": 5000, "p50_us": 12, "p90_us": 40, "p99_us": 900,
     "p999_us": 4000, "max_us": 9000, "busy": 3},
]


def test_latency_run_gives_three_percentiles_per_probe():
    values, extra, problems = parse_latency_run(LATENCY_RUN, LATENCY_METRICS)
    assert problems == []
    assert values == {"cyclictest p50": 50, "cyclictest p99": 60, "cyclictest p99.9": 4000,
                      "rt-app p50": 100, "rt-app p99": 100, "rt-app p99.9": 3000,
                      "wakelat p50": 12, "wakelat p99": 900, "wakelat p99.9": 4000}
    assert extra["samples"] == {"cyclictest": 1000, "rt-app": 1000, "wakelat": 5000}
    _, _, problems = parse_latency_run([], [{"name": "hist", "probe": "rt-app",
                                             "bins": [[100, "many"]]}])
    assert problems[0].startswith("a record the latency series does not write")


def test_latency_run_with_a_failed_probe_is_a_failure(tmp_path):
    bad = [line for line in LATENCY_RUN if "wakelat" not in line] + \
        ["not ok 4 - wakelat failed: usage"]
    runs = {(1, "cfs"): LATENCY_RUN, (1, "ule"): LATENCY_RUN, (1, "bmq"): bad,
            (1, "muqss"): LATENCY_RUN}
    output = marked(LATENCY_MARK, runs, tmp_path,
                    {run: LATENCY_METRICS if lines is not bad else LATENCY_METRICS[:2]
                     for run, lines in runs.items()})
    runner, outcome, _ = run_adapter(tmp_path, "wakeup-latency", output)
    assert "RUN_S=1 sh " in runner.commands[0][0]
    assert runner.commands[0][0].count("/bin/true") >= 2   # uleload and wakelat
    assert outcome.failures == [{"bench": "all", "variant": "bmq", "round": 1,
                                 "why": "wakelat failed: usage"}]
    assert len(outcome.runs) == 27


# -- barrier-hpc ----------------------------------------------------------------

def stencil_record(ms, wait, checksum="5.572999e+05"):
    return {"name": "stencil", "threads": 8, "iterations": 1000, "cells": 65536,
            "elapsed_ms": ms, "wait_pct": wait, "checksum": checksum}


def test_barrier_runs_and_a_wrong_checksum_is_a_failure(tmp_path):
    ran = ["ok 1 - stencil ran on 8 CPUs"]
    output = marked(BARRIER_MARK, {(1, c): ran for c in CLASSES}, tmp_path, {
        (1, "cfs"): [stencil_record(1500.0, 20.5)], (1, "ule"): [stencil_record(1800.0, 30.0)],
        (1, "bmq"): [stencil_record(1400.0, 10.0, "1.0e+00")],
        (1, "muqss"): [stencil_record(1600.0, 25.0)]})
    runner, outcome, topologies = run_adapter(tmp_path, "barrier-hpc", output)
    assert "ITERATIONS=40 CELLS=4096 sh " in runner.commands[0][0]
    assert topologies == ["1x2"]
    values = {(r["bench"], r["variant"]): r["value"] for r in outcome.runs}
    assert values == {("completion time", "cfs"): 1.5, ("barrier wait", "cfs"): 20.5,
                      ("completion time", "ule"): 1.8, ("barrier wait", "ule"): 30.0,
                      ("completion time", "muqss"): 1.6, ("barrier wait", "muqss"): 25.0}
    assert outcome.failures == [{"bench": "all", "variant": "bmq", "round": 1,
                                 "why": "wrong checksum"}]
    save_doc(tmp_path, "barrier-hpc", outcome, topologies)


def test_experiments_default_to_their_qemu_mode_unless_told(tmp_path, monkeypatch):
    modes = []

    class Runner(FakeRunner):
        def run(self, *args, **kwargs):
            modes.append(self.mode)
            return super().run(*args, **kwargs)

    runner = Runner(tmp_path, marked(BARRIER_MARK, {(1, c): [] for c in CLASSES}, tmp_path,
                                     {(1, c): [stencil_record(1000.0, 1.0)] for c in CLASSES}))
    monkeypatch.setattr("schedlab.reproduce.cli.GuestRunner", lambda config, mode, workdir: runner)
    monkeypatch.setattr(build, "build", lambda config: 0)
    for argv, want in (([], "mttcg"), (["--qemu-mode", "tcg"], "tcg")):
        runner.mode = "icount"
        rc = reproduce.main(["barrier-hpc", "--quick", "--no-build", "--out",
                             str(tmp_path / want), *argv])
        assert rc == 0 and modes[-1] == want
        doc = json.loads((tmp_path / want / "barrier-hpc.json").read_text())
        assert doc["metadata"]["qemu_mode"] == want


def test_quick_runs_may_take_another_qemu_mode():
    """starvation, interactivity-trace and sysbench-scaling scatter least
    under icount and unpin-spread and smt-spread under TCG, but
    starvation's quick run on the debug kernel overruns under icount: all
    five run under MTTCG with --quick only, as CI ran them before.
    barrier-hpc's completion times scatter least under MTTCG, its default
    with and without --quick."""
    ex = EXPERIMENTS
    for name in ("starvation", "interactivity-trace", "sysbench-scaling"):
        assert ex[name].mode_for(False) == "icount"
        assert ex[name].mode_for(True) == "mttcg"
    for name in ("unpin-spread", "smt-spread"):
        assert ex[name].mode_for(False) == "tcg"
        assert ex[name].mode_for(True) == "mttcg"
    assert ex["barrier-hpc"].mode_for(True) == ex["barrier-hpc"].mode_for(False) == "mttcg"
    assert ex["wakeup"].mode_for(False) == ex["wakeup"].mode_for(True) == "mttcg"


# -- applications ---------------------------------------------------------------

APPS_RUN = ["# apps class cfs cpus 2", "# app make-jN 8.192",
            "ok 1 - every application alone ran", "# pair xz+zstd xz 4.8",
            "# failed pair xz+zstd zstd zstd: error 5",
            "not ok 2 - every pair ran (got '1', want '0')"]
APPS_METRICS = [{"name": "app", "app": "make-jN", "seconds": 8.192},
                {"name": "app", "app": "xz", "pair": "xz+zstd", "seconds": 4.8},
                {"name": "app", "app": "zstd", "pair": "xz+zstd", "failed": "zstd: error 5"}]


def test_apps_run_names_benches_alone_and_beside_and_keeps_failures_per_bench():
    values, extra, problems = parse_apps_run(APPS_RUN, APPS_METRICS)
    assert values == {"make-jN alone": 8.192, "xz beside zstd": 4.8, "zstd beside xz": None}
    assert extra["why"] == {"zstd beside xz": "failed: zstd: error 5"} and problems == []
    assert list(app_benches(("xz",), ("xz+zstd",))) == [
        "xz alone", "xz beside zstd", "zstd beside xz"]
    _, _, problems = parse_apps_run([], [{"name": "app", "app": "xz", "seconds": "soon"}])
    assert problems[0].startswith("a record the applications series does not write")


def test_apps_adapter_passes_the_inputs_and_records_the_failed_application(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setattr("schedlab.reproduce.experiments.applications.apps_inputs", lambda: tmp_path / "apps")
    ok = [line for line in APPS_RUN if not line.startswith("not ok")]
    ok_metrics = APPS_METRICS[:2] + [{"name": "app", "app": "zstd", "pair": "xz+zstd",
                                      "seconds": 2.0}]
    runs = {(1, "cfs"): ok, (1, "ule"): ok, (1, "bmq"): APPS_RUN, (1, "muqss"): ok}
    output = marked(APPS_MARK, runs, tmp_path,
                    {run: APPS_METRICS if run[1] == "bmq" else ok_metrics for run in runs})
    runner, outcome, topologies = run_adapter(tmp_path, "applications", output)
    command = runner.commands[0][0]
    assert "ALONE='make-jN' PAIRS='xz+zstd' MAKE_OBJS='lzio.o' sh " in command
    assert f"apps_series.sh {tmp_path / 'apps'};" in command
    assert outcome.failures == [{"bench": "zstd beside xz", "variant": "bmq", "round": 1,
                                 "why": "failed: zstd: error 5"}]
    save_doc(tmp_path, "applications", outcome, topologies)


def test_video_and_corpus_are_deterministic(tmp_path):
    write_video(tmp_path / "a.y4m", (16, 8), 3)
    write_video(tmp_path / "b.y4m", (16, 8), 3)
    data = (tmp_path / "a.y4m").read_bytes()
    assert data == (tmp_path / "b.y4m").read_bytes()
    head = b"YUV4MPEG2 W16 H8 F24:1 Ip A1:1 C420jpeg\n"
    assert data.startswith(head) and len(data) == len(head) + 3 * (6 + 16 * 8 * 3 // 2)
    write_corpus(tmp_path / "a.txt", 5000)
    write_corpus(tmp_path / "b.txt", 5000)
    text = (tmp_path / "a.txt").read_text()
    assert text == (tmp_path / "b.txt").read_text() and len(text) >= 5000


def test_apps_inputs_check_the_tree_hash(tmp_path):
    tree = tmp_path / "src" / "lua-5.4.4" / "src"
    tree.mkdir(parents=True)
    (tree / "Makefile").write_text("all:\n")
    tarball = tmp_path / "lua.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(tmp_path / "src" / "lua-5.4.4", "lua-5.4.4")
    import hashlib
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    with pytest.raises(ReproduceError, match="expected sha256"):
        apps_inputs(tmp_path / "bad", tarball.as_uri(), "0" * 64)
    folder = apps_inputs(tmp_path / "good", tarball.as_uri(), digest)
    assert (folder / "lua" / "src" / "Makefile").exists()
    assert (folder / "video.y4m").stat().st_size > 0 and (folder / "corpus.txt").exists()
    with pytest.raises(ReproduceError, match="cannot download"):
        apps_inputs(tmp_path / "none", (tmp_path / "missing.tgz").as_uri(), digest)


# -- smt-spread: placement and modelled throughput --------------------------------

SMT_NOT_OK = "not ok 3 - 4 spinners on 4 cores, misplaced for less than 600 cs at a time"


def smt_records(busy_per_count, samples=6, bad=0):
    return [{"name": "smt", "spinners": n, "misplaced": bad, "samples": samples,
             "longest_cs": 0, "busy_cores": busy} for n, busy in busy_per_count.items()]


def test_smt_run_models_seed_003s_curve_and_ignores_misplacement_checks():
    values, extra, problems = parse_smt_run([SMT_NOT_OK],
                                            smt_records({1: 6, 4: 18, 8: 24}, bad=1))
    assert problems == []
    assert values == {"4 spinners": round(1 / 6, 4), "8 spinners": round(1 / 6, 4),
                      "modelled throughput": round(8 / 9, 4)}
    assert extra["series"] == [[1, 1.0], [4, 3.0], [8, 4.0]]
    assert extra["counts"][4] == {"samples": 6, "misplaced": 1, "longest_cs": 0,
                                  "busy_cores": 3.0}
    short = {"name": "smt", "spinners": 2, "misplaced": 1, "samples": 12}
    values, extra, problems = parse_smt_run([], [short])
    assert values == {} and problems[0].startswith("a record the smt series does not write")
    assert parse_smt_run(["ok 1 - x"], []) == ({}, {}, ["no samples"])


def test_smt_adapter_passes_the_counts_and_draws_the_curve(tmp_path):
    runs = {(1, c): [SMT_NOT_OK] for c in SHARE_CLASSES}
    output = marked(SMT_MARK, runs, tmp_path,
                    {run: smt_records({2: 4, 5: 7}, samples=2) for run in runs})
    runner, outcome, topologies = run_adapter(tmp_path, "smt-spread", output)
    assert "COUNTS='2 5' sh " in runner.commands[0][0] and topologies == ["smt"]
    assert set(outcome.benches) == {"2 spinners", "5 spinners", "modelled throughput"}
    assert not outcome.failures
    doc, report = save_doc(tmp_path, "smt-spread", outcome, topologies)
    assert "## smt-spread:" in report


def test_a_guest_failure_ends_reproduce_with_3_and_the_others_still_run(tmp_path,
                                                                        monkeypatch):
    ran = []

    class Runner(FakeRunner):
        def run(self, command, topology, tag, *args, **kwargs):
            ran.append(tag)
            if tag.startswith("barrier-hpc"):
                raise vm.GuestError("QEMU died")
            return super().run(command, topology, tag, *args, **kwargs)

    itrace = marked(ITRACE_MARK, {(1, c): [] for c in CLASSES}, tmp_path,
                    {(1, c): itrace_metrics(4, 0, score=c == "ule") for c in CLASSES})
    runner = Runner(tmp_path, itrace)
    monkeypatch.setattr("schedlab.reproduce.cli.GuestRunner", lambda config, mode, workdir: runner)
    rc = reproduce.main(["barrier-hpc", "interactivity-trace", "--quick", "--no-build",
                         "--out", str(tmp_path / "r")])
    assert rc == 3
    assert [t.split("-1x2")[0] for t in ran] == ["barrier-hpc", "interactivity-trace"]
    assert (tmp_path / "r" / "interactivity-trace.json").exists()
