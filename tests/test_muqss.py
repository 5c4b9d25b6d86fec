"""The MuQSS class (sched=muqss), in boots of the debug kernel:

- muqss_checks.sh on 2x4: every normal task on muqss with muqss.* lines in
  /proc/<pid>/sched, the sysctls' ranges, nice 0 against nice 19 on one
  CPU in MuQSS's ratio (about 34:1, where CFS gives 68:1), a sleeper's
  deadline kept while its slice lasts, and spinners forked on one CPU
  spread by the pick's look across queues;
- class_stress.sh: a stress-ng storm and CPU offline/online under load.

KUnit (sched_muqss) covers the deadline arithmetic, keys, the skip list
and the locality order; test_kunit.py runs it."""

import pytest

from schedlab.paths import GUEST_TESTS
from schedlab.tap import assert_ok as assert_tap

muqss = pytest.mark.muqss


@muqss
def test_checks_in_guest(guest, tmp_path_factory):
    out = tmp_path_factory.mktemp("muqss-checks")
    res = guest(f"sh {GUEST_TESTS}/muqss_checks.sh", topology="2x4", cmdline="sched=muqss",
                outdir=out, timeout=300)
    assert_tap(res.output, "muqss_checks.sh")
    assert "sched: normal tasks run on muqss (sched=)" in "\n".join(res.kernel_log())


@muqss
def test_stress_and_hotplug_lose_no_task(guest):
    """A stress-ng storm, then CPU 1 offlined and onlined under 2 spinners
    per CPU, on the debug kernel: no splat (the harness fails on any), no
    spinner lost or left on an offline CPU."""
    res = guest(f"sh {GUEST_TESTS}/class_stress.sh muqss 15 1", topology="2x2",
                cmdline="sched=muqss", timeout=600)
    assert_tap(res.output, "class_stress.sh under sched=muqss")
