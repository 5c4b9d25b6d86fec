"""KUnit suites built into the debug kernel run at every boot; their KTAP is
parsed from the console of the default boot."""

import pytest

from schedlab import tap

SUITES = ["sched_class_select"]


def test_kunit_ran(default_boot):
    suites = tap.kunit_suites(default_boot.console)
    missing = [s for s in SUITES if s not in suites]
    assert not missing, f"KUnit suites missing from the console: {missing}"


@pytest.mark.parametrize("suite", SUITES)
def test_kunit_suite(default_boot, suite):
    result = tap.kunit_suites(default_boot.console).get(suite)
    assert result is not None, f"suite {suite} did not run"
    problems = result.problems()
    assert not problems, "\n".join(problems)
    assert len(result.top()) > 0
