"""scripts/reproduce's adapters for real hardware (schedlab/reproduce/
experiments/host.py): the Phoronix Test Suite and NAS Parallel
Benchmarks parsers on output written here from the tools' documented
formats (neither tool is installed on this machine), the per-class
commands, the refusals when a tool is missing, and the argument checks
that keep both to --host. Host only, fast: nothing is booted and neither
tool runs."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from schedlab import build, paths, reproduce
from schedlab.reproduce.document import document, validate
from schedlab.reproduce.experiments.series import rotated_command
from schedlab.reproduce.metadata import metadata
from schedlab.reproduce.registry import EXPERIMENTS, ReproduceError
from schedlab.reproduce.runner import Boot, Context, run_experiment
from schedlab.reproduce.summary import verdict
from schedlab.reproduce.experiments import host as rh

SCRIPT = paths.REPO / "scripts" / "reproduce"


def script(*args, env=None):
    clean = {k: v for k, v in os.environ.items()
             if k not in (rh.PTS_TESTS_ENV, rh.NPB_DIR_ENV, rh.NPB_SELECT_ENV)}
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=60,
                          env={**clean, **(env or {})})


def switched_classes(cmd):
    """The classes a rotated command switches to, in order."""
    return re.findall(r"echo (\w+) >/proc/sys/kernel/sched_class &&", cmd)


class FakeHostRunner:
    """Stands in for HostRunner: `output(command)` gives what the command
    would print (and may write files, as the tools do)."""
    mode = "host"
    config = "host"
    accel = None

    def __init__(self, tmp_path, output):
        self.tmp_path, self.output, self.commands = tmp_path, output, []

    def config_sha256(self):
        return None

    def shared_dir(self, tag):
        return str(self.tmp_path / tag)

    def run(self, command, topology, tag, on_line=lambda line: None, timeout=3600):
        self.commands.append(command)
        text = self.output(command)
        for line in text.splitlines():
            on_line(line)
        files = self.tmp_path / tag
        files.mkdir(parents=True, exist_ok=True)
        return Boot(text, "6.1.192-ule", 0, files)


def host_document(name, outcome, rounds):
    exp = EXPERIMENTS[name]
    meta = metadata(exp, release=outcome.release, config="host",
                    config_sha256=None, topologies=["host"], qemu_mode="host",
                    rounds=rounds, quick=False, argv=["scripts/reproduce", "--host"],
                    git=("abc1234", False), cpu="Test CPU")
    return document(exp, outcome.runs, outcome.benches, outcome.commands, outcome.failures, meta)


# -- the Phoronix Test Suite: composite.xml ------------------------------------

# Each <Result> as pts_result_file::get_xml() writes it: Identifier, Title,
# AppVersion, Arguments, Description, Scale, Proportion, DisplayFormat,
# then Data/Entry (Identifier, Value, RawString, JSON).
RESULTS = [
    ("pts/c-ray-1.2.0", "C-Ray", "1.1", "-t 32 -s 3840x2160 -r 16",
     "Total Time - 4K, 16 Rays Per Pixel", "Seconds", "LIB", "BAR_GRAPH"),
    ("pts/compress-7zip-1.10.0", "7-Zip Compression", "22.01", "",
     "Test: Compression Rating", "MIPS", "HIB", "BAR_GRAPH"),
    ("pts/scimark2-1.3.2", "SciMark", "2.0", "TEST_COMPOSITE",
     "Computational Test: Composite", "Mflops", "HIB", "BAR_GRAPH"),
    ("pts/c-ray-1.2.0", "C-Ray", "1.1", "", "CPU Usage Over Time", "Percent", "HIB",
     "LINE_GRAPH"),
]
BENCHES = ("C-Ray: Total Time - 4K, 16 Rays Per Pixel", "7-Zip Compression: Test: "
           "Compression Rating", "SciMark: Computational Test: Composite")


def composite(identifier, values, results=RESULTS, title="reproduce-x-r1-cfs"):
    """A result file as PTS saves it, one run (`identifier`) whose value of
    the i-th result is values[i] (None: the result left out, as when its
    test failed)."""
    out = ['<?xml version="1.0"?>', "<!--Phoronix Test Suite v10.8.4-->",
           "<PhoronixTestSuite>", "  <Generated>", f"    <Title>{title}</Title>",
           "    <LastModified>2026-03-04 12:31:07</LastModified>",
           "    <TestClient>Phoronix Test Suite v10.8.4</TestClient>",
           "    <Description>scripts/reproduce phoronix round 1 class cfs</Description>",
           "  </Generated>", "  <System>", f"    <Identifier>{identifier}</Identifier>",
           "    <Hardware>Processor: Test CPU 9000 @ 3.00GHz (16 Cores / 32 Threads), "
           "Memory: 64GB</Hardware>",
           "    <Software>OS: Debian 12, Kernel: 6.1.192-ule (x86_64)</Software>",
           "    <User>root</User>", "    <TimeStamp>2026-03-04 12:01:02</TimeStamp>",
           "    <TestClientVersion>10.8.4</TestClientVersion>", "    <Notes></Notes>",
           "  </System>"]
    for (test, name, version, args, desc, scale, prop, fmt), value in zip(results, values):
        if value is None:
            continue
        raw = ":".join(str(v) for v in value) if isinstance(value, list) else value
        shown = value if not isinstance(value, list) else \
            round(sum(value) / len(value), 2)
        out += ["  <Result>", f"    <Identifier>{test}</Identifier>",
                f"    <Title>{name}</Title>", f"    <AppVersion>{version}</AppVersion>",
                f"    <Arguments>{args}</Arguments>", f"    <Description>{desc}</Description>",
                f"    <Scale>{scale}</Scale>", f"    <Proportion>{prop}</Proportion>",
                f"    <DisplayFormat>{fmt}</DisplayFormat>", "    <Data>", "      <Entry>",
                f"        <Identifier>{identifier}</Identifier>",
                f"        <Value>{shown}</Value>", f"        <RawString>{raw}</RawString>",
                '        <JSON>{"test-run-times":"31.52"}</JSON>',
                "      </Entry>", "    </Data>", "  </Result>"]
    return "\n".join(out + ["</PhoronixTestSuite>"]) + "\n"


def test_parse_composite_reads_each_result_and_entry():
    results = rh.parse_composite(composite("cfs", [31.42, 123456, [2001.5, 1998.5], "1,5,9"]))
    assert len(results) == 4
    first = results[0]
    assert first["test"] == "pts/c-ray-1.2.0" and first["title"] == "C-Ray"
    assert first["description"] == "Total Time - 4K, 16 Rays Per Pixel"
    assert first["scale"] == "Seconds" and first["proportion"] == "LIB"
    assert first["format"] == "BAR_GRAPH" and first["arguments"] == "-t 32 -s 3840x2160 -r 16"
    assert first["entries"] == [{"identifier": "cfs", "value": "31.42", "raw": "31.42"}]
    assert results[2]["entries"][0]["raw"] == "2001.5:1998.5"


@pytest.mark.parametrize("text, says", [
    ("", "not well-formed XML"),
    ("<PhoronixTestSuite><Result><Title>C-Ray</Title>", "not well-formed XML"),
    ("<html><body>502</body></html>", "is not a PTS result file"),
])
def test_parse_composite_rejects_what_is_not_a_result_file(text, says):
    with pytest.raises(ValueError, match=says):
        rh.parse_composite(text)


def test_pts_runs_take_numbers_and_word_the_verdict_by_proportion():
    results = rh.parse_composite(composite("ule", [31.42, 123456, [2001.5, 1998.5], "1,5"]))
    runs, failures, benches = rh.pts_runs(results, 3, "ule", "host")
    assert not failures
    assert [(r["bench"], r["value"], r["unit"]) for r in runs] == [
        (BENCHES[0], 31.42, "Seconds"), (BENCHES[1], 123456.0, "MIPS"),
        (BENCHES[2], 2000.0, "Mflops")]
    assert runs[2]["trials"] == [2001.5, 1998.5] and runs[0]["test"] == "pts/c-ray-1.2.0"
    assert all(r["variant"] == "ule" and r["round"] == 3 and r["topology"] == "host"
               for r in runs)
    assert set(benches) == set(BENCHES)         # the line graph is not a benchmark
    lib, hib = benches[BENCHES[0]], benches[BENCHES[1]]
    assert lib["compare"] == hib["compare"] == "ratio"
    assert verdict(1.1, 1.2, "ratio", lib["worse"], lib["better"]) == \
        "worse (higher)"
    assert verdict(1.1, 1.2, "ratio", hib["worse"], hib["better"]) == \
        "better (higher)"
    assert verdict(0.8, 0.9, "ratio", hib["worse"], hib["better"]) == \
        "worse (lower)"


def test_pts_runs_turn_a_result_without_a_number_into_a_failure():
    text = composite("bmq", [31.42, 123456, 2000.0]).replace("<Value>123456</Value>",
                                                             "<Value></Value>")
    text = text.replace("<Identifier>bmq</Identifier>\n        <Value>2000.0",
                        "<Identifier>other</Identifier>\n        <Value>2000.0")
    text = text.replace("</Entry>\n    </Data>\n  </Result>\n</Phoronix",
                        "</Entry>\n      <Entry><Identifier>more</Identifier><Value>1</Value>"
                        "<RawString>1</RawString></Entry>\n    </Data>\n  </Result>\n"
                        "</Phoronix")
    runs, failures, benches = rh.pts_runs(rh.parse_composite(text), 1, "bmq", "host")
    assert [r["bench"] for r in runs] == [BENCHES[0]] and list(benches) == [BENCHES[0]]
    assert failures == [
        {"bench": BENCHES[1], "variant": "bmq", "round": 1, "why": "value '' is not a number"},
        {"bench": BENCHES[2], "variant": "bmq", "round": 1,
         "why": "no entry for bmq in its result"}]


# -- the Phoronix Test Suite: command, files, adapter ---------------------------

def test_pts_command_alternates_classes_one_result_file_per_run():
    cmd = rh.pts_command(2, ["pts/c-ray", "pts/compress-7zip"], "20260304-120000")
    assert switched_classes(cmd) == switched_classes(rotated_command(2, "m", "x"))
    assert switched_classes(cmd) == ["cfs", "ule", "bmq", "muqss", "ule", "bmq", "muqss", "cfs"]
    assert cmd.startswith("first=$(cat /proc/sys/kernel/sched_class); ")
    assert cmd.endswith("; echo $first >/proc/sys/kernel/sched_class")
    names = re.findall(r"TEST_RESULTS_NAME=(\S+)", cmd)
    assert names[0] == "reproduce-20260304-120000-r1-cfs" and len(set(names)) == 8
    assert all(re.fullmatch(r"[a-z0-9-]+", n) for n in names)    # PTS keeps them as they are
    run = next(p for p in cmd.split("; echo ule") if "r1-ule" in p)
    assert ">/proc/sys/kernel/sched_class && sleep 1 && echo reproduce-pts 1 ule && { " in run
    assert ("TEST_RESULTS_IDENTIFIER=ule TEST_RESULTS_DESCRIPTION='scripts/reproduce phoronix "
            "round 1 class ule' FORCE_TIMES_TO_RUN=1 phoronix-test-suite batch-benchmark "
            "pts/c-ray pts/compress-7zip </dev/null; echo reproduce-pts-status $?; }") in run
    assert subprocess.run(["sh", "-n", "-c", cmd]).returncode == 0


def test_pts_result_dirs_follow_the_configuration(tmp_path):
    config = tmp_path / "user-config.xml"
    config.write_text("<?xml version=\"1.0\"?>\n<PhoronixTestSuite><Options><Testing>"
                      f"<ResultsDirectory>{tmp_path}/mine/</ResultsDirectory>"
                      "</Testing></Options></PhoronixTestSuite>\n")
    broken = tmp_path / "broken.xml"
    broken.write_text("<PhoronixTestSuite>")
    dirs = rh.pts_result_dirs([broken, tmp_path / "none.xml", config], ["/var/lib/x", "/y"])
    assert dirs == [tmp_path / "mine", Path("/var/lib/x"), Path("/y")]
    (tmp_path / "mine" / "r1").mkdir(parents=True)
    assert rh.find_composite("r1", dirs) is None
    (tmp_path / "mine" / "r1" / "composite.xml").write_text("x")
    assert rh.find_composite("r1", dirs) == tmp_path / "mine" / "r1" / "composite.xml"


def pts_output(cmd, results_dir, values, skip=()):
    """What pts_command() prints, the result files written as PTS would:
    values(round, class) gives a run's values (a string: the file's text)."""
    lines = []
    for m in re.finditer(r"echo reproduce-pts (\d+) (\w+) && \{ TEST_RESULTS_NAME=(\S+)", cmd):
        rnd, cls, name = int(m[1]), m[2], m[3]
        if (rnd, cls) in skip:                    # the class switch failed: no marker
            continue
        lines += [f"reproduce-pts {rnd} {cls}", "Phoronix Test Suite v10.8.4",
                  "    C-Ray 1.1:", "    Average: 31.42 Seconds"]
        got = values(rnd, cls)
        if got is not None:
            (results_dir / name).mkdir(parents=True)
            text = got if isinstance(got, str) else composite(cls, got, title=name)
            (results_dir / name / "composite.xml").write_text(text)
        lines.append(f"reproduce-pts-status {0 if got is not None else 1}")
    return "\n".join(lines) + "\n"


def test_pts_outcome_notes_every_run_that_gave_no_value(tmp_path):
    stamp, results = "20260304-120000", tmp_path / "test-results"
    cmd = rh.pts_command(2, ["pts/c-ray"], stamp)

    def values(rnd, cls):
        if (rnd, cls) == (1, "bmq"):
            return None                           # PTS saved nothing
        if (rnd, cls) == (2, "ule"):
            return "<PhoronixTestSuite><Result>"  # cut short
        if (rnd, cls) == (2, "bmq"):
            return [30.0, None, 2000.0]           # 7-Zip failed under this class
        return [31.0 + rnd, 123456, 2000.0]
    output = pts_output(cmd, results, values, skip={(2, "cfs")})
    runs, failures, benches = rh.pts_outcome(output, stamp, 2, "host", [tmp_path / "no",
                                                                        results],
                                             keep=tmp_path / "keep")
    assert set(benches) == set(BENCHES)
    assert {(r["variant"], r["round"]) for r in runs} == {("cfs", 1), ("ule", 1), ("bmq", 2),
                                                          ("muqss", 1), ("muqss", 2)}
    why = {(f["bench"], f["variant"], f["round"]): f["why"] for f in failures}
    assert why[("all", "bmq", 1)] == ("no result file reproduce-20260304-120000-r1-bmq "
                                      "(phoronix-test-suite exit status 1)")
    assert "not well-formed XML" in why[("all", "ule", 2)]
    assert why[(BENCHES[1], "bmq", 2)] == "no result"
    assert why[("all", "cfs", 2)] == "no run"
    assert len(failures) == 4
    assert (tmp_path / "keep" / "reproduce-20260304-120000-r1-cfs.composite.xml").is_file()


def test_phoronix_adapter_writes_a_valid_document(tmp_path, monkeypatch):
    results = tmp_path / "test-results"
    monkeypatch.setattr(rh, "pts_result_dirs", lambda: [results])
    monkeypatch.setenv(rh.PTS_TESTS_ENV, "pts/c-ray pts/compress-7zip")
    factor = {"cfs": 1.0, "ule": 1.0, "bmq": 1.2, "muqss": 1.0}

    def values(rnd, cls):      # bmq: c-ray 20 % slower, 7-Zip 20 % higher
        return [30.0 * factor[cls] + rnd / 10, 100000 * factor[cls] + rnd,
                2000.0 + rnd]
    runner = FakeHostRunner(tmp_path, lambda cmd: pts_output(cmd, results, values))
    ctx = Context(rounds=5, quick=False, runner=runner)
    outcome, topologies = run_experiment(EXPERIMENTS["phoronix"], 0, ctx, None, True)
    assert topologies == ["host"] and outcome.release == "6.1.192-ule"
    assert "batch-benchmark pts/c-ray pts/compress-7zip" in runner.commands[0]
    assert len(outcome.runs) == 5 * 4 * 3 and not outcome.failures
    doc = host_document("phoronix", outcome, 5)
    assert validate(json.loads(json.dumps(doc))) == []
    vs = {name: entry["vs_base"]["bmq"]["verdict"] for name, entry in doc["summary"].items()}
    assert vs[BENCHES[0]] == "worse (higher)" and vs[BENCHES[1]] == "better (higher)"
    assert "arguments '-t 32 -s 3840x2160 -r 16'" in doc["commands"][BENCHES[0]]
    # --quick: the first test alone.
    ctx.quick, ctx.rounds = True, 1
    run_experiment(EXPERIMENTS["phoronix"], 0, ctx, None, True)
    assert "batch-benchmark pts/c-ray </dev/null" in runner.commands[-1]


def test_phoronix_adapter_refuses_a_guest(tmp_path):
    runner = FakeHostRunner(tmp_path, lambda cmd: "")
    runner.mode = "mttcg"
    ctx = Context(rounds=1, quick=True, runner=runner)
    for name in ("phoronix", "nas"):
        with pytest.raises(ReproduceError, match="only on real hardware"):
            EXPERIMENTS[name].run(ctx, "1x2")
    assert not runner.commands


def test_phoronix_without_any_result_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(rh, "pts_result_dirs", lambda: [tmp_path / "none"])
    runner = FakeHostRunner(tmp_path, lambda cmd: "phoronix-test-suite: batch mode is not "
                                                  "configured\n")
    ctx = Context(rounds=1, quick=True, runner=runner)
    with pytest.raises(ReproduceError, match="phoronix-test-suite gave no result"):
        run_experiment(EXPERIMENTS["phoronix"], 0, ctx, None, True)


def test_pts_refusals():
    assert "phoronix-test-suite is not in PATH" in rh.pts_refusal(env={}, which=lambda n: None)
    found = lambda n: "/usr/bin/" + n  # noqa: E731
    assert rh.pts_refusal(env={}, which=found) is None
    assert rh.pts_tests({}) == list(rh.PTS_DEFAULT_TESTS)
    assert rh.pts_tests({rh.PTS_TESTS_ENV: " pts/c-ray  local/mine-1.0.0 "}) == \
        ["pts/c-ray", "local/mine-1.0.0"]
    bad = rh.pts_refusal(env={rh.PTS_TESTS_ENV: "pts/c-ray pts/x;reboot"}, which=found)
    assert bad == "REPRODUCE_PTS_TESTS: 'pts/x;reboot' is not a test name such as pts/c-ray"
    assert rh.pts_refusal(env={rh.PTS_TESTS_ENV: "1203160-BY-NVTEGRA3785"}, which=found) is None


# -- the NAS Parallel Benchmarks ------------------------------------------------

def npb_output(name, nclass, seconds, verification="SUCCESSFUL", threads=8):
    """One binary's output in NPB's print_results() layout: a banner, the
    benchmark's own lines, then the closing block of "key = value" lines."""
    size = {"MG": "512x 512x 512", "FT": "512x 512x 512", "EP": "8589934592",
            "IS": "134217728"}[name]
    return "\n".join([
        "", "", f" NAS Parallel Benchmarks (NPB3.4-OMP) - {name} Benchmark", "",
        f" Size: {size}  (class {nclass})", " Iterations:                     20",
        f" Number of available threads:   {threads:4d}", "", "  iter   1", "  iter  20", "",
        " Benchmark completed", f" VERIFICATION {verification}", "", "",
        f" {name} Benchmark Completed.", f" Class           = {nclass:>24}",
        f" Size            = {size:>24}", f" Iterations      = {20:>24}",
        f" Time in seconds = {seconds:>24.2f}", f" Total threads   = {threads:>24}",
        f" Avail threads   = {threads:>24}", f" Mop/s total     = {12345.67:>24.2f}",
        f" Mop/s/thread    = {1543.21:>24.2f}", f" Operation type  = {'floating point':>24}",
        f" Verification    = {verification:>24}", f" Version         = {'3.4.2':>24}",
        f" Compile date    = {'04 Mar 2026':>24}", "", " Compile options:",
        "    FC           = gfortran", "    FFLAGS       = -O3 -fopenmp", "", "",
        " Please send all errors/feedbacks to:", "", " NPB Development Team",
        " npb@nas.nasa.gov", "", ""])


