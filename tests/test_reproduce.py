"""scripts/reproduce on the host side: argument checks and exit codes,
metadata, the JSON document, report.md and the PNG from synthetic runs,
compare, progress, the adapters' parsing (with a fake runner standing in
for QEMU), the --host refusal and the package's imports (no cycle); and
one --quick run of every experiment in the guest (debug kernel, no
timing asserted)."""

import ast
import hashlib
import io
import json
import platform
import random
import re
import shutil
import subprocess
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from schedlab import bench, build, paths, reproduce, stats
from schedlab.reproduce.compare import compare, paired_spread, spread
from schedlab.reproduce.document import METADATA_KEYS, check_png, document, load_folder, validate
from schedlab.reproduce.experiments.class_bench import MUQSS_THESIS, WAKEUP, class_bench_failure
from schedlab.reproduce.experiments.series import (marked_runs, metrics_file, rotated_command,
                                                   switch_command)
from schedlab.reproduce.experiments.smt import SMT_MARK, parse_smt
from schedlab.reproduce.experiments.starvation import STARVATION_MARK, parse_starvation
from schedlab.reproduce.experiments.unpin import UNPIN_MARK, parse_unpin, unpin_window
from schedlab.reproduce.experiments.wasted_cores import WASTED_BENCHES, wasted_runs
from schedlab.reproduce.metadata import (config_hash, cpu_model, git_state, metadata, result_dir,
                                        tool_versions)
from schedlab.reproduce.progress import Progress
from schedlab.reproduce.registry import (CLASSES, EXPERIMENTS, MUQSS_NONE, RQSHARE, SCHED_CLASS,
                                         SHARE_CLASSES, ReproduceError, bench_info, with_classes)
from schedlab.reproduce.report import describe_vs, report_section, save
from schedlab.reproduce.runner import (BOOT_SECONDS, QUICK_TIMEOUT_MIN, RELEASE_MARK, Boot,
                                       Context, boot_shares, host_refusal, run_experiment)
from schedlab.reproduce.summary import bootstrap_boots, bootstrap_change, paired, summarise

SCRIPT = paths.REPO / "scripts" / "reproduce"


def script(*args):
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


# -- arguments ---------------------------------------------------------------

