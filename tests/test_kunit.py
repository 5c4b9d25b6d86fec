"""KUnit suites built into the debug kernel run at every boot; their KTAP is
parsed from the console of the default boot."""

import pytest

from schedlab import tap

# Suites this tree adds; each must run and pass.
SUITES = ["sched_class_select", "sched_fair_min_load", "sched_events", "sched_ule", "sched_bmq", "sched_muqss"]


def test_every_kunit_suite_that_ran_passed(default_boot):
    suites = tap.kunit_suites(default_boot.console)
    missing = [s for s in SUITES if s not in suites]
    assert not missing, f"KUnit suites missing from the console: {missing}"
    failed = {name: t.problems() for name, t in suites.items() if t.problems()}
    assert not failed, failed


@pytest.mark.parametrize("suite", SUITES)
def test_kunit_suite(default_boot, suite):
    result = tap.kunit_suites(default_boot.console).get(suite)
    assert result is not None, f"suite {suite} did not run"
    assert not result.problems(), "\n".join(result.problems())
    assert len(result.top()) > 0 and not any(p.skipped for p in result.top())
