"""Host-side test driver: builds the debug kernel once per session and
boots it under QEMU for the guest tests (see README.md, "Tests")."""

import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "lib"))

from schedlab import build, paths, tap, vm  # noqa: E402

GUEST_TESTS = paths.GUEST_TESTS


def pytest_addoption(parser):
    parser.addoption("--accel", choices=vm.ACCELS,
                     default=os.environ.get(vm.ACCEL_ENV) or "auto",
                     help="how the guest tests' QEMU runs the vCPUs: auto (KVM if a probe "
                          "boot works, else TCG), tcg or kvm (default: auto, or "
                          f"${vm.ACCEL_ENV})")


def pytest_configure(config):
    vm.set_accel(config.getoption("accel"))


@pytest.fixture(scope="session")
def debug_kernel():
    """The debug (lockdep) kernel, built from the prepared tree."""
    if build.build("debug") != 0:
        pytest.fail("building the debug kernel failed", pytrace=False)
    return paths.kernel_image("debug")


@pytest.fixture(scope="session")
def guest(debug_kernel):
    """boot(command, topology, cmdline, ...) on the debug kernel."""
    def run(command, topology="2x4", cmdline="", **kw):
        kw.setdefault("timeout", 600)
        return vm.boot(command, topology, cmdline, kernel=debug_kernel, **kw)
    return run


assert_tap = tap.assert_ok


@pytest.fixture(scope="session")
def default_boot(guest):
    """One 2x4 boot with no sched= parameter, shared by the tests that only
    need to look at a default boot (class selection, KUnit)."""
    return guest(f"sh {GUEST_TESTS}/sched_class_select.sh cfs")


# Parts of the shared smt boot, in the order they run.
SMT_PARTS = (("smt_spread ule", "ule"), ("smt_spread cfs", "cfs"), ("bmq_smt", "bmq"))
PART_RE = r"^--- part (.+) on (\w+) ---$"


def split_parts(output):
    """{part name: (class it ran under, its output)} from lines PART_RE
    opens."""
    parts, name = {}, None
    for line in output.splitlines():
        m = re.match(PART_RE, line.rstrip("\r"))
        if m:
            name = m[1]
            parts[name] = (m[2], [])
        elif name:
            parts[name][1].append(line)
    return {k: (cls, "\n".join(lines)) for k, (cls, lines) in parts.items()}


@pytest.fixture(scope="session")
def smt_boot(guest):
    """One boot of the smt preset (4 cores x 2 threads) for the SMT
    placement tests of ULE, CFS and BMQ: smt_spread.sh under ule (booted
    with sched=ule), then cfs and bmq through the run-time switch, which
    moves every normal task as a boot with sched= would have placed it.
    Three boots of 8 vCPUs cost about a minute more. sched_timeslice=2 is
    for bmq_smt.sh."""
    uleload = build.guest_program("uleload")
    steps = []
    for name, cls in SMT_PARTS:
        steps.append(f"echo {cls} >/proc/sys/kernel/sched_class; "
                     f"echo \"--- part {name} on $(cat /proc/sys/kernel/sched_class) ---\"")
        script = name.split()[0]
        args = f"/tmp/out {uleload} 2" if script == "bmq_smt" else str(uleload)
        steps.append(f"sh {GUEST_TESTS}/{script}.sh {args}")
    res = guest("; ".join(steps), topology="smt", cmdline="sched=ule sched_timeslice=2",
                timeout=900)
    return res, split_parts(res.output)


@pytest.fixture
def smt_part(smt_boot):
    """part(name): one part's output of the smt boot, after checking it ran
    under its class."""
    res, parts = smt_boot

    def part(name):
        assert name in parts, f"no part {name!r} in the smt boot:\n{res.output[-3000:]}"
        want = dict(SMT_PARTS)[name]
        cls, text = parts[name]
        assert cls == want, f"{name} ran under {cls}, not {want} (the run-time switch failed)"
        return text
    return part
