"""scripts/bench-sched: parsing of class_bench.sh's output, medians, ratios
to CFS, the table, and argument errors. The guest run itself is a benchmark
(ratios, not a timed test); that every tool of both suites runs under each
class is checked by scripts/reproduce's quick run (test_reproduce.py)."""

import subprocess

import pytest

from schedlab import bench, paths, stats

SAMPLE = """bench hackbench hackbench -g 10 -l 200
bench pipe perf bench sched pipe -l 20000
cpus 8
result hackbench cfs 1 2.0
result hackbench ule 1 3.0
result pipe cfs 1 1.0
result pipe ule 1 fail
result hackbench ule 2 1.0
result hackbench cfs 2 4.0
result hackbench cfs 3 3.0
result hackbench ule 3 2.0
garbage result line
"""


def test_parse_keeps_times_and_failures_apart():
    runs, commands, failures = bench.parse(SAMPLE)
    assert commands == {"hackbench": "hackbench -g 10 -l 200",
                        "pipe": "perf bench sched pipe -l 20000"}
    assert runs["hackbench"] == {"cfs": [2.0, 4.0, 3.0], "ule": [3.0, 1.0, 2.0]}
    assert runs["pipe"] == {"cfs": [1.0]}
    assert failures == [("pipe", "ule", "1")]


def test_parse_counts_a_watchdog_report_as_a_failure():
    assert bench.parse(SAMPLE + "watchdog 0\n")[2] == [("pipe", "ule", "1")]
    assert bench.parse(SAMPLE + "watchdog 2\n")[2] == [("pipe", "ule", "1"),
                                                       ("watchdog", "reports", "2")]


def test_summary_ratio_is_median_over_cfs_median():
    summary = bench.summarise(bench.parse(SAMPLE)[0])
    assert summary["hackbench"]["cfs"]["median"] == 3.0
    assert summary["hackbench"]["ule"]["median"] == 2.0
    assert summary["hackbench"]["ule"]["ratio"] == pytest.approx(2 / 3)
    assert summary["hackbench"]["cfs"]["ratio"] == 1.0
    assert (summary["hackbench"]["ule"]["min"], summary["hackbench"]["ule"]["max"]) == (1.0, 3.0)


def test_summary_without_a_cfs_run_has_no_ratio():
    summary = bench.summarise({"pipe": {"ule": [1.0]}})
    assert summary["pipe"]["ule"]["ratio"] is None


def test_table_has_a_row_per_benchmark_and_a_ratio_column():
    text = bench.table(bench.summarise(bench.parse(SAMPLE)[0]), ["cfs", "ule"])
    head, *rows = text.splitlines()
    assert "ule/cfs" in head
    assert rows[0].split()[:4] == ["hackbench", "3.000", "2.000", "0.667"]
    assert rows[1].split()[:4] == ["pipe", "1.000", "-", "-"]


def test_paired_ratios_come_in_round_order_past_round_9():
    rounds = {str(r): float(r) for r in range(1, 13)}
    base = {str(r): 1.0 for r in range(1, 13)}
    assert bench.paired_ratios(rounds, base) == [float(r) for r in range(1, 13)]
    assert bench.paired_ratios({2: 4.0, 10: 20.0, "x": 1.0}, {2: 2.0, 10: 2.0, "x": 1.0}) == \
        [2.0, 10.0, 1.0]


def test_rounds_pair_each_class_with_cfs_of_the_same_round():
    rounds = bench.parse_rounds(SAMPLE)
    assert rounds["hackbench"]["ule"] == {"1": 3.0, "2": 1.0, "3": 2.0}
    assert "ule" not in rounds["pipe"]
    assert bench.paired_ratios(rounds["hackbench"]["ule"], rounds["hackbench"]["cfs"]) == \
        [1.5, 0.25, pytest.approx(2 / 3)]
    summary = bench.summarise(bench.parse(SAMPLE)[0], rounds=rounds)
    ule = summary["hackbench"]["ule"]
    assert ule["ratio"] == pytest.approx(2 / 3)
    # Three rounds are too few for an interval.
    assert ule["ci"] == [None, None] and ule["verdict"] == "too few rounds"
    assert "ci" not in summary["hackbench"]["cfs"]