def test_parse_npb_reads_the_closing_block():
    got = rh.parse_npb(npb_output("MG", "C", 12.345).splitlines())
    assert got == {"name": "MG", "class": "C", "time_s": 12.35, "mops": 12345.67,
                   "verification": "SUCCESSFUL", "size": "512x 512x 512",
                   "iterations": "20", "threads": 8}
    assert rh.parse_npb(npb_output("EP", "S", 0.5, "UNSUCCESSFUL").splitlines())[
        "verification"] == "UNSUCCESSFUL"


@pytest.mark.parametrize("text, says", [
    ("", "no \"Benchmark Completed\" block"),
    (" NAS Parallel Benchmarks (NPB3.4-OMP) - MG Benchmark\n Size: 512x 512x 512\n"
     "Segmentation fault (core dumped)\n", "no \"Benchmark Completed\" block"),
    (" MG Benchmark Completed.\n Class           =                        C\n",
     "MG: no \"Time in seconds\""),
])
def test_parse_npb_rejects_a_run_without_its_result(text, says):
    with pytest.raises(ValueError, match=says):
        rh.parse_npb(text.splitlines())


def test_npb_command_runs_every_binary_under_each_class():
    cmd = rh.npb_command(2, "/opt/NPB 3.4/bin", ["ft.C.x", "mg.C.x"], 16)
    assert switched_classes(cmd) == ["cfs", "ule", "bmq", "muqss", "ule", "bmq", "muqss", "cfs"]
    run = ("echo reproduce-npb 1 cfs && { echo reproduce-npb-binary ft.C.x; "
           "OMP_NUM_THREADS=16 '/opt/NPB 3.4/bin/ft.C.x'; echo reproduce-npb-status $?; "
           "echo reproduce-npb-binary mg.C.x; OMP_NUM_THREADS=16 '/opt/NPB 3.4/bin/mg.C.x'; "
           "echo reproduce-npb-status $?; }")
    assert run in cmd                          # a failed switch skips every binary
    assert cmd.endswith("echo $first >/proc/sys/kernel/sched_class")
    assert subprocess.run(["sh", "-n", "-c", cmd]).returncode == 0
    assert rh.npb_quick(["bt.C.x", "mg.A.x", "ep.W.x", "is.C.x"]) == ["ep.W.x"]


