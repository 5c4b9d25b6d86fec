"""perf and SystemTap, the observers users already know, under every class
(README, "Observability"): in one boot of the debug kernel,
tools/testing/sched/observers.sh switches to each class and records a
hackbench run with perf sched (then latency, map and timehist), with
perf record -e 'sched_events:*', and with the SystemTap scripts of
tools/systemtap, built on the host against the debug tree (stap -r) and
loaded in the guest with staprun. The host checks each output names the
workload's tasks and counts what it should."""

import re

import pytest

from schedlab import build, vm
from schedlab.paths import GUEST_TESTS
from schedlab.tap import assert_ok as assert_tap

CLASSES = vm.SCHED_CLASSES


@pytest.fixture(scope="module")
def stap_modules(debug_kernel):
    if build.build("debug", "modules") != 0:       # Module.symvers, for stap -r
        pytest.fail("make modules failed for the debug kernel", pytrace=False)
    try:
        return build.stap_modules("debug")
    except build.BuildError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="module")
def observed(guest, stap_modules, tmp_path_factory):
    out = tmp_path_factory.mktemp("observers")
    folder = next(iter(stap_modules.values())).parent
    res = guest(f"sh {GUEST_TESTS}/observers.sh /tmp/out {folder} {' '.join(CLASSES)}",
                topology="1x2", outdir=out, timeout=1200)
    return res, out


def test_observers_run_under_every_class(observed):
    res, _ = observed
    assert_tap(res.output, "observers.sh")


@pytest.mark.parametrize("cls", CLASSES)
def test_perf_sched_latency_lists_the_workload(observed, cls):
    text = (observed[1] / f"{cls}.latency.txt").read_text()
    rows = re.findall(r"^\s*(hackbench:\d+|hackbench:\(\d+\))\s*\|\s*[\d.]+ ms\s*\|\s*(\d+)",
                      text, re.M)
    assert rows, text[:2000]
    total = re.search(r"TOTAL:\s*\|\s*[\d.]+ ms\s*\|\s*(\d+)", text)
    assert total and int(total.group(1)) >= sum(int(n) for _, n in rows) > 0, text[-500:]


@pytest.mark.parametrize("cls", CLASSES)
def test_perf_sched_map_and_timehist(observed, cls):
    mapped = (observed[1] / f"{cls}.map.txt").read_text()
    # A line per switch; "*" marks the CPU that switched, "=>" names a
    # task the first time it runs.
    assert len(re.findall(r"^\s.*\*", mapped, re.M)) > 20, mapped[:1000]
    assert re.search(r"=> hackbench:\d+", mapped), mapped[:1000]
    hist = (observed[1] / f"{cls}.timehist.txt").read_text()
    rows = [line for line in hist.splitlines() if re.match(r"\s*\d+\.\d+ \[\d+\]", line)]
    assert sum("hackbench" in line for line in rows) > 20, hist[:1000]


@pytest.mark.parametrize("cls", CLASSES)
def test_perf_records_the_series_tracepoints(observed, cls):
    counts = {event.rstrip(":"): int(n) for n, event in
              (line.split() for line in (observed[1] / f"{cls}.events.txt")
               .read_text().splitlines() if line.strip())}
    assert counts.get("sched_events:rq_nr_running", 0) > 0, counts
    assert counts.get("sched_events:cpus_considered", 0) > 0, counts


@pytest.mark.parametrize("cls", CLASSES)
def test_systemtap_wakeup_latency(observed, cls):
    text = (observed[1] / f"{cls}.wakeup.txt").read_text()
    head = re.search(rf"wakeup latency label={cls} wakeups=(\d+) avg_us=(\d+) max_us=(\d+)",
                     text)
    assert head, text
    wakeups, avg, most = map(int, head.groups())
    assert wakeups > 100 and avg <= most, text
    # stap's log2 histogram: "value |@@@ count" rows that add up.
    rows = [int(n) for n in re.findall(r"^\s*\d+ \|@*\s+(\d+)$", text, re.M)]
    assert sum(rows) == wakeups, text


@pytest.mark.parametrize("cls", CLASSES)
def test_systemtap_runqueue_length(observed, cls):
    text = (observed[1] / f"{cls}.runqueue.txt").read_text()
    head = re.search(rf"runqueue length label={cls} changes=(\d+)", text)
    assert head and int(head.group(1)) > 100, text
    per_cpu = {}
    longest = 0
    for cpu, length, us in re.findall(r"^\s*(\d+)\s+(\d+)\s+(\d+)$", text, re.M):
        per_cpu[int(cpu)] = per_cpu.get(int(cpu), 0) + int(us)
        if int(us):
            longest = max(longest, int(length))
    assert set(per_cpu) == {0, 1}, text
    # Each CPU's times cover the run (3 s) from its first change; the
    # workload queued more than one task somewhere.
    assert all(1.0e6 < us < 4.0e6 for us in per_cpu.values()), per_cpu
    assert longest >= 2, text
