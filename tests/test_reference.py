"""scripts/reference-kernel and the reference kernels' variant in
scripts/reproduce (docs/bmq.rst, "Beside Project C").

The suite may not ship Project C's patch and has no network, so the tool
runs on a stand-in patch of ours (tests/data/reference-standin.patch: one
comment line of kernel/sched/core.c) up to one compiled object; its
fix-ups and configuration are checked on small trees. The real
comparison (Project C's kernel booted, bmq_checks.c on it) runs when
SCHEDLAB_PRJC_PATCH names the patch, and is skipped with that hint
otherwise."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from schedlab import paths, reference, tap, vm
from schedlab.paths import GUEST_TESTS
from schedlab.reproduce.document import METADATA_KEYS, document, validate
from schedlab.reproduce.experiments.class_bench import BMQ_THESIS
from schedlab.reproduce.experiments.series import switch_command
from schedlab.reproduce.registry import EXPERIMENTS, Outcome
from schedlab.reproduce.report import table
from schedlab.reproduce.runner import GuestRunner, references_for, run_experiment, sysctl_command

SCRIPT = paths.REPO / "scripts" / "reference-kernel"
STANDIN = Path(__file__).parent / "data" / "reference-standin.patch"
PRJC_PATCH = os.environ.get("SCHEDLAB_PRJC_PATCH", "")


def tool(*args, timeout=1800):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


# -- fix-ups and configuration, on small trees -----------------------------

CORE = """static void f(void)
{
\tcpuset_read_lock();
\tcpuset_read_unlock();
}

