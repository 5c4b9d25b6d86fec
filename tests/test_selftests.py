"""The kernel's own selftests that exercise scheduling, built from the
prepared tree and run in one 2x4 guest by tools/testing/sched/run_selftests.sh
(list and reasons: tools/testing/sched/selftests.list), so that every
scheduling class can be held to the result stock CFS gets. Results are saved
to build/kselftest-results-<class>.json for comparing classes."""

import json
import re

import pytest

from schedlab.paths import GUEST_TESTS
from schedlab import build, paths, tap

COLLECTIONS = build.selftest_targets()


@pytest.fixture(scope="session")
def selftest_run(guest, debug_kernel):
    try:
        installed = build.build_selftests("debug")
    except build.BuildError as e:
        pytest.fail(str(e), pytrace=False)
    res = guest(f"sh {GUEST_TESTS}/run_selftests.sh {installed}", timeout=1800)
    result = tap.parse(res.output)
    cls = re.search(r"sched: normal tasks run on (\w+)", res.console)
    record = [{"name": p.name, "ok": p.ok, "directive": p.directive} for p in result.top()]
    out = paths.BUILD / f"kselftest-results-{cls.group(1) if cls else 'unknown'}.json"
    out.write_text(json.dumps(record, indent=1) + "\n")
    return res.output, result


def test_selftest_plan(selftest_run):
    output, result = selftest_run
    assert result.plan and result.plan == len(result.top()), output[-3000:]


@pytest.mark.parametrize("collection", COLLECTIONS)
def test_selftest_collection(selftest_run, collection):
    output, result = selftest_run
    points = [p for p in result.top() if p.name.startswith(collection + ":")]
    assert points, f"{collection} did not run:\n{output[-3000:]}"
    failed = [p for p in points if p.failed]
    assert not failed, "\n\n".join(
        f"not ok {p.name}\n" + "\n".join(p.diagnostics[-30:]) for p in failed)