def nas_output(cmd, result, skip=()):
    """What npb_command() prints; result(round, class, binary) gives a
    binary's output."""
    lines = []
    for m in re.finditer(r"echo reproduce-npb (\d+) (\w+) && \{ (.*?); \}", cmd):
        rnd, cls = int(m[1]), m[2]
        if (rnd, cls) in skip:
            continue
        lines.append(f"reproduce-npb {rnd} {cls}")
        for binary in re.findall(r"echo reproduce-npb-binary ([^;\s]+)", m[3]):
            text, status = result(rnd, cls, binary)
            lines += [f"reproduce-npb-binary {binary}", text, f"reproduce-npb-status {status}"]
    return "\n".join(lines) + "\n"


def test_parse_nas_keeps_verified_times_and_notes_the_rest():
    names = ["ft.C.x", "mg.C.x"]
    cmd = rh.npb_command(2, "/npb", names, 8)

    def result(rnd, cls, binary):
        name = binary.split(".")[0].upper()
        if (rnd, cls, binary) == (1, "ule", "mg.C.x"):
            return npb_output(name, "C", 7.0, "UNSUCCESSFUL"), 0
        if (rnd, cls, binary) == (2, "bmq", "ft.C.x"):
            return " NAS Parallel Benchmarks (NPB3.4-OMP) - FT Benchmark\nKilled", 137
        return npb_output(name, "C", 10.0 + rnd + (cls == "ule")), 0
    runs, failures = rh.parse_nas(nas_output(cmd, result, skip={(2, "cfs")}), names, 2, "host")
    assert len(runs) == 16 - 2 - 2
    mg = next(r for r in runs if r["bench"] == "mg.C" and r["variant"] == "ule")
    assert (mg["round"], mg["value"], mg["unit"]) == (2, 13.0, "s")
    assert mg["npb"] == "MG class C" and mg["mops_total"] == 12345.67 and mg["threads"] == 8
    assert mg["verification"] == "SUCCESSFUL" and mg["exit_status"] == 0
    assert failures == [
        {"bench": "mg.C", "variant": "ule", "round": 1, "why": "verification UNSUCCESSFUL",
         "time_s": 7.0},
        {"bench": "ft.C", "variant": "bmq", "round": 2,
         "why": "no \"Benchmark Completed\" block (exit status 137)"},
        {"bench": "all", "variant": "cfs", "round": 2, "why": "no run"}]