def test_bootstrap_interval_and_verdict():
    assert stats.bootstrap_ci([1.2]) == (None, None)
    assert stats.bootstrap_ci([1.2, 1.3, 1.1, 1.2]) == (None, None)
    assert stats.verdict(None, None) == "too few rounds"
    low, high = stats.bootstrap_ci([1.10, 1.12, 1.08, 1.11, 1.09, 1.13, 1.10, 1.12, 1.11, 1.10])
    assert 1.08 <= low <= 1.10 <= high <= 1.13
    assert stats.verdict(low, high) == "slower"
    low, high = stats.bootstrap_ci([0.8, 1.3, 0.9, 1.2, 1.0, 1.1, 0.85, 1.25, 0.95, 1.05])
    assert low < 1 < high
    assert stats.verdict(low, high) == "no difference measured"
    assert stats.verdict(0.7, 0.9) == "faster"
    # Seeded: the same runs give the same interval.
    runs = [1.0, 2.0, 3.0, 2.5, 1.5]
    assert stats.bootstrap_ci(runs) == stats.bootstrap_ci(runs)


def test_table_states_the_interval_and_verdict():
    summary = bench.summarise(bench.parse(SAMPLE)[0], rounds=bench.parse_rounds(SAMPLE))
    text = bench.table(summary, ["cfs", "ule"])
    note = [line for line in text.splitlines() if line.startswith("  hackbench ule/cfs")]
    assert note and "3 paired rounds" in note[0] and note[0].endswith("nothing measured")
    more = "".join(f"result pipe cfs {r} 1.0\nresult pipe ule {r} {1 + r / 100}\n"
                   for r in range(1, 7))
    summary = bench.summarise(bench.parse(more)[0], rounds=bench.parse_rounds(more))
    note = [line for line in bench.table(summary, ["cfs", "ule"]).splitlines()
            if line.startswith("  pipe ule/cfs")]
    assert note and "95 % interval" in note[0] and "6 paired rounds" in note[0]
    assert note[0].endswith("slower")


@pytest.mark.parametrize("args", [["--rounds", "0"], ["--scale", "-1"],
                                  ["--classes", "ule"], ["--classes", "cfs,bogus"],
                                  ["-t", "nonsense"], ["--suite", "bogus"],
                                  ["--only", "hackbench,bogus"],
                                  ["--suite", "bmq", "--only", "pipe"],
                                  ["--suite", "walk", "-t", "1x2"],
                                  ["--classes", "cfs,ule:BOGUS_FEATURE"],
                                  ["--classes", "cfs,bmq:NO_HRTICK_BMQ+NO_BOGUS"]])
def test_script_rejects_bad_arguments_before_building(args):
    """Refused in one line, status 2, before the kernel is built: feature
    names are checked against the prepared tree's features.h (preparing it
    on a fresh clone takes a minute or two), not in the guest."""
    proc = subprocess.run([str(paths.REPO / "scripts" / "bench-sched"), *args],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("bench-sched: ")


CYCLICTEST = """# /dev/cpu_dma_latency set to 0us
000000 000000\t000000
000001 000090\t000080
000002 000008\t000010
000003 000001\t000009\t
# Total: 000100 000100
# Min Latencies: 00001 00001
# Avg Latencies: 00001 00001
# Max Latencies: 00003 00250
# Histogram Overflows: 00001 00001
"""


@pytest.mark.parametrize("what,want", [("p99", "3"), ("max", "250")])
def test_walk_suite_reads_cyclictest_percentile_and_maximum(tmp_path, what, want):
    """class_bench.sh's cyclic(): 200 samples of two threads (cyclictest
    separates the threads' columns with tabs), 99 % of them
    at 3 us or less (the two overflows count at the maximum); p99 runs the
    tool, max reads that run."""
    script = paths.REPO / "tools" / "testing" / "sched" / "class_bench.sh"
    body = script.read_text()
    start = body.index("CT_OUT=")
    end = body.index("# seconds BENCH")
    (tmp_path / "sample").write_text(CYCLICTEST)
    if what == "max":
        (tmp_path / "out").write_text(CYCLICTEST)
    prog = (body[start:end].replace("CT_OUT=/tmp/class-bench-cyclictest",
                                    f"CT_OUT={tmp_path}/out")
            + f"ct='cat {tmp_path}/sample'\ncyclic {what}\n")
    proc = subprocess.run(["sh", "-c", prog], capture_output=True, text=True, timeout=30)
    assert proc.stdout.strip() == want, proc.stderr
