"""Host-side test driver: builds the debug kernel once per session and
boots it under QEMU for the guest tests (see README.md, "Tests")."""

import json
import os

import pytest

from schedlab import build, paths, tap, vm
from schedlab.reproduce.experiments.series import marked_runs

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
def class_generic():
    """command(boot, classes=None): the guest command that runs
    class_generic.c's checks, that the kernel booted on BOOT and the
    checks every class of normal tasks passes, for each class of CLASSES
    (a list; default: every class)."""
    program = build.guest_program("class_generic")

    def command(boot, classes=None):
        env = f"CLASS_GENERIC_BOOT={boot}"
        if classes:
            env += f" CLASS_GENERIC_CLASSES={','.join(classes)}"
        return f"{env} {program}"
    return command


GENERIC_MARK, CHECKS_MARK = "# class_generic", "# class checks"


@pytest.fixture(scope="session")
def class_checks(guest, class_generic, tmp_path_factory):
    """run(cls, env="", cmdline=""): one 2x4 boot with sched=CLS (and
    CMDLINE) that runs class_generic's checks for CLS, then CLS_checks.c
    with ENV and its metrics file in the boot's outdir."""
    def run(cls, env="", cmdline="", timeout=600):
        out = tmp_path_factory.mktemp(f"{cls}-checks")
        checks = build.guest_program(f"{cls}_checks")
        return guest(f"echo '{GENERIC_MARK}'; {class_generic(cls, [cls])}; "
                     f"echo '{CHECKS_MARK}'; {env} SCHED_TEST_METRICS=/tmp/out/metrics.json "
                     f"{checks}", topology="2x4", cmdline=f"sched={cls} {cmdline}".strip(),
                     outdir=out, timeout=timeout)
    return run


def _assert_class_checks(res, cls, metrics):
    """Both programs of a class_checks boot passed, and CLS_checks wrote
    every (test, name) of METRICS."""
    generic = res.output.partition(GENERIC_MARK)[2].partition(CHECKS_MARK)[0]
    assert_tap(generic, f"class_generic under sched={cls}")
    assert_tap(res.output.partition(CHECKS_MARK)[2], f"{cls}_checks")
    lines = (res.outdir / "metrics.json").read_text().splitlines()
    got = {(m["test"], m["name"]) for m in map(json.loads, lines)}
    assert metrics <= got, metrics - got


@pytest.fixture(scope="session")
def assert_class_checks():
    """The check of a class_checks boot, as a fixture: pytest imports
    tools/sched-vis/tests' conftest under the same name, so test modules
    cannot import this one."""
    return _assert_class_checks


@pytest.fixture(scope="session")
def class_stress():
    """command(cls, seconds, rounds): the guest command that runs
    class_stress.c's checks of CLS, its storm for SECONDS and ROUNDS rounds
    of hotplug under load."""
    program = build.guest_program("class_stress")

    def command(cls, seconds, rounds):
        return (f"CLASS_STRESS_CLASS={cls} CLASS_STRESS_SECONDS={seconds} "
                f"CLASS_STRESS_ROUNDS={rounds} {program}")
    return command


@pytest.fixture(scope="session")
def default_boot(guest, class_generic):
    """One 2x4 boot with no sched= parameter, shared by the tests that only
    need to look at a default boot (class selection, KUnit, the classes'
    checks and knobs): class_generic switches to each class in turn."""
    return guest(class_generic("cfs"))


# The shared smt boot: each class in turn and the script it runs.
# MuQSS has no balancer: a third or fourth spinner that lands on a busy
# core's sibling, or one moved there, can stay (muqss.rst), so its part
# places two spinners only.
# bmq_checks' tests of the boot's slice, and the SMT ones.
BMQ_SMT_ONLY = ("bmq.kernel_runs_bmq,bmq.slice_within_sched_timeslice,"
                "bmq.rr_interval_is_the_slice,bmq_smt")


def bmq_smt_command(slice_ms):
    """The guest command of bmq_checks' BMQ_SMT_ONLY tests, the booted
    sched_timeslice= being SLICE_MS."""
    return (f"ULELOAD={build.guest_program('uleload')} BMQ_SLICE_MS={slice_ms} "
            f"SCHED_TEST_ONLY={BMQ_SMT_ONLY} {build.guest_program('bmq_checks')}")


@pytest.fixture(scope="session")
def bmq_smt():
    """command(slice_ms): bmq_smt_command() as a fixture, for test modules."""
    return bmq_smt_command


# (part, class, command): a part's output is under its name.
SMT_PARTS = (("ule", "ule", "sh {tests}/smt_spread.sh {uleload}"),
             ("cfs", "cfs", "sh {tests}/smt_spread.sh {uleload}"),
             ("bmq", "bmq", "{bmq}"),
             ("muqss", "muqss", "COUNTS=2 REPAIR=0 sh {tests}/smt_spread.sh {uleload}"),
             ("muqss_smt", "muqss", "SCHED_TEST_ONLY=muqss_smt {muqss_checks}"))
SMT_MARK = "smt-part"


@pytest.fixture(scope="session")
def smt_boot(guest):
    """One boot of the smt preset (4 cores x 2 threads) for the SMT
    placement tests of ULE, CFS, BMQ and MuQSS: booted with sched=ule, then
    cfs, bmq and muqss through the run-time switch, which moves every
    normal task as a boot with sched= would have placed it. Four boots of
    8 vCPUs cost about a minute and a half more. sched_timeslice=2 is for
    BMQ's part. Each part opens with rotated_command()'s marker
    (schedlab/reproduce/experiments/series.py), printed only once the
    switch succeeded; (the boot, {part: its output})."""
    programs = {"tests": GUEST_TESTS, "uleload": build.guest_program("uleload"),
                "bmq": bmq_smt_command(2), "muqss_checks": build.guest_program("muqss_checks")}
    steps = [f"echo {cls} >/proc/sys/kernel/sched_class && echo {SMT_MARK} 1 {part} && " +
             script.format(**programs) for part, cls, script in SMT_PARTS]
    res = guest("; ".join(steps), topology="smt", cmdline="sched=ule sched_timeslice=2",
                timeout=900)
    runs = marked_runs(res.output, SMT_MARK)
    return res, {part: "\n".join(lines) for (_, part), lines in runs.items()}


@pytest.fixture
def smt_part(smt_boot):
    """part(name): the output of the smt boot's part NAME (SMT_PARTS)."""
    res, parts = smt_boot

    def part(name):
        assert name in parts, \
            f"no part {name} (the run-time switch failed?):\n{res.output[-3000:]}"
        return parts[name]
    return part