@pytest.mark.parametrize("args, says", [
    (["bogus"], "unknown experiment 'bogus'"),
    (["wakeup", "bogus"], "unknown experiment 'bogus'"),
    (["-t", "3y"], "unknown topology '3y'"),
    (["--rounds", "0"], "not a positive whole number"),
    (["--rounds", "x"], "not a positive whole number"),
    (["--qemu-mode", "kvm"], "invalid choice"),
    (["--config", "distro"], "invalid choice"),
    (["--host", "-t", "2x4"], "-t do(es) not apply with --host"),
    (["--host", "--boots", "2"], "--boots do(es) not apply with --host"),
    (["--boots", "0"], "not a positive whole number"),
    (["--rounds", "5", "--boots", "6"], "--boots 6 is more than the 5 round(s)"),
    (["--classes", "ule,eevdf"], "unknown class 'eevdf'"),
    (["--classes", ","], "no class given"),
    (["compare", "/nonexistent-a", "/nonexistent-b"], "is not a result folder"),
    (["compare", "only-one"], "the following arguments are required"),
    ([], "name experiments (see --list) or give --all: all "),
    (["--rounds", "3"], "give --all"),
    (["--all", "wakeup"], "--all runs every experiment: name none with it"),
])
def test_bad_arguments_exit_2_with_one_line_before_building(args, says):
    proc = script(*args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert "build:" not in proc.stdout + proc.stderr


def test_host_refuses_without_the_run_time_switch():
    """This host runs no patched kernel: --host must say so and stop."""
    if SCHED_CLASS.exists():
        pytest.skip("this kernel has kernel.sched_class")
    proc = script("--host", "wakeup")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "sched_class does not exist" in proc.stderr


def test_host_refusal_reasons(tmp_path):
    knob = tmp_path / "sched_class"
    assert "does not exist" in host_refusal(knob, euid=0)
    knob.write_text("cfs\n")
    assert "needs root" in host_refusal(knob, euid=1000)
    assert host_refusal(knob, euid=0) is None


def test_help_and_list_build_nothing():
    proc = script("--help")
    assert proc.returncode == 0 and "compare A B" in proc.stdout and "--quick" in proc.stdout
    proc = script("--list")
    assert proc.returncode == 0
    for name in EXPERIMENTS:
        assert f"\n{name} " in "\n" + proc.stdout
    # Sources are named as a reader knows them, not by the project's own
    # tracker or its seed numbers.
    assert not re.search(r"\bissue \d|\bseed \d", proc.stdout, re.I), proc.stdout


def test_figures_timed_with_three_classes_scale_to_the_classes_run_now():
    """The per-round figures of the experiments timed before MuQSS joined
    (three classes) grow with the fourth class; muqss-thesis's were timed
    with four and grow with MuQSS's second queue-sharing mode, as
    smt-spread's grow with both; wasted-cores compares a feature off and on."""
    wakeup, thesis = EXPERIMENTS["wakeup"], EXPERIMENTS["muqss-thesis"]
    assert wakeup.estimate("1x2", False) == pytest.approx(wakeup.seconds_per_round * 4 / 3)
    assert wakeup.estimate("1x2", True) == pytest.approx(wakeup.quick_seconds * 4 / 3)
    assert thesis.estimate("1x2", False) == pytest.approx(thesis.seconds_per_round * 5 / 4)
    smt = EXPERIMENTS["smt-spread"]
    assert smt.estimate("smt", False) == pytest.approx(smt.seconds_per_round * 5 / 3)
    wasted = EXPERIMENTS["wasted-cores"]
    assert wasted.estimate("4x2", False) == wasted.seconds_per_round


def test_topologies_follow_t_only_where_the_experiment_allows():
    ex = EXPERIMENTS
    assert ex["wakeup"].topologies_for(None, False, False) == ["1x2"]
    assert ex["wakeup"].topologies_for("2x4", False, False) == ["2x4"]
    assert ex["wakeup"].topologies_for(None, True, False) == ["1x2"]
    assert ex["wasted-cores"].topologies_for(None, False, False) == ["4x2"]
    assert ex["smt-spread"].topologies_for("1x2", False, False) == ["smt"]
    assert ex["sysbench-scaling"].topologies_for("1x2", False, False) == ["1x2", "2x4", "4x8"]
    assert ex["sysbench-scaling"].topologies_for(None, False, True) == ["host"]
    assert ex["unpin-spread"].topologies_for(None, False, False) == ["2x4"]
    assert ex["unpin-spread"].topologies_for(None, True, False) == ["2x2"]
    assert ex["unpin-spread"].topologies_for("4x8", True, False) == ["4x8"]
    assert ex["starvation"].topologies_for(None, True, False) == ["1x2"]


# -- metadata ----------------------------------------------------------------

def test_metadata_has_every_key(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t: x\n")
    assert cpu_model(cpuinfo) == "Test CPU 9000"
    assert cpu_model(tmp_path / "missing") == "unknown"
    config = tmp_path / ".config"
    config.write_text("CONFIG_SCHED_ULE=y\n")
    digest = config_hash(config)
    assert digest == hashlib.sha256(b"CONFIG_SCHED_ULE=y\n").hexdigest()
    assert config_hash(tmp_path / "none") is None
    meta = metadata(EXPERIMENTS["wasted-cores"], release="6.1.192",
                    config="base", config_sha256=digest, topologies=["4x2"],
                    qemu_mode="icount", rounds=10, quick=False,
                    argv=["scripts/reproduce", "wasted-cores"],
                    git=("abc1234", True), cpu="Test CPU",
                    now=datetime(2026, 1, 2, 3, 4, 5))
    assert set(METADATA_KEYS) <= set(meta)
    assert meta["topology"] == "4x2" and meta["features"] == ["GROUP_MIN_LOAD",
                                                              "WAKE_IDLE_LONGEST"]
    assert meta["git_dirty"] is True and meta["qemu_mode"] == "icount"
    assert meta["date"].startswith("2026-01-02T03:04:05")
    # How QEMU ran and with what: the host's kernel, the accelerator, the
    # tools' versions (QEMU's among them where it is installed).
    assert meta["host_kernel"] == platform.release() and meta["accelerator"] is None
    tools = meta["tools"]
    assert tools["python3"] == platform.python_version()
    if shutil.which("qemu-system-x86_64"):
        assert tools.get("qemu-system-x86"), tools
    assert tool_versions(("no-such-package-here",)) == {"python3": platform.python_version()}


def test_git_state_of_this_repository():
    rev, dirty = git_state()
    assert len(rev) >= 7 and isinstance(dirty, bool)


def test_result_dir_is_named_by_date_and_revision_and_never_reused(tmp_path):
    now = datetime(2026, 3, 4)
    first = result_dir(tmp_path, now, ("abc1234", False))
    assert first.name == "2026-03-04-abc1234"
    assert result_dir(tmp_path, now, ("abc1234", True)).name == \
        "2026-03-04-abc1234-dirty"
    first.mkdir()
    assert result_dir(tmp_path, now, ("abc1234", False)) == first  # empty: reused
    (first / "wakeup.json").write_text("{}")
    assert result_dir(tmp_path, now, ("abc1234", False)).name == \
        "2026-03-04-abc1234-2"


def test_results_folder_is_git_ignored():
    assert "/results/" in (paths.REPO / ".gitignore").read_text().splitlines()


# -- synthetic runs ----------------------------------------------------------

def synthetic(rounds=10, ule_factor=1.5, seed=3, name="wakeup"):
    """A document as wakeup would write it: cfs around 2 s, ule
    `ule_factor` times that, bmq indistinguishable from cfs, muqss half
    of cfs; frames as a difference."""
    rng = random.Random(seed)
    runs = []
    for rnd in range(1, rounds + 1):
        cfs = 2 + rng.uniform(-0.1, 0.1)
        values = {"cfs": cfs, "ule": cfs * ule_factor * rng.uniform(0.97, 1.03),
                  "bmq": cfs * rng.uniform(0.8, 1.25),
                  "muqss": cfs * rng.uniform(0.48, 0.52)}
        for cls, value in values.items():
            runs.append({"bench": "hackbench", "variant": cls, "round": rnd, "value": value,
                         "unit": "s", "topology": "1x2"})
        for cls, missed in (("cfs", 40 + rnd % 3), ("ule", 41 - rnd % 3), ("bmq", 0),
                            ("muqss", 60)):
            runs.append({"bench": "frames-40", "variant": cls, "round": rnd,
                         "value": float(missed), "unit": "% frames missed"})
    benches = {"hackbench": bench_info("s"),
               "frames-40": bench_info("% frames missed", "difference",
                                       "more missed", "fewer missed")}
    exp = EXPERIMENTS[name]
    meta = metadata(exp, release="6.1.192-test", config="base",
                    config_sha256="0" * 64, topologies=["1x2"], qemu_mode="mttcg",
                    rounds=rounds, quick=False, argv=["scripts/reproduce"],
                    git=("abc1234", False), cpu="Test CPU")
    return document(exp, runs, benches, {"hackbench": "hackbench -g 10"}, [], meta)


def test_summary_pairs_rounds_and_states_the_verdict():
    summary = summarise(synthetic())
    hb = summary["hackbench"]
    assert hb["variants"]["cfs"]["n"] == 10
    ule, bmq = hb["vs_base"]["ule"], hb["vs_base"]["bmq"]
    assert 1.45 < ule["median"] < 1.55 and ule["ci"][0] > 1 and ule["verdict"] == "slower"
    assert bmq["ci"][0] < 1 < bmq["ci"][1] and bmq["verdict"] == "no difference measured"
    frames = summary["frames-40"]["vs_base"]
    assert frames["bmq"]["median"] < -35 and frames["bmq"]["verdict"] == "fewer missed"
    assert frames["ule"]["ci"][0] <= 0 <= frames["ule"]["ci"][1]
    assert frames["ule"]["verdict"] == "no difference measured"
    assert "cfs" not in hb["vs_base"]


def test_two_bounds_are_not_a_measured_difference():
    """Both classes there by the first sample (or never within the window)
    in most rounds: their ratio compares how soon two samples came, and
    the verdict says so whatever the interval; one bounded side alone
    still tells a difference."""
    doc = synthetic()
    for run in doc["runs"]:
        if run["bench"] == "hackbench" and run["variant"] in ("cfs", "ule"):
            run["settled_at_first_sample"] = run["round"] > 3
    hb = summarise(doc)["hackbench"]["vs_base"]
    assert hb["ule"]["ci"][0] > 1
    assert hb["ule"]["verdict"] == "not measured: both there by the first sample in most rounds"
    assert hb["bmq"]["verdict"] == "no difference measured"
    for run in doc["runs"]:
        run["settled_at_first_sample"] = run["variant"] == "cfs"
    assert summarise(doc)["hackbench"]["vs_base"]["ule"]["verdict"] == "slower"


def test_boot_shares_split_the_rounds_evenly():
    assert boot_shares(10, 1) == [10]
    assert boot_shares(10, 3) == [4, 3, 3]
    assert boot_shares(4, 4) == [1, 1, 1, 1]


def test_one_boot_keeps_the_pooled_bootstrap():
    values = [1.0, 1.1, 0.9, 1.2, 1.05, 0.95]
    assert bootstrap_boots([values]) == stats.bootstrap_ci(values)
    assert bootstrap_boots([]) == (None, None)
    assert bootstrap_boots([[1.0, 1.1], [1.2, 1.3]]) == (None, None)


def test_boots_that_disagree_widen_the_interval():
    """Fourteen rounds of one boot at 1.0 and two of another at 1.5:
    pooled rounds say 1.0 with a narrow interval; resampling the boots
    first reaches 1.5, where a second boot could land."""
    rng = random.Random(3)
    first = [1.0 + rng.uniform(-0.02, 0.02) for _ in range(14)]
    second = [1.5 + rng.uniform(-0.02, 0.02) for _ in range(2)]
    pooled = stats.bootstrap_ci(first + second)
    low, high = bootstrap_boots([first, second])
    assert pooled[1] < 1.1
    assert low < 1.03 and high > 1.45


def test_summary_over_boots_resamples_them_and_says_how_many():
    doc = synthetic()
    for run in doc["runs"]:
        run["boot"] = 1 if run["round"] <= 5 else 2
        if run["boot"] == 2 and run["variant"] == "bmq" and run["bench"] == "hackbench":
            run["value"] *= 2
    doc["metadata"]["boots"] = 2
    hb = summarise(doc)["hackbench"]["vs_base"]
    assert hb["ule"]["boots"] == 2 and hb["ule"]["verdict"] == "slower"
    assert hb["bmq"]["ci"][0] < 1.3 and hb["bmq"]["ci"][1] > 1.8
    assert "10 rounds in 2 boots): slower" in describe_vs(hb["ule"])
    assert "10 round(s) in 2 boots" in report_section(doc)
    assert "boots" in synthetic()["metadata"] and \
        "in 1 boots" not in describe_vs(
            summarise(synthetic())["hackbench"]["vs_base"]["ule"])


def test_a_measured_difference_never_prints_as_none():
    stat = {"n": 10, "median": 0.99979582, "ci": [0.99976, 0.99984],
            "verdict": "faster"}
    assert describe_vs(stat) == "0.99980 (0.99976 to 0.99984, 10 rounds): faster"
    stat = {"n": 10, "median": 0.0002, "ci": [0.0001, 0.0003], "verdict": "higher"}
    assert describe_vs(stat, 0.0) == "0.0002 (0.0001 to 0.0003, 10 rounds): higher"
    stat = {"n": 10, "median": 0.987, "ci": [0.95, 1.0], "verdict": "no difference measured"}
    assert describe_vs(stat).startswith("0.987 (0.950 to 1.000,")


def test_too_few_rounds_give_no_interval():
    hb = summarise(synthetic(rounds=2))["hackbench"]["vs_base"]["ule"]
    assert hb["ci"] == [None, None] and hb["verdict"] == "too few rounds"


def test_pairs_skip_rounds_missing_on_either_side_and_zero_bases():
    assert paired({1: 2.0, 2: 3.0, 3: 1.0}, {1: 1.0, 3: 0.0}, "ratio") == [2.0]
    assert paired({1: 2.0, 3: 1.0}, {1: 1.0, 3: 0.0}, "difference") == [1.0, 1.0]


def test_document_is_well_formed_and_problems_are_named():
    doc = synthetic()
    assert validate(json.loads(json.dumps(doc))) == []
    broken = json.loads(json.dumps(doc))
    broken["runs"][0]["value"] = "fast"
    broken["runs"][1]["variant"] = "eevdf"
    del broken["metadata"]["config_sha256"]
    problems = validate(broken)
    assert any("value 'fast'" in p for p in problems)
    assert any("unknown variant 'eevdf'" in p for p in problems)
    assert any("config_sha256" in p for p in problems)
    assert validate({"schema": 1}) != []
    assert validate({**doc, "runs": []}) == ["no runs"]


def test_save_writes_json_png_and_report(tmp_path):
    doc = synthetic()
    json_path, png, report = save(doc, tmp_path)
    assert validate(json.loads(json_path.read_text())) == []
    assert check_png(png) == []
    text = report.read_text()
    exp = EXPERIMENTS["wakeup"]
    assert f"## wakeup: {exp.title}" in text
    assert f"Reproduces: {exp.seed}." in text and f"Published shape: {exp.published}" in text
    assert "| benchmark | unit | cfs | ule | bmq | muqss | compared as | ule vs cfs | " \
        "bmq vs cfs | muqss vs cfs |" in text
    row = next(line for line in text.splitlines() if line.startswith("| hackbench "))
    assert "slower" in row and "no difference measured" in row and "10 rounds" in row
    assert "![wakeup](wakeup.png)" in text and "kernel 6.1.192-test" in text
    # A second experiment in the same folder joins the report.
    other = synthetic(name="bmq-thesis")
    save(other, tmp_path)
    text = report.read_text()
    assert text.index("## wakeup") < text.index("## bmq-thesis")


def test_check_png_rejects_what_is_not_a_png(tmp_path):
    bad = tmp_path / "x.png"
    bad.write_bytes(b"not a png" * 20)
    assert check_png(bad) == ["x.png: not a PNG"]
    assert check_png(tmp_path / "none.png") == ["none.png: missing"]


# -- compare -----------------------------------------------------------------

def test_compare_two_folders(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    save(synthetic(ule_factor=1.0, seed=4), a)
    save(synthetic(ule_factor=1.5, seed=5), b)
    save(synthetic(name="smt-spread"), b)
    text = compare(a, b)
    assert "In one folder only (not compared): smt-spread" in text
    ule = next(line for line in text.splitlines() if line.startswith("| hackbench | ule/cfs"))
    cells = [c.strip() for c in ule.strip("|").split("|")]
    change = float(cells[4].split()[1])
    low, high = (float(x) for x in cells[5].split(" to "))
    assert 1.4 < low < change < high < 1.6 and cells[6] == "higher"
    cfs = next(line for line in text.splitlines() if line.startswith("| hackbench | cfs median"))
    assert cfs.rstrip(" |").endswith("no difference measured")
    assert "| frames-40 | bmq−cfs |" in text


def test_compare_script_prints_the_table(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    save(synthetic(seed=1), a)
    save(synthetic(seed=2), b)
    proc = script("compare", str(a), str(b))
    assert proc.returncode == 0, proc.stderr
    assert "## wakeup" in proc.stdout and "| hackbench | ule/cfs |" in proc.stdout


def test_paired_spread_is_the_interquartile_range():
    assert paired_spread([1.0, 2.0, 3.0, 4.0], "ratio") is None   # too few
    values = [0.9, 1.0, 1.0, 1.1, 1.2]
    # Quartiles 1.0 and 1.1 around a median of 1.0: 10 % of it.
    assert paired_spread(values, "ratio") == pytest.approx(10.0)
    assert paired_spread([v * 3 for v in values], "difference") \
        == pytest.approx(0.3)


def moded(doc, mode, noise, seed):
    """`doc` as if run under QEMU `mode`, every value scattered by up to
    `noise` (a fraction) independently."""
    rng = random.Random(seed)
    doc = json.loads(json.dumps(doc))
    doc["metadata"]["qemu_mode"] = mode
    for run in doc["runs"]:
        run["value"] *= 1 + rng.uniform(-noise, noise)
    return doc


def test_spread_marks_the_quieter_mode(tmp_path):
    quiet, loud = tmp_path / "icount", tmp_path / "mttcg"
    save(moded(synthetic(), "icount", 0.01, 1), quiet)
    save(moded(synthetic(), "mttcg", 0.4, 2), loud)
    save(synthetic(name="smt-spread"), loud)
    text = spread([loud, quiet])
    assert "| benchmark | what | mttcg (10 rounds, mttcg) | icount (10 rounds, icount) |" \
        in text
    row = next(line for line in text.splitlines() if line.startswith("| hackbench | ule/cfs"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "ule/cfs (%)" and cells[3].endswith("*") and not cells[2].endswith("*")
    assert float(cells[2]) > 3 * float(cells[3].rstrip("*"))
    assert "| frames-40 | bmq−cfs (% frames missed) |" in text
    assert "Smallest in most comparisons: icount" in text
    assert "## smt-spread\n\nIn one folder only: nothing to compare." in text


def test_spread_over_the_first_rounds_only(tmp_path):
    """--rounds N compares folders of different lengths over as many rounds:
    a ten-round folder whose last five rounds scatter wildly is as tight as
    its first five."""
    long, short = tmp_path / "long", tmp_path / "short"
    doc = synthetic()
    for run in doc["runs"]:
        if run["round"] > 5 and run["variant"] == "ule":
            run["value"] *= 0.2 + 0.6 * (run["round"] - 6)
    save(doc, long)
    save(moded(synthetic(rounds=5), "icount", 0.01, 4), short)

    def hackbench_cells(text):
        row = next(line for line in text.splitlines() if line.startswith("| hackbench | ule/cfs"))
        return [float(c.strip().rstrip("*")) for c in row.strip("|").split("|")[2:]]
    every = hackbench_cells(spread([long, short]))
    first = hackbench_cells(spread([long, short], rounds=5))
    assert every[0] > 20 and first[0] < 10 and first[1] == every[1]
    text = spread([long, short], rounds=5)
    assert "mttcg (first 5 of 10 rounds, long) | icount (5 rounds, short) |" in text
    proc = script("spread", "--rounds", "0", str(long), str(short))
    assert proc.returncode == 2 and "not a positive whole number" in proc.stderr


def test_spread_script_needs_two_result_folders(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    save(synthetic(seed=1), a)
    proc = script("spread", str(a))
    assert proc.returncode == 2 and proc.stderr.strip() == \
        "reproduce spread: give two or more result folders"
    proc = script("spread", str(a), str(b))
    assert proc.returncode == 2 and "is not a result folder" in proc.stderr
    save(moded(synthetic(seed=2), "tcg", 0.1, 3), b)
    proc = script("spread", str(a), str(b))
    assert proc.returncode == 0, proc.stderr
    assert "## wakeup" in proc.stdout and "| hackbench | ule/cfs (%) |" in proc.stdout


def test_bootstrap_change_needs_enough_rounds():
    assert bootstrap_change([1.0] * 4, [2.0] * 10) == (None, None)
    low, high = bootstrap_change([1.0] * 6, [3.0] * 6, "difference")
    assert low == high == 2.0


# -- progress ----------------------------------------------------------------

def test_progress_reports_experiment_round_elapsed_and_estimate():
    now = [0.0]
    out = io.StringIO()
    progress = Progress([("wakeup", [100.0]), ("smt-spread", [200.0])],
                        stream=out, clock=lambda: now[0])
    progress.begin(0, 0, "1x2", 10)
    now[0] = 10
    progress.at_round(1)
    now[0] = 30
    progress.at_round(3)        # two rounds in 20 s: 8 more take 80 s
    progress.at_round(3)        # no new line for the same round
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("reproduce: [1/2] wakeup 1x2 booting")
    assert lines[-1] == ("reproduce: [1/2] wakeup 1x2 round 3/10, 0m30s elapsed, "
                         "about 4m40s left")
    assert len(lines) == 3
    progress.end_boot()         # took 30 s of an estimated 100: the next scales down
    progress.begin(1, 0, "smt", 10)
    assert progress.left() == pytest.approx(60.0)


def test_progress_heartbeat_repeats_a_line_that_did_not_change():
    now = [0.0]
    out = io.StringIO()
    progress = Progress([("smt-spread", [300.0])], stream=out, clock=lambda: now[0])
    progress.begin(0, 0, "smt", 1)
    stop = threading.Event()
    thread = threading.Thread(target=progress.heartbeat, args=(0.01, stop))
    thread.start()
    now[0] = 100.0
    while out.getvalue().count("\n") < 2:
        time.sleep(0.01)
    stop.set()
    thread.join()
    assert out.getvalue().splitlines()[1].startswith(
        "reproduce: [1/1] smt-spread smt booting, 1m40s elapsed")


# -- adapters with a fake runner ----------------------------------------------

class FakeRunner:
    """Stands in for GuestRunner: returns canned guest output per command
    and feeds its lines to the progress callback."""
    mode = "mttcg"
    config = "base"
    accel = None

    def __init__(self, tmp_path, output):
        self.tmp_path, self.output, self.commands = tmp_path, output, []

    def config_sha256(self):
        return "f" * 64

    def shared_dir(self, tag):
        return "/tmp/out"

    def run(self, command, topology, tag, on_line=lambda line: None, timeout=3600):
        self.commands.append((command, topology, timeout))
        text = self.output(command, topology) if callable(self.output) else self.output
        for line in text.splitlines():
            on_line(line)
        return Boot(text, "6.1.192-fake", 0, self.tmp_path)


def class_bench_output(rounds, benches, classes=CLASSES):
    lines = [f"{RELEASE_MARK} 6.1.192-fake"]
    lines += [f"bench {b} {b} --some-args" for b in benches]
    for rnd in range(1, rounds + 1):
        for cls in classes:
            for b in benches:
                lines.append(f"result {b} {cls} {rnd} {1.0 + rnd / 10 + (cls == 'ule')}")
    return "\n".join(lines + ["watchdog 0"]) + "\n"


def test_wakeup_adapter_turns_class_bench_output_into_runs(tmp_path):
    runner = FakeRunner(tmp_path, class_bench_output(2, WAKEUP))
    ctx = Context(rounds=2, quick=True, runner=runner)
    outcome, topologies = run_experiment(EXPERIMENTS["wakeup"], 0, ctx, None, False)
    assert topologies == ["1x2"]
    cmd = runner.commands[0][0]
    assert "class_bench.sh 'cfs ule bmq muqss' 2 0 wakeup" in cmd
    assert len(outcome.runs) == 2 * 4 * 5 and not outcome.failures
    assert set(outcome.benches) == set(WAKEUP)
    run = next(r for r in outcome.runs if r["variant"] == "ule" and r["round"] == 2)
    assert run["value"] == pytest.approx(2.2) and run["topology"] == "1x2"


def test_classes_restrict_variants_and_keep_the_base():
    """--classes: the experiment's variants of the chosen classes and its
    base; MuQSS's rqshare=none variant goes with muqss; an experiment
    whose variants are not classes is left alone."""
    thesis = with_classes(EXPERIMENTS["muqss-thesis"], ("muqss",))
    assert thesis.variants == ("cfs", "muqss", MUQSS_NONE) == thesis.classes
    wakeup = with_classes(EXPERIMENTS["wakeup"], ("cfs", "ule"))
    assert wakeup.variants == ("cfs", "ule") and wakeup.base == "cfs"
    assert with_classes(EXPERIMENTS["wakeup"], ()) is EXPERIMENTS["wakeup"]
    assert with_classes(EXPERIMENTS["wasted-cores"], ("ule",)) is EXPERIMENTS["wasted-cores"]
    assert wakeup.estimate("1x2", True) < EXPERIMENTS["wakeup"].estimate("1x2", True)


def test_classes_reach_the_guest_command_and_the_document(tmp_path):
    runner = FakeRunner(tmp_path, class_bench_output(1, WAKEUP, ("cfs", "bmq")))
    ctx = Context(rounds=1, quick=True, runner=runner)
    exp = with_classes(EXPERIMENTS["wakeup"], ("bmq",))
    outcome, _ = run_experiment(exp, 0, ctx, None, False)
    assert "class_bench.sh 'cfs bmq' 1 0 wakeup" in runner.commands[0][0]
    assert not outcome.failures and {r["variant"] for r in outcome.runs} == {"cfs", "bmq"}
    assert ctx.classes == ()


def test_a_quick_boot_may_hang_for_minutes_not_a_quarter_of_an_hour(tmp_path):
    """The guest's limit follows the estimate: with --quick a hung smoke
    run costs at most a few minutes (CI once lost 15 on one); full runs
    keep their generous limit."""
    limits = {}
    for quick in (True, False):
        runner = FakeRunner(tmp_path, class_bench_output(1, WAKEUP))
        ctx = Context(rounds=1, quick=quick, runner=runner)
        run_experiment(EXPERIMENTS["wakeup"], 0, ctx, None, False)
        limits[quick] = runner.commands[0][2]
    estimate = BOOT_SECONDS + EXPERIMENTS["wakeup"].estimate("1x2", True)
    assert QUICK_TIMEOUT_MIN <= limits[True] <= 3 * estimate < 900
    assert limits[False] >= 900


def test_scaling_adapter_names_runs_by_topology_and_notes_missing_ones(tmp_path):
    def output(command, topology):
        classes = ("cfs", "ule") if topology == "2x4" else CLASSES
        return class_bench_output(1, ("sysbench-threads", "sysbench-mutex"), classes)
    runner = FakeRunner(tmp_path, output)
    ctx = Context(rounds=1, quick=False, runner=runner)
    ctx.program = lambda name: Path("/bin/true")
    outcome, topologies = run_experiment(
        EXPERIMENTS["sysbench-scaling"], 0, ctx, None, False)
    assert topologies == ["1x2", "2x4", "4x8"]
    assert "'sysbench-threads,sysbench-mutex'" in runner.commands[0][0]
    assert {r["bench"] for r in outcome.runs} == {
        f"sysbench-{b} {t}" for b in ("threads", "mutex") for t in topologies}
    assert {(f["bench"], f["variant"]) for f in outcome.failures} == {
        (f"sysbench-{b} 2x4", c) for b in ("threads", "mutex") for c in ("bmq", "muqss")}


def test_muqss_thesis_adapter_passes_the_frame_task_and_the_lua_tree(tmp_path, monkeypatch):
    """Seed 004's three tests in one class_bench.sh boot: the frame task
    (uleload) and the applications' Lua tree reach the guest, every class
    runs every benchmark, and missed frames compare as a difference."""
    monkeypatch.setattr("schedlab.reproduce.experiments.class_bench.apps_inputs", lambda: tmp_path / "apps")
    runner = FakeRunner(tmp_path, class_bench_output(2, MUQSS_THESIS, SHARE_CLASSES))
    ctx = Context(rounds=2, quick=False, runner=runner)
    ctx.program = lambda name: Path(f"/progs/{name}")
    outcome, _ = run_experiment(EXPERIMENTS["muqss-thesis"], 0, ctx, None, False)
    cmd = runner.commands[0][0]
    assert cmd.endswith(f"class_bench.sh 'cfs ule bmq muqss muqss:rqshare=none' 2 1 muqss "
                        f"/progs/uleload '' {tmp_path / 'apps'}")
    assert {r["bench"] for r in outcome.runs} == {
        "messaging-g20", "make-j1", "make-jN", *(f"frames-{n}" for n in (10, 20, 30, 40, 50)),
        "messaging-switches"}
    assert {r["variant"] for r in outcome.runs} == set(SHARE_CLASSES)
    assert outcome.benches["frames-50"]["compare"] == "difference"
    assert outcome.benches["make-j1"]["compare"] == "ratio" and not outcome.failures


def test_class_bench_without_results_is_an_error(tmp_path):
    runner = FakeRunner(tmp_path, "class_bench.sh: unknown suite\n")
    ctx = Context(rounds=1, quick=True, runner=runner)
    with pytest.raises(ReproduceError, match="no result"):
        run_experiment(EXPERIMENTS["wakeup"], 0, ctx, None, False)


SMT_OUTPUT = """reproduce-uname-r 6.1.192-fake
reproduce-smt 1 cfs
TAP version 13
# 0 of 4 failed
reproduce-smt 1 ule
"""


def smt_files(files):
    """SMT_OUTPUT's metrics, as the guest writes them, in `files`."""
    for cls, counts in (("cfs", ((2, 0, 0), (3, 1, 0), (4, 3, 100))), ("ule", ((2, 6, 250),))):
        (files / metrics_file(SMT_MARK, 1, cls)).write_text("".join(
            json.dumps({"name": "smt", "spinners": n, "misplaced": bad, "samples": 12,
                        "longest_cs": longest, "busy_cores": 12 * min(n, 4) - bad}) + "\n"
            for n, bad, longest in counts))
    return files


def test_smt_parse_reads_misplaced_fractions_per_class_and_round(tmp_path):
    runs, failures = parse_smt(SMT_OUTPUT, "smt", smt_files(tmp_path))
    assert [(r["bench"], r["variant"], r["round"], r["value"]) for r in runs
            if r["bench"] != "modelled throughput"] == [
        ("2 spinners", "cfs", 1, 0.0), ("3 spinners", "cfs", 1, round(1 / 12, 4)),
        ("4 spinners", "cfs", 1, 0.25), ("2 spinners", "ule", 1, 0.5)]
    assert failures == []


def test_smt_adapter_reports_classes_without_samples(tmp_path):
    smt_files(tmp_path)
    ctx = Context(rounds=1, quick=True, runner=FakeRunner(tmp_path, SMT_OUTPUT))
    ctx.program = lambda name: Path("/bin/true")
    outcome, topologies = run_experiment(EXPERIMENTS["smt-spread"], 0, ctx, "1x2", False)
    assert topologies == ["smt"] and outcome.release == "6.1.192-fake"
    assert [f["variant"] for f in outcome.failures] == ["bmq", "muqss", MUQSS_NONE]


def test_wasted_runs_pair_off_and_on_by_round():
    measured = {"group-imbalance": {
        side: {"runs": [{"name": f"group-imbalance-{side}-{i}", "elapsed_ms": 1000.0 * i,
                         "violations": 0, "idle_overloaded_ms": 10.0 * i + (side == "on"),
                         "idle_overloaded_fraction": 0.01, "lost_records": 0}
                        for i in (1, 2)]} for side in ("off", "on")}}
    runs = wasted_runs(measured, "4x2")
    assert len(runs) == 8
    idle_on_2 = next(r for r in runs if r["bench"] == "group-imbalance idle-while-overloaded"
                     and r["variant"] == "on" and r["round"] == 2)
    assert idle_on_2["value"] == 21.0 and idle_on_2["violations"] == 0
    assert set(r["bench"] for r in runs) <= set(WASTED_BENCHES)


def test_rotated_command_and_marked_runs_split_the_output_per_class_and_round():
    cmd = rotated_command(3, "m", "run")
    order = re.findall(r"echo (\S+) >/proc/sys/kernel/sched_class &&", cmd)
    assert order == ["cfs", "ule", "bmq", "muqss", "ule", "bmq", "muqss", "cfs",
                     "bmq", "muqss", "cfs", "ule"]
    assert cmd.endswith('[ -z "$first" ] || echo $first >/proc/sys/kernel/sched_class')
    # MuQSS's queue sharing is put back to the boot's before every switch,
    # and set for the variant that names it.
    assert cmd.startswith("first=$(cat /proc/sys/kernel/sched_class 2>/dev/null); "
                          f"share0=$(cat {RQSHARE} 2>/dev/null); ")
    assert cmd.count(f'( [ -z "$share0" ] || echo "$share0" >{RQSHARE} )') == 13
    both = rotated_command(1, "m", "run", SHARE_CLASSES)
    assert (f"echo muqss >/proc/sys/kernel/sched_class && echo none >{RQSHARE} "
            "&& sleep 1 && echo m 1 muqss:rqshare=none && run") in both
    with pytest.raises(ValueError):
        switch_command("cfs:rqshare=none")
    metered = rotated_command(1, "m", "run", SHARE_CLASSES, "/tmp/out")
    assert ("echo m 1 muqss:rqshare=none && "
            "SCHED_TEST_METRICS=/tmp/out/m.1.muqss_rqshare_none.jsonl run") in metered
    assert "SCHED_TEST_METRICS" not in both
    text = "boot noise\nm 1 cfs\na\nb\nm 1 ule\nm 2 bmq\nc\nm x y\n"
    assert marked_runs(text, "m") == {(1, "cfs"): ["a", "b"], (1, "ule"): [],
                                                (2, "bmq"): ["c", "m x y"]}


def test_rotated_command_on_a_reference_kernel_succeeds():
    """A reference kernel has no kernel.sched_class: reading and restoring
    it must not fail the command (interactivity-trace's Project C rounds
    were all lost to the restore's error, exit 2)."""
    if Path(SCHED_CLASS).exists():
        pytest.skip("this host runs a kernel with kernel.sched_class")
    out = subprocess.run(["sh", "-c", rotated_command(2, "m", "true", ("prjc-bmq",))],
                         capture_output=True, text=True)
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout == "m 1 prjc-bmq\nm 2 prjc-bmq\n"


def starvation_output(files, cls, beside_ns_per_50cs, problem=None, rnd=1):
    """starvation_series.sh's output for one run as the guest prints it,
    its metrics written to the boot's shared folder `files`: the hog alone
    at 100 % from 10.00 s, the pool launched at 11.00 s, its tids seen at
    11.10 s (threads start at 13.10 s, end at 17.10 s), the hog getting
    `beside_ns_per_50cs` per half second from 14.10 s to 16.60 s, the pool
    gone at 17.20 s, the hog alone again."""
    lines = [f"reproduce-starvation {rnd} {cls}", "TAP version 13", "1..5",
             "ok 1 - CPU 1 for the loads, CPU 0 for this shell",
             f"# starvation class {cls} cpu 1 threads 80 run_us 1000 sleep_us 4000 "
             "pool_s 4 step 0.5 autogroup 1",
             f"ok 2 - the spinner runs on {cls}", "ok 3 - the pool's 80 threads exist",
             f"not ok 4 - {problem}" if problem else "ok 4 - the pool ended on time",
             "ok 5 - the spinner ran to the end of the run", "# 0 of 5 failed"]

    def hog(t, ns):
        return {"name": "hog", "t_cs": t, "run_ns": ns}

    def pool(event, t):
        return {"name": "pool", "event": event, "t_cs": t}

    records = [hog(1000, 0), hog(1050, 500000000), hog(1100, 1000000000),
               pool("launch", 1100), hog(1110, 1050000000), pool("start", 1310),
               pool("end", 1710), hog(1410, 1200000000)]
    ns = 1200000000
    for t in range(1460, 1711, 50):
        ns += beside_ns_per_50cs
        records.append(hog(t, ns))
    records += [pool("gone", 1720), hog(1720, ns)]
    for t in (1770, 1820):
        ns += 500000000
        records.append(hog(t, ns))
    (files / metrics_file(STARVATION_MARK, rnd, cls)).write_text(
        "".join(json.dumps(r) + "\n" for r in records))
    return "\n".join(lines) + "\n"


def test_parse_starvation_reads_the_hogs_share_per_phase(tmp_path):
    text = ("reproduce-uname-r 6.1.192-fake\n" + starvation_output(tmp_path, "cfs", 250000000)
            + starvation_output(tmp_path, "ule", 0)
            + starvation_output(tmp_path, "bmq", 10000000, problem="the pool ended on time"))
    runs, failures = parse_starvation(text, "1x2", tmp_path)
    values = {(r["bench"], r["variant"]): r["value"] for r in runs}
    assert values == {("hog alone", "cfs"): 100.0, ("hog beside the pool", "cfs"): 50.0,
                      ("hog after the pool", "cfs"): 100.0, ("hog alone", "ule"): 100.0,
                      ("hog beside the pool", "ule"): 0.0, ("hog after the pool", "ule"): 100.0}
    assert failures == [{"bench": "all", "variant": "bmq", "round": 1,
                         "why": "the pool ended on time"}]
    beside = next(r for r in runs if r["bench"] == "hog beside the pool" and r["variant"] == "ule")
    assert beside["marks"] == {"pool launched": -2.1, "threads start": 0.0, "threads end": 4.0}
    assert beside["series"][0] == [-2.6, 100.0]
    assert [y for x, y in beside["series"] if 1.0 < x <= 4.0] == [0.0] * 6
    assert "series" not in next(r for r in runs if r["bench"] == "hog alone")


def test_parse_starvation_notes_a_window_without_samples(tmp_path):
    text = starvation_output(tmp_path, "cfs", 250000000)
    path = tmp_path / metrics_file(STARVATION_MARK, 1, "cfs")
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines()
                            if '"gone"' not in line))
    runs, failures = parse_starvation(text, "1x2", tmp_path)
    assert {r["bench"] for r in runs} == {"hog alone", "hog beside the pool"}
    assert failures == [{"bench": "hog after the pool", "variant": "cfs", "round": 1,
                         "why": "fewer than two samples in its window"}]


def test_parse_starvation_names_a_run_without_metrics_or_with_a_bad_record(tmp_path):
    """A run whose metrics file is missing has no samples; a record the
    script does not write is a problem of its run, not a silent gap, and
    a line cut short mid-write ends the run's records."""
    text = starvation_output(tmp_path, "cfs", 250000000)
    text += "reproduce-starvation 1 ule\nok 1 - CPU 1 for the loads\n"
    runs, failures = parse_starvation(text, "1x2", tmp_path)
    assert {r["variant"] for r in runs} == {"cfs"}
    assert failures == [{"bench": "all", "variant": "ule", "round": 1, "why": "no samples"}]
    path = tmp_path / metrics_file(STARVATION_MARK, 1, "cfs")
    good = path.read_text()
    path.write_text(good + '{"name": "hog", "t_cs": "soon"}\n')
    _, failures = parse_starvation(text, "1x2", tmp_path)
    assert failures[0]["variant"] == "cfs" and "without an integer t_cs" in failures[0]["why"]
    path.write_text(good + '{"name": "hog", "t_c')
    runs, _ = parse_starvation(text, "1x2", tmp_path)
    assert {r["variant"] for r in runs} == {"cfs"}


UNPIN_OUTPUT = """reproduce-uname-r 6.1.192-fake
reproduce-unpin 1 cfs
TAP version 13
1..3
ok 1 - uleload started 4 spinners
ok 2 - 4 spinners on CPU 0 before the unpinning
ok 3 - the spinners were unpinned (3 samples)
# 0 of 3 failed
reproduce-unpin 1 ule
TAP version 13
# 0 of 3 failed
"""
UNPIN_METRICS = {
    "cfs": [{"name": "unpin", "cpus": 4, "window_cs": 500, "step": 0.25, "always_steal": 0},
            {"name": "pinned", "cpus": "0 0 0 0"},
            {"name": "spread", "t_cs": 26, "cpus": [0, 1, 0, 0]},
            {"name": "spread", "t_cs": 51, "cpus": [0, 1, 2, 3]},
            {"name": "spread", "t_cs": 77, "cpus": [0, 1, 3, 2]}],
    "ule": [{"name": "unpin", "cpus": 4, "window_cs": 500, "step": 0.25, "always_steal": 0},
            {"name": "spread", "t_cs": 26, "cpus": [0, 0, 0, 0]},
            {"name": "spread", "t_cs": 51, "cpus": [0, 0, 1, None]},
            {"name": "spread", "t_cs": 500, "cpus": [0, 0, 1, 2]}],
}


def unpin_files(files):
    """UNPIN_OUTPUT's metrics, as the guest writes them, in `files`."""
    for cls, records in UNPIN_METRICS.items():
        (files / metrics_file(UNPIN_MARK, 1, cls)).write_text(
            "".join(json.dumps(r) + "\n" for r in records))
    return files


def test_parse_unpin_finds_the_time_to_one_per_cpu_or_flags_never(tmp_path):
    runs, failures = parse_unpin(UNPIN_OUTPUT, "2x2", unpin_files(tmp_path))
    assert not failures
    values = {(r["bench"], r["variant"]): r["value"] for r in runs}
    assert values == {("time to one per CPU", "cfs"): 0.51,
                      ("CPUs without a spinner", "cfs"): pytest.approx(2 / 3, abs=1e-3),
                      ("time to one per CPU", "ule"): 5.0,
                      ("CPUs without a spinner", "ule"): 2.0}
    cfs, ule = (next(r for r in runs if r["bench"] == "time to one per CPU"
                     and r["variant"] == v) for v in ("cfs", "ule"))
    assert not cfs["censored"] and ule["censored"] and ule["always_steal"] == "0"
    assert cfs["series"] == [[0.0, 1], [0.26, 2], [0.51, 4], [0.77, 4]]
    assert cfs["first_sample"] == 0.26 and not cfs["settled_at_first_sample"]
    assert ule["threads_per_cpu"] == [[4, 0, 0, 0], [2, 1, 0, 0], [2, 1, 1, 0]]
    bad = UNPIN_OUTPUT.replace("ok 2 - 4 spinners", "not ok 2 - 4 spinners")
    runs, failures = parse_unpin(bad, "2x2", tmp_path)
    assert {r["variant"] for r in runs} == {"ule"}
    assert failures[0]["variant"] == "cfs" and "4 spinners on CPU 0" in failures[0]["why"]


def test_unpin_window_gives_the_balancer_time_to_fill_every_cpu():
    assert unpin_window(8, False) == 15
    assert unpin_window(32, False) == 47
    assert unpin_window(32, True) == 5


def test_series_adapters_report_missing_classes_and_plot_over_time(tmp_path):
    """Both adapters with canned guest output: the quick sizes reach the
    guest, a class without output is a failure, and the saved figure and
    report carry the time series and the censored runs."""
    unpin_files(tmp_path)
    for name, output, says in (
            ("starvation", "reproduce-uname-r 6.1.192-fake\n"
             + starvation_output(tmp_path, "cfs", 250000000)
             + starvation_output(tmp_path, "ule", 0),
             "POOL_S=4 ALONE_S=2 AFTER_S=2 sh "),
            ("unpin-spread", UNPIN_OUTPUT, "WINDOW_S=5 STEP=0.25 sh ")):
        runner = FakeRunner(tmp_path, output)
        ctx = Context(rounds=1, quick=True, runner=runner)
        ctx.program = lambda prog: Path("/bin/true")
        exp = EXPERIMENTS[name]
        outcome, topologies = run_experiment(exp, 0, ctx, None, False)
        assert says in runner.commands[0][0] and outcome.release == "6.1.192-fake"
        assert outcome.failures == [{"bench": "all", "variant": c, "round": 1,
                                     "why": "no run"} for c in ("bmq", "muqss")]
        meta = metadata(exp, release=outcome.release, config="debug",
                        config_sha256="0" * 64, topologies=topologies,
                        qemu_mode="mttcg", rounds=1, quick=True,
                        argv=["scripts/reproduce"], git=("abc1234", False),
                        cpu="Test CPU")
        doc = document(exp, outcome.runs, outcome.benches, outcome.commands,
                       outcome.failures, meta)
        assert validate(doc) == []
        json_path, png, report = save(doc, tmp_path / "r")
        assert check_png(png) == []
        assert json.loads(json_path.read_text())["runs"][0]["topology"] == topologies[0]
    text = report.read_text()
    assert "## starvation:" in text and "## unpin-spread:" in text
    assert "Never within the window" in text and "time to one per CPU: ule 1 of 1" in text
    assert "Already there at the first sample" not in text


# -- the whole command, with the fake runner -----------------------------------

def test_main_writes_a_result_folder(tmp_path, monkeypatch, capsys):
    runner = FakeRunner(tmp_path, class_bench_output(5, WAKEUP))
    monkeypatch.setattr("schedlab.reproduce.cli.GuestRunner", lambda config, mode, workdir: runner)
    monkeypatch.setattr(build, "build", lambda config: 0)
    out = tmp_path / "results"
    threads = set(threading.enumerate())
    rc = reproduce.main(["wakeup", "--rounds", "5", "--out", str(out)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    # Its progress heartbeat ends with it: left running, it wrote into
    # later tests' stderr (a sched-vis error test failed on such a line).
    assert set(threading.enumerate()) <= threads
    doc = json.loads((out / "wakeup.json").read_text())
    assert validate(doc) == [] and doc["metadata"]["rounds"] == 5
    assert doc["metadata"]["kernel_release"] == "6.1.192-fake"
    assert doc["metadata"]["config_sha256"] == "f" * 64
    assert doc["metadata"]["command_line"] == f"scripts/reproduce wakeup --rounds 5 --out {out}"
    assert check_png(out / "wakeup.png") == []
    assert "## wakeup" in (out / "report.md").read_text()
    assert "reproduce: [1/1] wakeup 1x2 round 5/5" in captured.err
    assert "ule vs cfs" in captured.out


def test_boots_share_the_rounds_and_number_them_on(tmp_path, monkeypatch, capsys):
    """--boots 2 --rounds 5: a boot of 3 rounds, then one of 2, each in
    its own folder; rounds 1-3 from the first, 4-5 from the second, each
    run and failure naming its boot."""
    def output(command, topology):
        rounds = int(command.split("class_bench.sh 'cfs ule bmq muqss' ")[1].split()[0])
        text = class_bench_output(rounds, WAKEUP)
        return text.replace("result pipe bmq 1 1.1", "result pipe bmq 1 fail")
    runner = FakeRunner(tmp_path, output)
    runner.workdir = tmp_path / "work"
    dirs = []
    real_run = runner.run

    def run(*args, **kwargs):
        dirs.append(runner.workdir)
        return real_run(*args, **kwargs)
    runner.run = run
    monkeypatch.setattr("schedlab.reproduce.cli.GuestRunner", lambda config, mode, workdir: runner)
    monkeypatch.setattr(build, "build", lambda config: 0)
    out = tmp_path / "results"
    rc = reproduce.main(["wakeup", "--rounds", "5", "--boots", "2", "--out", str(out)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert [c[0].split("class_bench.sh 'cfs ule bmq muqss' ")[1].split()[0]
            for c in runner.commands] == ["3", "2"]
    assert dirs == [tmp_path / "work" / "boot-1", tmp_path / "work" / "boot-2"]
    assert runner.workdir == tmp_path / "work"
    doc = json.loads((out / "wakeup.json").read_text())
    assert validate(doc) == [] and doc["metadata"]["boots"] == 2
    assert {(r["round"], r["boot"]) for r in doc["runs"]} == {
        (1, 1), (2, 1), (3, 1), (4, 2), (5, 2)}
    assert sorted((f["round"], f["boot"]) for f in doc["failures"]) == [(1, 1), (4, 2)]
    assert "wakeup 1x2 boot 2/2 round 2/2" in captured.err
    assert "in 2 boots" in captured.out


def test_quick_fails_on_failed_runs(tmp_path, monkeypatch, capsys):
    text = class_bench_output(1, WAKEUP).replace("result pipe bmq 1 1.1", "result pipe bmq 1 fail")
    runner = FakeRunner(tmp_path, text)
    monkeypatch.setattr("schedlab.reproduce.cli.GuestRunner", lambda config, mode, workdir: runner)
    monkeypatch.setattr(build, "build", lambda config: 0)
    rc = reproduce.main(["wakeup", "--quick", "--out", str(tmp_path / "r")])
    assert rc == 1 and "failed runs" in capsys.readouterr().err
    doc = json.loads((tmp_path / "r" / "wakeup.json").read_text())
    assert doc["failures"] == [{"bench": "pipe", "variant": "bmq", "round": 1,
                                "why": "tool failed"}]
    assert not [r for r in doc["runs"] if r["bench"] == "pipe" and r["variant"] == "bmq"]
    assert bench.parse(text)[2] == [("pipe", "bmq", "1")]


def test_a_stall_watchdog_report_is_a_failure():
    failure = class_bench_failure(("watchdog", "reports", "2"), "")
    assert failure == {"bench": "all", "variant": "all", "why": "2 stall-watchdog reports"}


# -- the package's imports -----------------------------------------------------

def schedlab_imports():
    """{module: the modules of scripts/lib/schedlab it imports}, read from
    the import statements of every file there (inside functions too),
    relative ones resolved; `from P import M` names module P.M where that
    is one. A package's __init__, which Python runs before any of its
    modules, counts only where a statement names it."""
    lib = paths.REPO / "scripts" / "lib"
    files = {".".join(p.relative_to(lib).with_suffix("").parts).removesuffix(".__init__"): p
             for p in (lib / "schedlab").rglob("*.py")}
    graph = {}
    for name, path in files.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        graph[name] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names} & set(files)
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
                module = ".".join(m for m in (base, node.module) if m)
                graph[name] |= {f"{module}.{a.name}" if f"{module}.{a.name}" in files
                                else module for a in node.names} & set(files)
    return graph


def import_cycle(graph):
    """A list of modules each importing the next and the last the first,
    or None."""
    state, path = {}, []

    def visit(module):
        state[module] = "open"
        path.append(module)
        for other in sorted(graph[module]):
            if state.get(other) == "open":
                return path[path.index(other):]
            if other not in state and (cycle := visit(other)):
                return cycle
        state[module] = "done"
        path.pop()
        return None
    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_reproduce_package_has_no_import_cycle():
    """schedlab.reproduce is a package whose modules import in one
    direction (registry and summary first, cli last), and none of
    schedlab imports a module that imports it back: bench.py and
    reproduce share stats.py's bootstrap without importing each other."""
    graph = schedlab_imports()
    assert import_cycle(graph) is None, " -> ".join(import_cycle(graph))
    assert graph["schedlab.bench"] == graph["schedlab.reproduce.summary"] == {"schedlab.stats"}
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c"]


# -- the quick run in the guest ----------------------------------------------

QUICK_BENCHES = {
    "wakeup": {"hackbench", "pipe", "messaging", "sysbench-threads", "sysbench-mutex"},
    "bmq-thesis": {"messaging-g10", "messaging-g20", "frames-10", "frames-20", "frames-40"},
    "muqss-thesis": {"messaging-g20", "make-j1", "make-jN",
                     *(f"frames-{n}" for n in (10, 20, 30, 40, 50)), "messaging-switches"},
    "sysbench-scaling": {f"sysbench-{b} 1x2" for b in ("threads", "mutex")},
    "wasted-cores": {f"{s} {m}" for s in ("group-imbalance", "overload-on-wakeup")
                     for m in ("job", "idle-while-overloaded")},
    "smt-spread": {"2 spinners", "5 spinners", "modelled throughput"},
    "starvation": {"hog alone", "hog beside the pool", "hog after the pool"},
    "unpin-spread": {"time to one per CPU", "CPUs without a spinner"},
    "interactivity-trace": {"starved threads", "fairness"},
    "wakeup-latency": {f"{p} {q}" for p in ("cyclictest", "rt-app", "wakelat")
                       for q in ("p50", "p99", "p99.9")},
    "applications": {"make-jN alone", "xz beside zstd", "zstd beside xz"},
    "barrier-hpc": {"completion time", "barrier wait"},
}


def quick_run_failure(proc, console_lines=80):
    """What a failed quick run says about why: each experiment's failure
    and problem lines (printed as it ends, so far from the output's tail),
    the console's last lines of each guest that failed, then the tail."""
    why, inside = [], False
    for line in proc.stderr.splitlines():
        inside = bool(re.match(r"reproduce: \S+( failed:|: )", line)) or \
            (inside and line.startswith("  "))
        if inside:
            why.append(line)
    consoles = []
    for folder in re.findall(r"files in (\S+?)[);]*$", "\n".join(why), re.M):
        log = Path(folder) / "console.log"
        if log.exists():
            tail = log.read_text(errors="replace").splitlines()[-console_lines:]
            consoles.append(f"--- {log}, last {len(tail)} lines:\n" + "\n".join(tail))
    return "\n".join(why + consoles + ["--- tail:", proc.stdout[-2000:] + proc.stderr[-2000:]])


def test_quick_run_failure_names_why_and_the_guest_console(tmp_path):
    """A failed experiment's reason and its guest's console reach the
    assertion message, though they were printed long before the tail."""
    guest = tmp_path / "wakeup-1x2"
    guest.mkdir()
    (guest / "console.log").write_text("".join(f"line {i}\n" for i in range(100)))
    stderr = ("reproduce: [1/2] wakeup 1x2 booting\n"
              f"reproduce: wakeup failed: guest failure: guest did not finish within 900 s "
              f"(topology 1x2, command 'x'); files in {guest}\n"
              "reproduce: starvation failed: guest failure: kernel reported trouble:\n"
              "  BUG: sleeping function called\n"
              + "vm: booting\n" * 2000 + "reproduce: failed: wakeup, starvation\n")
    proc = subprocess.CompletedProcess([], 1, "table\n", stderr)
    text = quick_run_failure(proc, console_lines=5)
    assert "wakeup failed: guest failure: guest did not finish" in text
    assert "  BUG: sleeping function called" in text
    assert "line 99" in text and "line 95" in text and "line 94" not in text
    assert "[1/2]" not in text.split("--- tail:")[0]
    assert text.rstrip().endswith("reproduce: failed: wakeup, starvation")


# The quick run's experiments in three groups, each compared under CFS and
# one class (--classes), so that each experiment runs, and each class runs
# four experiments, at half the guest time of every class in each: the
# guest checks of each class are its own suites'. The thesis experiments go
# with their class, muqss-thesis and smt-spread with MuQSS's two sharing
# modes; wasted-cores runs CFS alone (fixes off and on) whatever the group.
QUICK_GROUPS = {
    "ule": ("wakeup", "sysbench-scaling", "starvation", "interactivity-trace"),
    "bmq": ("bmq-thesis", "unpin-spread", "applications", "wasted-cores"),
    "muqss": ("muqss-thesis", "smt-spread", "wakeup-latency", "barrier-hpc"),
}


def test_quick_groups_run_every_experiment_once():
    groups = [n for names in QUICK_GROUPS.values() for n in names]
    assert sorted(groups) == sorted(QUICK_BENCHES)
    assert set(QUICK_BENCHES) == {n for n, e in EXPERIMENTS.items() if not e.host_only}


@pytest.mark.parametrize("cls", [pytest.param(c, marks=getattr(pytest.mark, c))
                                 for c in QUICK_GROUPS])
def test_quick_run_of_every_experiment_in_the_guest(debug_kernel, tmp_path, cls):
    """scripts/reproduce --quick --classes cfs,CLASS on the debug kernel,
    for CLASS's group of experiments (QUICK_GROUPS): each completes with
    a value for each of its benchmarks and variants (CFS and CLASS, both
    MuQSS modes for MuQSS), no failed run (a tool's failure, a
    stall-watchdog report), well-formed JSON and PNG, a report that names
    each; timing is not asserted. This is also the smoke test of
    class_bench.sh's three suites."""
    out = tmp_path / "results"
    names = QUICK_GROUPS[cls]
    proc = subprocess.run([str(SCRIPT), "--quick", "--no-build", "--classes", f"cfs,{cls}",
                           "--out", str(out), *names],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, quick_run_failure(proc)
    docs = load_folder(out)
    assert set(docs) == set(names), sorted(docs)
    report = (out / "report.md").read_text()
    for name, doc in docs.items():
        assert validate(doc) == [], (name, validate(doc))
        assert check_png(out / f"{name}.png") == [], name
        assert not doc["failures"], (name, doc["failures"])
        assert doc["metadata"]["config"] == "debug" and doc["metadata"]["quick"]
        assert doc["metadata"]["kernel_release"], name
        assert {v.partition(":")[0] for v in doc["variants"]} <= {"cfs", cls, "off", "on"}
        seen = {(r["bench"], r["variant"]) for r in doc["runs"]}
        want = {(b, v) for b in QUICK_BENCHES[name] for v in doc["variants"]}
        assert seen == want, (name, sorted(want - seen))
        assert f"## {name}:" in report


def test_docs_pages_are_written_from_the_newest_runs_and_again_from_themselves(tmp_path):
    """reproduce docs: a page per experiment (the newest run across the
    folders), its JSON and figure beside it, and an index; given its own
    output it writes the same pages again. docutils reads each page
    without a warning."""
    from docutils.core import publish_doctree
    old, new, out = tmp_path / "old", tmp_path / "new", tmp_path / "results"
    first, second = synthetic(ule_factor=1.0, seed=4), synthetic(ule_factor=1.5, seed=5)
    first["metadata"]["date"] = "2026-01-01T00:00:00+00:00"
    second["metadata"]["date"] = "2026-02-01T00:00:00+00:00"
    save(second, new)
    save(first, old)
    save(synthetic(name="smt-spread"), old)
    proc = script("docs", str(old), str(new), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "index.rst", "smt-spread.json", "smt-spread.png", "smt-spread.rst",
        "wakeup.json", "wakeup.png", "wakeup.rst"]
    assert json.loads((out / "wakeup.json").read_text())["metadata"]["date"] == \
        second["metadata"]["date"]
    page = (out / "wakeup.rst").read_text()
    assert "scripts/reproduce docs" in page and ".. image:: wakeup.png" in page
    assert "ule vs cfs" in page and "hackbench" in page
    assert "; command: scripts/reproduce." in page
    for name in ("wakeup.rst", "smt-spread.rst", "index.rst"):
        warnings = io.StringIO()
        publish_doctree((out / name).read_text(),
                        settings_overrides={"warning_stream": warnings, "report_level": 2})
        assert not warnings.getvalue(), (name, warnings.getvalue())
    assert "- `smt-spread <smt-spread.rst>`__\n- `wakeup <wakeup.rst>`__\n" in \
        (out / "index.rst").read_text()
    again = script("docs", str(out), "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert (out / "wakeup.rst").read_text() == page


def test_docs_refuses_a_folder_without_results(tmp_path):
    proc = script("docs", str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 \
        and "is not a result folder" in proc.stderr, proc.stderr


@pytest.mark.parametrize("key,value", [("metadata", None), ("runs", None), ("schema", 99)])
def test_compare_and_spread_refuse_a_malformed_document(tmp_path, key, value):
    """A document that validate() faults (without metadata, without runs,
    of another schema) is one line and status 2 for compare and spread,
    not a traceback."""
    good, bad = tmp_path / "good", tmp_path / "bad"
    save(synthetic(seed=1), good)
    doc = synthetic(seed=2)
    if value is None:
        del doc[key]
    else:
        doc[key] = value
    bad.mkdir()
    (bad / "wakeup.json").write_text(json.dumps(doc))
    for command in ("compare", "spread"):
        proc = script(command, str(good), str(bad))
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and "wakeup document is malformed" in proc.stderr \
            and key in proc.stderr, proc.stderr


def test_a_missing_plotting_module_stops_the_run_before_building(monkeypatch, capsys):
    """Without matplotlib the report and figures cannot be written: say so
    before anything is built or run, not after the JSON."""
    from schedlab.reproduce import cli as reproduce_cli
    real = reproduce_cli.importlib.util.find_spec
    monkeypatch.setattr(reproduce_cli.importlib.util, "find_spec",
                        lambda name, *rest: None if name == "matplotlib" else real(name, *rest))
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("built"))
    assert reproduce_cli.main(["wakeup"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "need matplotlib: run scripts/setup" in err, err