int task_can_attach(struct task_struct *p,
\t\t    const struct cpumask *cs_effective_cpus)
{
\treturn 0;
}
"""
CPUSET = """\t\tif (dl_task(task)) {
\t\t\tcs->nr_migrate_dl_tasks++;
\t\t\tcs->sum_migrate_dl_bw += task->dl.dl_bw;
\t\t}
\t\tret = dl_bw_alloc(cpu, cs->sum_migrate_dl_bw);
"""


def small_tree(tmp_path, core=CORE, cpuset=CPUSET):
    (tmp_path / "kernel/sched").mkdir(parents=True)
    (tmp_path / "kernel/cgroup").mkdir(parents=True)
    if core is not None:
        (tmp_path / "kernel/sched/alt_core.c").write_text(core)
    (tmp_path / "kernel/cgroup/cpuset.c").write_text(cpuset)
    return tmp_path


def test_fixups_make_project_c_6_1_160_fit_6_1_192(tmp_path):
    tree = small_tree(tmp_path)
    done = reference.apply_fixups(tree, log=lambda m: None)
    core = (tree / "kernel/sched/alt_core.c").read_text()
    cpuset = (tree / "kernel/cgroup/cpuset.c").read_text()
    assert "cpuset_read" not in core and "\tcpuset_lock();" in core and "cpuset_unlock();" in core
    assert "int task_can_attach(struct task_struct *p)\n{" in core
    assert "int dl_bw_alloc(int cpu, u64 dl_bw)" in core and "void dl_bw_free(" in core
    assert "#ifndef CONFIG_SCHED_ALT\n\t\t\tcs->sum_migrate_dl_bw += task->dl.dl_bw;\n#endif" \
        in cpuset
    assert len(done) == 5
    # Applied once: a second pass finds nothing to do and changes nothing.
    assert reference.apply_fixups(tree, log=lambda m: None) == []
    assert (tree / "kernel/sched/alt_core.c").read_text() == core
    assert (tree / "kernel/cgroup/cpuset.c").read_text() == cpuset


def test_fixups_leave_a_tree_without_project_c_alone(tmp_path):
    tree = small_tree(tmp_path, core=None)
    assert reference.apply_fixups(tree, log=lambda m: None) == []
    assert (tree / "kernel/cgroup/cpuset.c").read_text() == CPUSET


def test_configuration_drops_our_options_and_adds_the_scheduler():
    symbols = {"SMP", "NUMA", "SCHED_DEBUG", "NUMA_BALANCING", "SCHED_AUTOGROUP",
               "CFS_BANDWIDTH", "SCHED_ALT", "SCHED_BMQ", "SCHED_PDS", "KUNIT"}
    lines, missing = reference.fragment_lines(symbols, "bmq")
    assert missing == []
    assert "CONFIG_SMP=y" in lines and "CONFIG_KUNIT=y" in lines
    assert not [line for line in lines if "SCHED_ULE" in line or "SCHED_MUQSS" in line
                or "SCHED_SANITY" in line or "SCHED_EVENTS" in line]
    assert "# CONFIG_SCHED_DEBUG is not set" in lines and "CONFIG_SCHED_DEBUG=y" not in lines
    assert lines[-2:] == ["CONFIG_SCHED_ALT=y", "CONFIG_SCHED_BMQ=y"]
    pds = reference.fragment_lines(symbols, "pds")[0]
    assert pds[-2:] == ["CONFIG_SCHED_ALT=y", "CONFIG_SCHED_PDS=y"]
    # base.config's CONFIG_SCHED_BMQ=y is our class; in Project C's tree it
    # would choose BMQ over PDS.
    assert not [line for line in pds if "SCHED_BMQ" in line]
    _, missing = reference.fragment_lines(symbols - {"SCHED_ALT", "SCHED_PDS"}, "pds")
    assert missing == ["CONFIG_SCHED_ALT=y", "CONFIG_SCHED_PDS=y"]
    lines, missing = reference.fragment_lines(set(), "none")
    assert missing == [] and lines == ["# CONFIG_NUMA_BALANCING is not set",
                                       "# CONFIG_CFS_BANDWIDTH is not set",
                                       "# CONFIG_SCHED_AUTOGROUP is not set",
                                       "# CONFIG_SCHED_DEBUG is not set"]


# -- the tool on the stand-in patch ----------------------------------------

@pytest.fixture(scope="module")
def standin():
    """The stand-in patch built up to kernel/sched/core.o."""
    res = tool("--patch", STANDIN, "--scheduler", "none", "--name", "standin",
               "--target", "kernel/sched/core.o")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr
    return res


def test_standin_is_patched_configured_and_compiled(standin):
    root = reference.ROOT / "standin"
    core = (root / "linux/kernel/sched/core.c").read_text().splitlines()
    assert core[4] == " *  Core kernel scheduler code and related syscalls (a stand-in reference)"
    info = json.loads((root / "info.json").read_text())
    assert info["patch_sha256"] == reference.sha256(STANDIN)
    assert info["patch_subject"] == "[PATCH] A stand-in for an original scheduler's patch"
    assert info["scheduler"] == "none" and info["fixups"] == []
    config = (root / "obj/.config").read_text()
    assert "CONFIG_NUMA=y" in config and "CONFIG_SCHEDSTATS=y" in config
    assert "# CONFIG_SCHED_DEBUG is not set" in config
    assert "CONFIG_SCHED_ULE" not in config and "CONFIG_SCHED_SANITY" not in config
    assert (root / "obj/kernel/sched/core.o").stat().st_size > 0
    assert "reference-kernel: standin kernel/sched/core.o done" in standin.stdout


def test_standin_is_not_project_c(standin):
    """--scheduler bmq on a patch without Project C's Kconfig: refused
    after the patch is applied, naming what is missing."""
    res = tool("--patch", STANDIN, "--name", "standin-bmq", "--target", "kernel/sched/")
    assert res.returncode == 1
    assert "defines no CONFIG_SCHED_ALT, CONFIG_SCHED_BMQ" in res.stderr


def test_a_patch_that_does_not_apply_is_refused(standin, tmp_path):
    bad = tmp_path / "bad.patch"
    bad.write_text(STANDIN.read_text().replace(" *  kernel/sched/core.c\n",
                                               " *  kernel/sched/not-core.c\n"))
    res = tool("--patch", bad, "--scheduler", "none", "--name", "standin-bad",
               "--target", "kernel/sched/core.o")
    assert res.returncode == 1
    assert "does not apply to 6.1.192 (rejected: kernel/sched/core.c.rej)" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


# -- the reference variant in scripts/reproduce -----------------------------

def test_reference_variant_is_compared_with_the_class_it_is_the_original_of():
    exp = EXPERIMENTS["bmq-thesis"]
    info = {"scheduler": "bmq", "patch_sha256": "ab" * 32, "like": "bmq"}
    runs = [{"bench": "messaging-g10", "variant": v, "round": r, "value": value * r,
             "unit": "s"}
            for r in range(1, 6) for v, value in (("cfs", 1.0), ("bmq", 2.0),
                                                   ("prjc-bmq", 3.0))]
    meta = {k: "" for k in METADATA_KEYS}
    meta.update(classes=list(exp.classes), features=[], topology="1x2")
    doc = document(exp, runs, {"messaging-g10": BMQ_THESIS["messaging-g10"]},
                             {}, [], meta, {"prjc-bmq": info})
    assert doc["variants"][-1] == "prjc-bmq"
    assert validate(doc) == []
    vs = doc["summary"]["messaging-g10"]["vs_base"]
    assert vs["prjc-bmq"]["median"] == pytest.approx(1.5)
    assert vs["bmq"]["median"] == pytest.approx(2.0)
    assert "prjc-bmq vs bmq" in table(doc)
    assert switch_command("prjc-bmq") == "[ ! -e /proc/sys/kernel/sched_class ]"


def test_reference_runs_only_experiments_of_its_class():
    refs = {"prjc-bmq": {"scheduler": "bmq"}, "prjc-pds": {"scheduler": "pds"},
            "standin": {"scheduler": "none"}}
    assert set(references_for(EXPERIMENTS["bmq-thesis"], refs)) == \
        set(refs)
    assert references_for(EXPERIMENTS["wasted-cores"], refs) == {}


# -- the real comparison ----------------------------------------------------

@pytest.fixture(scope="module")
def prjc_kernel():
    if not PRJC_PATCH:
        pytest.skip("Project C's patch is absent: SCHEDLAB_PRJC_PATCH=PATH/0009-prjc.patch "
                    "(linux-tkg-patches/6.1/ of github.com/Frogging-Family/linux-tkg) "
                    "runs BMQ beside the original")
    res = tool("--patch", PRJC_PATCH, "--name", "prjc-bmq", timeout=3600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr
    return reference.kernel_image("prjc-bmq")


@pytest.mark.bmq
def test_bmq_checks_on_project_c(prjc_kernel, tmp_path):
    """bmq_checks.c on Project C's own kernel: it boots without a splat,
    runs Project C (no kernel.sched_class), and every test runs or says
    why it cannot be observed there (SKIP); what differs from ours is
    bmq.rst's table, not a failure of the suite."""
    from schedlab import build
    uleload = build.guest_program("uleload")
    checks = build.guest_program("bmq_checks")
    res = vm.boot(f"ULELOAD={uleload} BMQ_SLICE_MS=4 {checks}", "2x4",
                  "sched_timeslice=4", kernel=prjc_kernel, timeout=1200, outdir=tmp_path)
    assert "kernel: Project C original: sched/bmq: BMQ CPU Scheduler" in res.output
    parsed = tap.parse(res.output)
    assert parsed.plan and len(parsed.top()) == parsed.plan, res.output[-3000:]
    # 6.1's harness names no test on a SKIP line: the reasons say which.
    reasons = " | ".join(p.reason for p in parsed.top() if p.skipped)
    for why in ("the slice left is not exported", "has no wakeup granularity",
                "no kernel.sched_class on Project C"):
        assert why in reasons, reasons


