"""Host-side test driver: builds the debug kernel once per session and
boots it under QEMU for the guest tests (see README.md, "Tests")."""

import os
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
