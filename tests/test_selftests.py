"""The kernel's own selftests that exercise scheduling, built from the
prepared tree and run in the guest through the same runner, so that every
scheduling class can be held to the result stock CFS gets.

All chosen tests run in one 2x4 boot; each collection is one pytest test.
Results are saved to build/kselftest-results-<class>.json for comparing
classes. The list keeps to tests that finish in seconds under TCG; see
README.md for the ones left out and why.
"""

import json
import re

import pytest

from schedlab import build, paths, tap

# collection -> tests run from it
CHOSEN = {
    "rseq": ["basic_test", "basic_percpu_ops_test", "param_test"],
    "futex": ["run.sh"],
    "membarrier": ["membarrier_test_single_thread", "membarrier_test_multi_thread"],
    "timers": ["posix_timers", "nanosleep", "mqueue-lat", "threadtest"],
    "cpu-hotplug": ["cpu-on-off-test.sh"],
    "sched": ["cs_prctl_test"],
    "cgroup": ["test_cpu", "test_core"],
}
# Tests that may report SKIP on this configuration, with the reason.
MAY_SKIP = {
    "sched": "core scheduling (CONFIG_SCHED_CORE) is not built in",
}


@pytest.fixture(scope="session")
def selftests_installed(debug_kernel):
    try:
        return build.build_selftests("debug")
    except build.BuildError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="session")
def selftest_run(guest, selftests_installed):
    lines = [f"cp -a {selftests_installed} /tmp/ks", "cd /tmp/ks"]
    for collection, tests in CHOSEN.items():
        lines.append(f"echo '=== collection {collection}'")
        lines.append("./run_kselftest.sh " + " ".join(f"-t {collection}:{t}" for t in tests))
    script = "\n".join(lines)
    res = guest(script, timeout=1200)
    cls = re.search(r"sched: normal tasks run on (\w+)", res.console)
    sections = {}
    for part in re.split(r"^=== collection ", res.output, flags=re.M)[1:]:
        name, _, body = part.partition("\n")
        sections[name.strip()] = body
    record = {c: [{"name": p.name, "ok": p.ok, "directive": p.directive}
                  for p in tap.parse(sections.get(c, "")).top()] for c in CHOSEN}
    out = paths.BUILD / f"kselftest-results-{cls.group(1) if cls else 'unknown'}.json"
    out.write_text(json.dumps(record, indent=1) + "\n")
    return sections


@pytest.mark.parametrize("collection", list(CHOSEN))
def test_selftest_collection(selftest_run, collection):
    body = selftest_run.get(collection)
    assert body is not None, f"{collection} did not run"
    result = tap.parse(body)
    problems = result.problems()
    assert not problems, "\n".join(problems) + "\n--- output ---\n" + body[-4000:]
    ran = [p for p in result.top() if not p.skipped]
    if collection in MAY_SKIP:
        return
    assert len(ran) == len(CHOSEN[collection]), f"skipped: {body[-2000:]}"
