"""The kernel's own selftests that exercise scheduling, built from the
prepared tree and run in one 2x4 guest by tools/testing/sched/run_selftests.sh
(list and reasons: tools/testing/sched/selftests.list), so that every
scheduling class can be held to the result stock CFS gets: they run once
under sched=cfs, sched=ule, sched=bmq and sched=muqss on the same debug
build, and ULE, BMQ and MuQSS must each give CFS's outcome on every point
but the timing-dependent TODO ones. Results are saved to
build/kselftest-results-<class>.json."""

import json
import re

import pytest

from schedlab.paths import GUEST_TESTS
from schedlab import build, paths, tap

COLLECTIONS = build.selftest_targets()


CLASSES = ["cfs", "ule", "bmq", "muqss"]


def normalised(name):
    """A point's name without its run time, retry note and exit status:
    "futex: ./functional/futex_wait (0.6 s, passed on retry)" is
    "futex: ./functional/futex_wait"."""
    return re.sub(r" \((?:[0-9.]+ s(?:, [a-z0-9 ]+)?|exit -?\d+)\)", "", name)


@pytest.fixture(scope="session")
def selftest_runs(guest, debug_kernel):
    """run(cls): the selftests in one boot with sched=<cls>, once per class."""
    cache = {}

    def run(cls):
        if cls in cache:
            return cache[cls]
        try:
            installed = build.build_selftests("debug")
        except build.BuildError as e:
            pytest.fail(str(e), pytrace=False)
        res = guest(f"sh {GUEST_TESTS}/run_selftests.sh {installed}", cmdline=f"sched={cls}",
                    timeout=600)
        result = tap.parse(res.output)
        booted = re.search(r"sched: normal tasks run on (\w+)", res.console)
        assert booted and booted.group(1) == cls, res.console[-2000:]
        record = [{"name": p.name, "ok": p.ok, "directive": p.directive} for p in result.top()]
        out = paths.BUILD / f"kselftest-results-{cls}.json"
        out.write_text(json.dumps(record, indent=1) + "\n")
        cache[cls] = (res.output, result)
        return cache[cls]
    return run


@pytest.mark.parametrize("cls", CLASSES)
def test_selftest_plan(selftest_runs, cls):
    output, result = selftest_runs(cls)
    assert result.plan and result.plan == len(result.top()), output[-3000:]


@pytest.mark.parametrize("collection", COLLECTIONS)
@pytest.mark.parametrize("cls", CLASSES)
def test_selftest_collection(selftest_runs, cls, collection):
    output, result = selftest_runs(cls)
    points = [p for p in result.top() if p.name.startswith(collection + ":")]
    assert points, f"{collection} did not run:\n{output[-3000:]}"
    failed = [p for p in points if p.failed]
    assert not failed, "\n\n".join(
        f"not ok {p.name}\n" + "\n".join(p.diagnostics[-30:]) for p in failed)


@pytest.mark.parametrize("cls", [c for c in CLASSES if c != "cfs"])
def test_class_gives_the_same_results_as_cfs(selftest_runs, cls):
    """The same points on the same build, each passing or skipped alike.
    TODO points of selftests.list depend on wall-clock timing under TCG
    and pass or fail from run to run on CFS too: they must run under both
    classes, but their outcomes are only reported."""
    def outcome(c):
        return {normalised(p.name): (p.ok, p.directive) for p in selftest_runs(c)[1].top()}
    cfs, other = outcome("cfs"), outcome(cls)
    assert cfs.keys() == other.keys(), f"points differ: {cfs.keys() ^ other.keys()}"
    timing = {n for n in cfs if "TODO" in (cfs[n][1], other[n][1])}
    print(f"timing-dependent (TODO) points, ok under (cfs, {cls}):",
          {n: (cfs[n][0], other[n][0]) for n in sorted(timing)})
    differ = {n: (cfs[n], other[n]) for n in cfs.keys() - timing if cfs[n] != other[n]}
    assert not differ, f"(cfs, {cls}) outcome per point: {differ}"


@pytest.mark.parametrize("name", [
    "futex: ./functional/futex_wait (0.6 s)",
    "futex: ./functional/futex_wait (0.6 s, passed on retry)",
    "futex: ./functional/futex_wait (12.0 s, failed 3 times) (exit 1)",
])
def test_a_point_keeps_its_name_across_runs(name):
    """Run time, a retry and the exit status vary from run to run; the
    comparison with CFS is by the rest of the name."""
    assert normalised(name) == "futex: ./functional/futex_wait"
