"""The BMQ class (sched=bmq), in boots of the debug kernel:

- bmq_checks.c (kselftest harness) on 2x4 with a bad sched_timeslice=,
  after class_generic's checks for bmq in the same boot: consistent
  bmq.* lines in /proc/<pid>/sched, a sleeper boosted and a spinner
  deboosted, strict levels between nice values, the
  kernel.sched_bmq_yield_type sysctl and what each type does to a
  yielder, the 4 ms slice kept (and reported by sched_rr_get_interval()
  to a jiffy), idle CPUs pulling queued spinners, the
  kernel.sched_bmq_wakeup_gran_us sysctl and what it does to a sleeper's
  wait beside a spinner, HRTICK_BMQ, priority inheritance, exec, idle
  kicks, no balancing between busy CPUs (Project C's behaviour, pinned),
  a waiting task's place kept across affinity changes, two cpuset
  partitions; its measurements arrive as JSON lines;
- bmq_checks.c's bmq_smt tests on the smt preset with sched_timeslice=2,
  with its slice tests (the 2 ms slice, sched_rr_get_interval() not 0):
  spinners placed on different cores and moved apart by the SMT active
  balance; and on 2x2x2, where that balance moves spinners to idle cores
  of another LLC;
- class_stress.c: a stress-ng storm and CPU offline/online under load.

The selftest comparison with CFS is in test_selftests.py and the run-time
switch in test_sched_select.py."""

import re

import pytest

from schedlab import build
from schedlab.tap import assert_ok as assert_tap


TIMEOUT = 300

bmq = pytest.mark.bmq


@pytest.fixture(scope="module")
def uleload():
    return build.guest_program("uleload")


# What bmq_checks.c measures, (test, name) of its JSON lines.
BMQ_METRICS = {
    ("yield_types_beside_a_spinner", "2"), ("idle_cpus_pull_unpinned_spinners", "pulls"),
    ("wakeup_gran", "wait_per_run_us_1s"), ("hrtick_ends_slices_on_time", "run_per_pick_us"),
    ("idle_cpus_outside_the_affinity_are_not_kicked", "ipis"),
    ("from_behind_rt", "lost_ms"), ("from_behind_a_task_made_rt", "lost_ms"),
}


@pytest.fixture(scope="module")
def checks_run(class_checks, uleload):
    return class_checks("bmq", env=f"ULELOAD={uleload} BMQ_SLICE_MS=4",
                        cmdline="sched_timeslice=3", timeout=TIMEOUT)


@bmq
def test_checks_in_guest(checks_run, assert_class_checks):
    assert_class_checks(checks_run, "bmq", BMQ_METRICS)


@bmq
def test_boot_messages(checks_run):
    log = "\n".join(checks_run.kernel_log())
    assert "sched: normal tasks run on bmq (sched=)" in log
    assert "sched: sched_timeslice=3: want 2 or 4 (ms), keeping 4" in log


def assert_smt_checks(output, what):
    """bmq_checks passed, and every test SCHED_TEST_ONLY named ran."""
    tap = assert_tap(output, what)
    ran = {p.name for p in tap.top() if not p.skipped}
    want = {"bmq.kernel_runs_bmq", "bmq.slice_within_sched_timeslice",
            "bmq.rr_interval_is_the_slice"}
    assert want <= ran and len([n for n in ran if n.startswith("bmq_smt.")]) == 3, ran


@bmq
def test_smt_placement_and_active_balance(smt_boot, smt_part):
    """bmq_checks' slice and SMT tests in the shared smt boot
    (conftest.smt_boot), switched to bmq at run time, sched_timeslice=2
    on the command line."""
    assert_smt_checks(smt_part("bmq"), "bmq_checks' SMT tests")
    assert not [l for l in smt_boot[0].kernel_log() if "want 2 or 4" in l]


@bmq
def test_smt_active_balance_beyond_the_llc(guest, bmq_smt, tmp_path_factory):
    """bmq_checks' slice and SMT tests on 2x2x2 (two nodes, each one LLC
    of two SMT cores): the four spinners allowed on the first LLC's cores
    reach the other LLC's idle cores through the SMT active balance, as
    Project C's looks at every online CPU."""
    out = tmp_path_factory.mktemp("bmq-llc2")
    run = guest(bmq_smt(4), topology="2x2x2", cmdline="sched=bmq", outdir=out,
                timeout=TIMEOUT)
    assert_smt_checks(run.output, "bmq_checks' SMT tests")
    assert re.search(r"[1-9]\d* active balance moves out of the LLC", run.output), run.output


@bmq
def test_stress_and_hotplug_lose_no_task(guest, class_stress):
    """stress-ng fork/switch/affinity/cpu-online storm, then every CPU but 0
    offlined and onlined under 2 spinners per CPU, on the debug kernel:
    no splat (the harness fails on any), no spinner lost or left on an
    offline CPU."""
    res = guest(class_stress("bmq", 15, 1), topology="2x2",
                cmdline="sched=bmq", timeout=600)
    assert_tap(res.output, "class_stress under sched=bmq")