# -- class_bench.sh on a kernel without kernel.sched_class ------------------

needs_plain_host = pytest.mark.skipif(
    Path("/proc/sys/kernel/sched_class").exists() or os.geteuid() != 0
    or not shutil.which("perf"),
    reason="needs root, perf and a host kernel without kernel.sched_class")


@needs_plain_host
def test_class_bench_runs_a_reference_variant_every_round():
    """This machine's kernel has no kernel.sched_class, as a reference
    kernel has not: class_bench.sh runs the one variant in every round
    (the rotation of a single name once lost it after round 2), and
    refuses a class of ours there."""
    script = str(GUEST_TESTS / "class_bench.sh")
    res = subprocess.run(["sh", script, "prjc-bmq", "3", "0", "wakeup", "", "pipe"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert re.findall(r"^result pipe prjc-bmq (\d) \d", res.stdout, re.M) == ["1", "2", "3"]
    res = subprocess.run(["sh", script, "cfs bmq", "1", "0", "wakeup", "", "pipe"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    assert "no /proc/sys/kernel/sched_class: cannot run cfs" in res.stdout


def test_our_bmq_runs_as_the_original_beside_project_c(monkeypatch, tmp_path):
    """Beside Project C's kernel, our kernel's boots turn off BMQ's one
    deviation that has a switch (kernel.sched_bmq_kernel_boost), so that
    prjc-bmq vs bmq compares the same decisions; the reference kernel's
    boots set nothing, and other experiments keep the default."""
    assert reference.original_sysctls({"prjc-bmq": {"scheduler": "bmq"}}) == \
        {"sched_bmq_kernel_boost": 0}
    assert reference.original_sysctls({"prjc-pds": {"scheduler": "pds"},
                                       "standin": {"scheduler": "none"}}) == {}
    commands = []

    def boot(command, topology, cmdline, **kw):
        commands.append((kw["kernel"], command))
        return SimpleNamespace(output="", status=0)
    monkeypatch.setattr(vm, "boot", boot)
    monkeypatch.setattr(vm, "resolve_accel", lambda kernel, mode: "tcg")
    monkeypatch.setattr(reference, "kernel_image", lambda name: Path("/ref") / name)
    runner = GuestRunner("debug", "mttcg", tmp_path)
    seen = []

    def run(ctx, topology):
        seen.append(dict(getattr(ctx.runner, "sysctls", {})))
        ctx.runner.run("true", topology, "tag")
        return Outcome(runs=[], benches={})
    exp = SimpleNamespace(topologies_for=lambda *a: ["1x2"], run=run, variants=("cfs", "bmq"),
                          classes=("cfs", "bmq"), estimate=lambda *a: 1.0)
    ctx = SimpleNamespace(runner=runner, references={"prjc-bmq": {"scheduler": "bmq"}},
                          rounds=1, boots=1, progress=None, classes=(), quick=True)
    monkeypatch.setattr("schedlab.reproduce.runner.references_for", lambda exp, refs: refs)
    run_experiment(exp, 0, ctx, None, False)
    assert seen == [{"sched_bmq_kernel_boost": 0}, {}]
    ours, theirs = commands
    assert "echo 0 >/proc/sys/kernel/sched_bmq_kernel_boost ||" in ours[1]
    assert "sched_bmq" not in theirs[1] and theirs[0] == Path("/ref/prjc-bmq")
    assert runner.sysctls == {}
    set_it = sysctl_command({"sched_bmq_kernel_boost": 0})
    res = subprocess.run(["sh", "-c", set_it.replace("/proc/sys/kernel", str(tmp_path))
                          + "echo went on"], capture_output=True, text=True)
    assert res.stdout == "went on\n" and (tmp_path / "sched_bmq_kernel_boost").read_text() == "0\n"
    res = subprocess.run(["sh", "-c", set_it.replace("/proc/sys/kernel", "/nonexistent")
                          + "echo went on"], capture_output=True, text=True)
    assert res.returncode == 2
    assert res.stdout == "reproduce: cannot set kernel.sched_bmq_kernel_boost=0\n"