def test_nas_adapter_writes_a_valid_document(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("mg.C.x", "ep.S.x"):
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    (folder / "README").write_text("not a binary")
    monkeypatch.setenv(rh.NPB_DIR_ENV, str(folder))
    monkeypatch.delenv(rh.NPB_SELECT_ENV, raising=False)

    def result(rnd, cls, binary):
        name, nclass = binary.split(".")[:2]
        return npb_output(name.upper(), nclass, 10.0 * (1.5 if cls == "cfs" else 1.0) + rnd), 0
    runner = FakeHostRunner(tmp_path, lambda cmd: nas_output(cmd, result))
    ctx = Context(rounds=5, quick=False, runner=runner)
    outcome, _ = run_experiment(EXPERIMENTS["nas"], 0, ctx, None, True)
    assert f"OMP_NUM_THREADS={os.cpu_count()} {folder}/ep.S.x" in runner.commands[0]
    assert set(outcome.benches) == {"ep.S", "mg.C"} and not outcome.failures
    doc = host_document("nas", outcome, 5)
    assert validate(json.loads(json.dumps(doc))) == []
    assert doc["summary"]["mg.C"]["vs_base"]["ule"]["verdict"] == "faster"
    ctx.quick, ctx.rounds = True, 1
    outcome, _ = run_experiment(EXPERIMENTS["nas"], 0, ctx, None, True)
    assert set(outcome.benches) == {"ep.S"} and "mg.C.x" not in runner.commands[-1]


def test_npb_refusals(tmp_path):
    assert "set REPRODUCE_NPB_DIR" in rh.npb_refusal(env={})
    assert rh.npb_refusal(env={rh.NPB_DIR_ENV: str(tmp_path / "none")}) == \
        f"REPRODUCE_NPB_DIR: {tmp_path / 'none'} is not a folder"
    (tmp_path / "mg.C.x").write_text("not executable")
    assert rh.npb_refusal(env={rh.NPB_DIR_ENV: str(tmp_path)}) == \
        f"REPRODUCE_NPB_DIR: no NPB binary (executable *.x) in {tmp_path}"
    (tmp_path / "mg.C.x").chmod(0o755)
    assert rh.npb_refusal(env={rh.NPB_DIR_ENV: str(tmp_path)}) is None
    assert rh.npb_selected({rh.NPB_DIR_ENV: str(tmp_path), rh.NPB_SELECT_ENV: "mg.C"}) == \
        (str(tmp_path), ["mg.C.x"])
    assert rh.npb_refusal(env={rh.NPB_DIR_ENV: str(tmp_path), rh.NPB_SELECT_ENV: "mg.C ft.C"}) \
        == f"REPRODUCE_NPB: no executable ft.C.x in {tmp_path}"


# -- arguments ------------------------------------------------------------------

@pytest.mark.parametrize("args, env, says", [
    (["phoronix"], {}, "experiment 'phoronix' runs only on real hardware: add --host"),
    (["nas", "--quick"], {}, "experiment 'nas' runs only on real hardware: add --host"),
    (["--host", "nas"], {}, "set REPRODUCE_NPB_DIR"),
    (["--host", "nas"], {"REPRODUCE_NPB_DIR": "/nonexistent-npb"}, "is not a folder"),
    (["--host", "phoronix"], {"PATH": "/nonexistent"}, "phoronix-test-suite is not in PATH"),
])
def test_host_only_experiments_are_refused_before_anything_runs(args, env, says):
    proc = script(*args, env=env) if "PATH" not in env else subprocess.run(
        [sys.executable, "-m", "schedlab", "reproduce", *args], capture_output=True, text=True,
        timeout=60, env={"PATH": env["PATH"], "HOME": os.environ.get("HOME", "/"),
                         "PYTHONPATH": str(SCRIPT.parent / "lib")})
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr


def test_list_names_them_as_implemented_on_the_host():
    proc = script("--list")
    assert proc.returncode == 0
    for name in ("phoronix", "nas"):
        line = next(x for x in proc.stdout.splitlines() if x.startswith(f"{name} "))
        assert "on real hardware (--host); " in line


def test_all_runs_only_the_guest_experiments(tmp_path, monkeypatch):
    """--all (which naming no experiment asks for) runs every guest
    experiment; the real-hardware ones run only when named."""
    seen = []
    monkeypatch.setattr(build, "build", lambda config: 0)
    monkeypatch.setattr("schedlab.reproduce.cli.GuestRunner", lambda config, mode, workdir: None)
    monkeypatch.setattr("schedlab.reproduce.cli.run_and_save",
                        lambda exp, index, ctx, a, folder, argv: seen.append(exp.name) or True)
    assert reproduce.main(["--all", "--out", str(tmp_path / "r")]) == 0
    assert seen and "phoronix" not in seen and "nas" not in seen
    assert set(seen) == {n for n, e in EXPERIMENTS.items() if not e.host_only}
