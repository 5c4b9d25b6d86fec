"""Every command in scripts/ behaves: a bad argument ends in one line naming
the bad value and exit status 2 before anything is installed, extracted,
built or booted; --help exits 0, names every option with its default and
the exit statuses, and runs nothing; a build says how far it got and a
boot when the guest is up; a guest command's own status is told apart from
a guest failure. Host-only: stand-ins on PATH play make, apt-get, pip and
QEMU, so no kernel is built and no guest booted."""

import importlib
import os
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from schedlab import __main__ as schedlab_main
from schedlab import build, cli, command, demo, paths, vm
from schedlab.reproduce import cli as reproduce_cli

SCRIPTS = paths.REPO / "scripts"
COMMANDS = sorted(p.name for p in SCRIPTS.iterdir() if p.is_file() and os.access(p, os.X_OK))
# What a usage error or --help must not reach: each stand-in records its call.
GUARDED = ("make", "apt-get", "apt", "dpkg-query", "pip", "pip3", "sudo",
           "qemu-system-x86_64", "gcc", "cc", "tar", "git", "ccache")
# Commands whose parser lives in a module of their own that boots.
SCRIPT_PARSERS = ("bench-sched", "bench-observability", "wasted-cores")
# Commands with a parser of their own that read files and boot nothing.
HOST_SCRIPTS = ("class-hooks",)
CLI_COMMANDS = ("prepare", "refresh", "export", "build", "reference-kernel", "boot", "demo")
SHELL_COMMANDS = ("setup", "test")


def stand_in(path, text):
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture
def sandbox(tmp_path):
    """A PATH whose make, apt-get, pip, QEMU, ... only record being run; a
    build folder and a source tarball that do not exist; a file and a
    prepared-looking tree to pass as paths."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    for name in GUARDED:
        stand_in(bin_dir / name, f'#!/bin/sh\necho "{name} $*" >>"{calls}"\nexit 97\n')
    (tmp_path / "file").write_text("not a folder\n")
    (tmp_path / "tree" / ".git").mkdir(parents=True)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "0001-x.patch").write_text("")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}",
               SCHEDLAB_BUILD=str(tmp_path / "build"), SCHEDLAB_ACCEL="tcg",
               SCHEDLAB_SOURCE=str(tmp_path / "linux-source-6.1.tar.xz"))

    def run(name, *args):
        args = [a.format(tmp=tmp_path) for a in args]
        return subprocess.run([str(SCRIPTS / name), *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)

    def ran_nothing():
        assert not calls.exists(), f"ran: {calls.read_text()}"
        assert not (tmp_path / "build").exists(), "the build folder was created"
    return SimpleNamespace(run=run, ran_nothing=ran_nothing, tmp=tmp_path, env=env)


def test_every_command_is_covered():
    assert set(COMMANDS) == (set(SCRIPT_PARSERS + HOST_SCRIPTS + CLI_COMMANDS + SHELL_COMMANDS)
                             | {"reproduce", "check-configs", "check-series"})
    assert {c for c, _, _ in BAD} == set(COMMANDS)


FIRST_PATCH = (paths.REPO / "patches" / "series").read_text().split()[0]

# (command, arguments, what the one-line message must name)
BAD = [
    ("boot", ["--sched", "ulee", "true"], "ulee"),
    ("boot", ["-t", "bogus", "true"], "bogus"),
    ("boot", ["-t", "0x4", "true"], "0x4"),
    ("boot", ["--config", "bogus"], "bogus"),
    ("boot", ["--config", "distro"], "distro"),
    ("boot", ["--kernel", "/nonexistent/bzImage"], "/nonexistent/bzImage"),
    ("boot", ["--timeout", "0", "true"], "'0'"),
    ("boot", ["--timeout", "x", "true"], "'x'"),
    ("boot", ["--outdir", "{tmp}/file", "true"], "{tmp}/file"),
    ("boot", ["--kernel", "{tmp}/file", "--shell", "echo hi"], "--shell"),
    ("boot", ["true"], "obj-debug"),
    ("boot", ["--bogus"], "--bogus"),
    ("boot", ["--accel", "hvf", "true"], "hvf"),
    ("build", ["--config", "bogus"], "bogus"),
    ("build", ["-j", "-3"], "-3"),
    ("build", ["-j", "x"], "'x'"),
    ("build", ["--target", "bogus"], "bogus"),
    ("build", ["--bogus"], "--bogus"),
    ("reference-kernel", [], "--patch"),
    ("reference-kernel", ["--patch", "/nonexistent/0009-prjc.patch"], "linux-tkg"),
    ("reference-kernel", ["--patch", "{tmp}/file", "--scheduler", "cfs"], "cfs"),
    ("reference-kernel", ["--patch", "{tmp}/file", "--name", "Bad/Name"], "Bad/Name"),
    ("reference-kernel", ["--patch", "{tmp}/file", "-j", "0"], "'0'"),
    ("reference-kernel", ["--patch", "{tmp}/file", "--target", "bogus"], "bogus"),
    ("reference-kernel", ["--patch", "{tmp}/file", "--bogus"], "--bogus"),
    ("demo", ["-t", "bogus"], "bogus"),
    ("demo", ["--sched", "xyz"], "xyz"),
    ("demo", ["--seconds", "-1"], "-1"),
    ("demo", ["--seconds", "x"], "'x'"),
    ("demo", ["--config", "distro"], "distro"),
    ("demo", ["--bogus"], "--bogus"),
    ("demo", ["--accel", "xen"], "xen"),
    ("prepare", ["--tree", "{tmp}/new", "--source", "/nonexistent.tar.xz"],
     "/nonexistent.tar.xz"),
    ("prepare", ["--tree", "{tmp}/file"], "{tmp}/file"),
    ("prepare", ["extra"], "extra"),
    ("refresh", ["--tree", "{tmp}/nonexistent"], "{tmp}/nonexistent"),
    ("refresh", ["--tree", "{tmp}/tree", "--patch", "nope.patch"], "nope.patch"),
    ("refresh", ["--tree", "{tmp}/tree", "--new", "bad name"], "bad name"),
    ("refresh", ["--tree", "{tmp}/tree", "--new", FIRST_PATCH, "--subject", "s",
                 "--body", "b"], FIRST_PATCH),
    ("refresh", ["--tree", "{tmp}/tree", "--new", "x.patch", "--subject", "s"], "--body"),
    ("refresh", ["--tree", "{tmp}/tree", "--subject", "s"], "--subject"),
    ("refresh", ["--patch", FIRST_PATCH, "--new", "x.patch"], "--new"),
    ("export", [], "outdir"),
    ("export", ["--tree", "{tmp}/nonexistent", "{tmp}/out"], "{tmp}/nonexistent"),
    ("export", ["--tree", "{tmp}/tree", "{tmp}/full"], "{tmp}/full"),
    ("export", ["--tree", "{tmp}/tree", "{tmp}/file"], "{tmp}/file"),
    ("bench-sched", ["--rounds", "0"], "'0'"),
    ("bench-sched", ["--scale", "-1"], "-1"),
    ("bench-sched", ["--classes", "ule"], "ule"),
    ("bench-sched", ["--classes", "cfs,bogus"], "cfs,bogus"),
    ("bench-sched", ["-t", "nonsense"], "nonsense"),
    ("bench-sched", ["--suite", "bogus"], "bogus"),
    ("bench-sched", ["--only", "hackbench,bogus"], "bogus"),
    ("bench-sched", ["--suite", "bmq", "--only", "pipe"], "pipe"),
    ("bench-sched", ["--config", "bogus"], "bogus"),
    ("bench-sched", ["--qemu-mode", "kvm"], "kvm"),
    ("bench-sched", ["--timeout", "-1"], "-1"),
    ("bench-sched", ["--accel", "bogus"], "bogus"),
    ("bench-sched", ["--accel", "kvm", "--qemu-mode", "icount"], "icount"),
    ("bench-observability", ["--config", "bogus"], "bogus"),
    ("bench-observability", ["-t", "bogus"], "bogus"),
    ("bench-observability", ["--rounds", "0"], "'0'"),
    ("bench-observability", ["--groups", "x"], "'x'"),
    ("bench-observability", ["--loops", "-1"], "-1"),
    ("bench-observability", ["--timeout", "0"], "'0'"),
    ("bench-observability", ["--accel", "kvmm"], "kvmm"),
    ("wasted-cores", ["bogus"], "bogus"),
    ("wasted-cores", ["-t", "3y"], "3y"),
    ("wasted-cores", ["--units", "0"], "'0'"),
    ("wasted-cores", ["--rounds", "-5"], "-5"),
    ("wasted-cores", ["--repeat", "x"], "'x'"),
    ("wasted-cores", ["--seed", "-1"], "-1"),
    ("wasted-cores", ["--config", "distro"], "distro"),
    ("wasted-cores", ["--outdir", "{tmp}/file"], "{tmp}/file"),
    ("wasted-cores", ["--timeout", "0"], "'0'"),
    ("wasted-cores", ["--accel", "TCG"], "TCG"),
    ("reproduce", ["bogus"], "bogus"),
    ("reproduce", ["--rounds", "0"], "0"),
    ("reproduce", ["-t", "bogus"], "bogus"),
    ("reproduce", ["--qemu-mode", "kvm"], "kvm"),
    ("reproduce", ["--config", "distro"], "distro"),
    ("reproduce", ["--accel", "bogus"], "bogus"),
    ("reproduce", ["--accel", "kvm", "--qemu-mode", "tcg"], "tcg"),
    ("reproduce", ["--out", "{tmp}/file"], "{tmp}/file"),
    ("reproduce", ["--reference", "prjc-bmq"], "scripts/reference-kernel"),
    ("reproduce", ["--host", "--reference", "prjc-bmq"], "--host"),
    ("reproduce", ["compare"], "A, B"),
    ("reproduce", ["compare", "{tmp}/nonexistent", "{tmp}/nonexistent"],
     "{tmp}/nonexistent"),
    ("class-hooks", ["--bogus"], "--bogus"),
    ("class-hooks", ["--tree", "{tmp}/file"], "{tmp}/file"),
    ("class-hooks", ["--tree", "{tmp}/tree"], "{tmp}/tree"),
    ("check-configs", ["bogus"], "bogus"),
    ("check-configs", ["up,nope"], "nope"),
    ("check-configs", ["-j", "0"], "'0'"),
    ("check-configs", ["--bogus"], "--bogus"),
    ("check-series", ["--from", "0"], "'0'"),
    ("check-series", ["--from", "999"], "999"),
    ("check-series", ["-j", "x"], "'x'"),
    ("check-series", ["--bogus"], "--bogus"),
    ("setup", ["--bogus"], "--bogus"),
    ("setup", ["extra"], "extra"),
    ("test", ["--bogus-option"], "--bogus-option"),
    # Matches nothing, this test's own id included.
    ("test", ["-k", "notest and not notest"], "notest and not notest"),
    ("test", ["tests/nonexistent.py"], "tests/nonexistent.py"),
    ("test", ["--accel", "bogus"], "bogus"),
]


@pytest.mark.parametrize("name,args,bad", BAD,
                         ids=[f"{c} {' '.join(a)}" for c, a, _ in BAD])
def test_bad_argument_is_one_line_and_exit_2_before_anything_runs(sandbox, name, args, bad):
    proc = sandbox.run(name, *args)
    assert proc.returncode == command.USAGE, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{name}"), lines[0]
    assert bad.format(tmp=sandbox.tmp) in lines[0], lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    sandbox.ran_nothing()


@pytest.mark.parametrize("name", COMMANDS)
def test_help_exits_0_and_runs_nothing(sandbox, name):
    proc = sandbox.run(name, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: {name}"), proc.stdout[:200]
    assert proc.stderr == ""
    sandbox.ran_nothing()
    if name != "reproduce":     # its statuses are its own: see README.md
        assert "exit status:" in proc.stdout
        assert f"  {command.USAGE}  usage error" in proc.stdout


def load_script(name):
    """The module behind scripts/NAME, for a command with a module of its own."""
    return importlib.import_module(schedlab_main.MODULES[name])


def parsers():
    subs = cli.parser()._subparsers._group_actions[0].choices
    found = {name: subs[name] for name in CLI_COMMANDS}
    found.update({name: load_script(name).parser() for name in SCRIPT_PARSERS + HOST_SCRIPTS})
    found["reproduce"] = reproduce_cli.parser()
    found["reproduce compare"] = reproduce_cli.compare_parser()
    return found


@pytest.mark.parametrize("name", sorted(parsers()))
def test_help_names_every_option_and_its_default(name):
    """Every option, and its default where it has one; an option without a
    value of its own (None) says in its help what happens instead."""
    p = parsers()[name]
    text = p.format_help()
    flat = "".join(text.split())
    assert p.description and "".join(p.description.split())[:40] in flat
    for action in p._actions:
        if action.help == "==SUPPRESS==" or "-h" in action.option_strings:
            continue
        names = action.option_strings or [action.metavar or action.dest]
        for option in names:
            assert option in text, f"{name}: {option} missing from --help"
        default = action.default
        if default is None:
            if action.option_strings or action.nargs in ("?", "*"):
                assert "(default" in action.help, f"{name} {names[0]}: no default stated"
        elif default is not False:
            shown = default if default != "" else "none"
            assert "".join(f"(default: {shown}".split()) in flat or \
                "(default" in action.help, f"{name} {names[0]}: default {default!r} not shown"


def test_help_of_shell_commands_lists_their_arguments(sandbox):
    assert "PYTEST_ARGUMENT" in sandbox.run("test", "-h").stdout
    assert "-h, --help" in sandbox.run("setup", "-h").stdout
    sandbox.ran_nothing()


# -- build progress, with a stand-in make ---------------------------------

FAKE_MAKE = """#!/bin/sh
echo "$*" >>"{log}"
echo "make[1]: Entering directory '/somewhere'"
for i in 1 2 3 4 5 6; do
	echo "  CC      kernel/sched/f$i.o"
	sleep 0.15
done
echo "  HOSTCC  scripts/basic/fixdep"
echo "  LD      vmlinux"
echo "  gcc -O2 -o x x.c" >/dev/null
exit {status}
"""


@pytest.fixture
def fake_make(tmp_path, monkeypatch):
    """make that prints Kbuild-style lines for a second; PROGRESS_SECONDS short."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "make-args"

    def install(status=0):
        stand_in(bin_dir / "make", FAKE_MAKE.format(log=log, status=status))
        return log
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(build, "PROGRESS_SECONDS", 0.2)
    return install


PROGRESS_RE = re.compile(r"^build: base bzImage: (\d+) objects compiled so far, \d+ s$")


def test_build_prints_progress_counted_from_make_output(fake_make, capfd):
    log = fake_make()
    lines = []
    assert build.make("base", "bzImage", jobs=2, log=lines.append) == 7
    counts = [int(PROGRESS_RE.match(line)[1]) for line in lines]
    assert len(counts) >= 2, lines
    assert counts == sorted(counts) and counts[-1] <= 7
    assert "-s" not in log.read_text().split()
    # make's own lines stay out of the way without -v.
    assert "CC " not in capfd.readouterr().out


def test_build_verbose_shows_make_output_instead(fake_make, capfd):
    fake_make()
    lines = []
    build.make("base", "bzImage", verbose=True, log=lines.append)
    assert lines == []
    out = capfd.readouterr().out
    assert "  CC      kernel/sched/f6.o" in out and "Entering directory" in out


def test_failed_make_is_a_build_error(fake_make):
    fake_make(status=2)
    with pytest.raises(build.BuildError, match="make bzImage failed for the base config"):
        build.make("base", "bzImage", log=lambda msg: None)


def test_build_reports_objects_and_time_and_returns_a_status(fake_make, tmp_path, monkeypatch):
    class Prepared:
        def prepare(self, log):
            pass
    monkeypatch.setattr(build, "Tree", Prepared)
    monkeypatch.setattr(build, "configure", lambda config, log, verbose: None)
    monkeypatch.setattr(paths, "BUILD", tmp_path / "build")
    fake_make()
    lines = []
    assert build.build("base", log=lines.append) == command.OK
    assert re.fullmatch(r"build: base bzImage done in \d+ s, 7 objects compiled: .*bzImage",
                        lines[-1]), lines
    fake_make(status=2)
    assert build.build("base", log=lines.append) == command.FAILED


# -- boot progress and exit statuses, with a stand-in QEMU ----------------

FAKE_QEMU = """#!/usr/bin/env python3
# Plays QEMU for vm.boot(): runs cmd.sh of the shared folder on the host.
# FAKE_KVM=hang: hangs as a guest on a broken /dev/kvm does.
import os, subprocess, sys, time
out = next(a.split("path=")[1].split(",")[0] for a in sys.argv if "mount_tag=schedlab_out" in a)
if os.environ.get("FAKE_QEMU_CALLS"):
    with open(os.environ["FAKE_QEMU_CALLS"], "a") as calls:
        calls.write(" ".join(sys.argv[1:3]) + "\\n")
if "kvm" in sys.argv and os.environ.get("FAKE_KVM") == "hang":
    time.sleep(60)
console = open(os.path.join(out, "console.log"), "w")
console.write("[    0.000000] Linux version 6.1.0 (fake)\\n")
console.flush()
if os.environ.get("FAKE_QEMU") == "boot-hang":
    time.sleep(60)
time.sleep(0.3)
console.write("[    1.000000] schedlab: guest ready after 1.0 s\\n")
console.flush()
if os.environ.get("FAKE_QEMU") == "crash":
    sys.exit(1)
with open(os.path.join(out, "output.log"), "w") as output:
    rc = subprocess.run(["sh", os.path.join(out, "cmd.sh")], stdout=output,
                        stderr=subprocess.STDOUT).returncode
open(os.path.join(out, "rc"), "w").write(f"{rc}\\n")
console.write(f"[    2.000000] schedlab: command exited with {rc}\\n")
"""


@pytest.fixture
def fake_qemu(tmp_path, monkeypatch):
    bin_dir = tmp_path / "qemu-bin"
    bin_dir.mkdir()
    stand_in(bin_dir / "qemu-system-x86_64", FAKE_QEMU)
    kernel = tmp_path / "bzImage"
    kernel.write_text("")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv(vm.ACCEL_ENV, "tcg")
    monkeypatch.setitem(vm._accel, "choice", "tcg")
    return SimpleNamespace(kernel=kernel, env=dict(os.environ))


def test_boot_says_when_the_guest_is_up(fake_qemu, capfd):
    res = vm.boot("echo hello; exit 3", "1", kernel=fake_qemu.kernel, timeout=60)
    assert res.status == 3 and res.output == "hello\n"
    err = capfd.readouterr().err.splitlines()
    assert re.fullmatch(r"vm: booting 1 \(1 CPU, 1 node\) with .*bzImage", err[0]), err
    assert re.fullmatch(r"vm: 1 booted in \d+ s; running the command", err[1]), err
    assert "Linux version" not in "\n".join(err)


def test_a_boot_that_hangs_before_the_command_is_tried_once_more(fake_qemu, capfd,
                                                                monkeypatch):
    monkeypatch.setattr(vm, "BOOT_LIMIT_BASE", 1)
    monkeypatch.setattr(vm, "BOOT_LIMIT_PER_CPU", 0)
    monkeypatch.setenv("FAKE_QEMU", "boot-hang")
    start = time.time()
    with pytest.raises(vm.BootHang, match=r"not ready within 1 s"):
        vm.boot("true", "2x4", kernel=fake_qemu.kernel, timeout=60)
    assert time.time() - start < 20
    err = capfd.readouterr().err
    assert err.count("vm: booting 2x4") == 2 and "booting once more" in err, err


def test_boot_verbose_shows_the_console(fake_qemu, capfd):
    vm.boot("true", "2x4", kernel=fake_qemu.kernel, timeout=60, verbose=True)
    err = capfd.readouterr().err
    assert "Linux version 6.1.0 (fake)" in err and "schedlab: command exited with 0" in err
    assert "vm: booting 2x4 (8 CPUs, 2 nodes)" in err


@pytest.mark.parametrize("script,status,says", [
    ("exit 0", command.OK, "guest command exited with status 0"),
    ("exit 3", command.COMMAND, "guest command exited with status 3"),
    ("exit 1", command.COMMAND, "guest command exited with status 1"),
    ("crash", command.GUEST, "guest ended without running the command"),
])
def test_boot_tells_the_command_status_from_a_guest_failure(fake_qemu, tmp_path, script,
                                                             status, says):
    env = dict(fake_qemu.env, FAKE_QEMU=script)
    proc = subprocess.run([str(SCRIPTS / "boot"), "--kernel", str(fake_qemu.kernel), "-t", "1",
                           "--outdir", str(tmp_path / "guest"), script],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == status, proc.stderr
    assert says in proc.stderr


def test_demo_maps_guest_outcomes_to_the_scheme(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(demo, "SETUP", Path("/bin/true"))
    monkeypatch.setattr(paths, "BUILD", tmp_path)
    monkeypatch.setattr(build, "build", lambda config, verbose=False: command.OK)
    args = cli.parser().parse_args(["demo"])

    def failing(*a, **kw):
        raise vm.GuestTimeout("guest did not finish within 900 s")
    monkeypatch.setattr(vm, "boot", failing)
    assert demo.main(args) == command.GUEST
    monkeypatch.setattr(vm, "boot", lambda *a, **kw: vm.GuestResult("out\n", 5, "", 1.0,
                                                                     tmp_path))
    assert demo.main(args) == command.COMMAND
    assert "demo: guest command exited with status 5" in capsys.readouterr().err
    monkeypatch.setattr(build, "build", lambda config, verbose=False: command.FAILED)
    assert demo.main(args) == command.FAILED


@pytest.mark.parametrize("name", SCRIPT_PARSERS)
def test_benchmarks_map_guest_outcomes_to_the_scheme(name, monkeypatch, tmp_path, capsys):
    script = load_script(name)
    monkeypatch.setattr(build, "build", lambda config, verbose=False: command.OK)
    monkeypatch.setattr(build, "guest_program", lambda prog: tmp_path / prog)
    argv = [name, "--outdir", str(tmp_path)] if name == "wasted-cores" else [name]
    monkeypatch.setattr(sys, "argv", argv)

    def failing(*a, **kw):
        raise vm.KernelSplat(["WARNING: at somewhere"], "console")
    monkeypatch.setattr(vm, "boot", failing)
    assert script.main() == command.GUEST
    monkeypatch.setattr(vm, "boot", lambda *a, **kw: vm.GuestResult("", 7, "", 1.0, tmp_path))
    assert script.main() == command.COMMAND
    assert f"{name}: guest command exited with status 7" in capsys.readouterr().err
    monkeypatch.setattr(build, "build", lambda config, verbose=False: command.FAILED)
    assert script.main() == command.FAILED


def test_epilog_lists_the_statuses_it_is_given():
    text = command.epilog(command.OK, command.USAGE)
    assert text.splitlines()[:3] == ["exit status:", "  0  done",
                                     "  2  usage error: a bad argument; nothing was "
                                     "installed, built or booted"]
    assert all(len(line) <= command.HELP_WIDTH for line in command.epilog().splitlines())


# -- --accel auto|tcg|kvm, with the stand-in QEMU --------------------------

@pytest.fixture
def accel_auto(fake_qemu, tmp_path, monkeypatch):
    """auto, a /dev/kvm that opens, a probe cache of this test's own and a
    short probe timeout; qemu-calls lists each QEMU run's accelerator."""
    device = tmp_path / "kvm"
    device.write_text("")
    monkeypatch.setattr(vm, "KVM_DEVICE", str(device))
    monkeypatch.setattr(vm, "KVM_PROBE_SECONDS", 3)
    monkeypatch.setattr(paths, "BUILD", tmp_path / "build")
    monkeypatch.setitem(vm._accel, "choice", "auto")
    monkeypatch.setitem(vm._accel, "resolved", {})
    monkeypatch.setenv("FAKE_QEMU_CALLS", str(tmp_path / "qemu-calls"))
    return tmp_path / "qemu-calls"


def boot_in(tmp_path, kernel):
    return vm.boot("echo ok", "1", kernel=kernel, timeout=60, outdir=tmp_path / "guest")


def test_accel_auto_falls_back_to_tcg_when_the_kvm_probe_hangs(accel_auto, fake_qemu,
                                                               tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("FAKE_KVM", "hang")
    assert boot_in(tmp_path, fake_qemu.kernel).output == "ok\n"
    assert accel_auto.read_text().splitlines() == ["-accel kvm", "-accel tcg,thread=multi"]
    err = capfd.readouterr().err
    assert "vm: --accel auto: KVM probe boot did not finish within 3 s; using TCG" in err
    # Known for this host and QEMU from now on: no second probe, and it says so.
    monkeypatch.setitem(vm._accel, "resolved", {})
    boot_in(tmp_path, fake_qemu.kernel)
    assert accel_auto.read_text().splitlines()[2:] == ["-accel tcg,thread=multi"]
    assert "did not finish within 3 s (probed before; delete " in capfd.readouterr().err


def test_accel_auto_uses_kvm_when_the_probe_boots(accel_auto, fake_qemu, tmp_path, capfd):
    boot_in(tmp_path, fake_qemu.kernel)
    assert accel_auto.read_text().splitlines() == ["-accel kvm", "-accel kvm"]
    err = capfd.readouterr().err
    assert re.search(r"KVM probe boot ran in \d+ s; using KVM", err), err
    assert "with " in err and " on KVM" in err


def test_accel_auto_without_a_kvm_device_is_tcg_with_no_probe(accel_auto, fake_qemu,
                                                              tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(vm, "KVM_DEVICE", str(tmp_path / "no-such-device"))
    boot_in(tmp_path, fake_qemu.kernel)
    assert accel_auto.read_text().splitlines() == ["-accel tcg,thread=multi"]
    assert f"no usable {tmp_path}/no-such-device; using TCG" in capfd.readouterr().err


def test_accel_tcg_modes_and_kvm_arguments():
    assert vm.resolve_accel("bzImage", "icount", "auto") == "tcg"    # no probe for a TCG mode
    assert vm.resolve_accel("bzImage", "mttcg", "tcg") == "tcg"
    assert vm.accel_problem("kvm", "icount") and vm.accel_problem("kvm", None) is None
    with pytest.raises(vm.GuestError, match="icount"):
        vm.resolve_accel("bzImage", "icount", "kvm")
    assert vm.accel_args("kvm", "icount") == ["-accel", "kvm", "-cpu", "host"]
    assert vm.accel_args("tcg", "icount")[:4] == ["-accel", "tcg,thread=single", "-icount",
                                                  "shift=auto,sleep=off"]


def test_schedlab_is_an_installable_package_with_one_entry_point():
    """scripts/lib/pyproject.toml installs every subpackage and the
    `schedlab` command, whose dispatch knows every Python command of
    scripts/; no module or test puts a folder on sys.path by hand."""
    pytest.importorskip("setuptools")
    from setuptools.config.pyprojecttoml import read_configuration
    lib = paths.REPO / "scripts" / "lib"
    # Read as pip would, from the folder: the package search is expanded.
    cwd = os.getcwd()
    os.chdir(lib)
    try:
        with warnings.catch_warnings():     # [tool.setuptools] is "beta"
            warnings.simplefilter("ignore")
            conf = read_configuration(lib / "pyproject.toml")
    finally:
        os.chdir(cwd)
    assert conf["project"]["scripts"] == {"schedlab": "schedlab.__main__:main"}
    found = set(conf["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(lib).parts)
               for p in (lib / "schedlab").rglob("__init__.py")}
    assert found == on_disk and "schedlab.reproduce.experiments" in found, found ^ on_disk
    module, func = conf["project"]["scripts"]["schedlab"].split(":")
    assert callable(getattr(importlib.import_module(module), func))
    assert set(schedlab_main.MODULES) | set(CLI_COMMANDS) == set(COMMANDS) - set(SHELL_COMMANDS)
    for name in CLI_COMMANDS:
        assert (SCRIPTS / name).read_text().rstrip().endswith(f'/lib/run" {name} "$@"'), name
    needle = "sys.path." + "insert"     # not this line itself
    hand = [str(p.relative_to(paths.REPO)) for p in
            [*(lib / "schedlab").rglob("*.py"), *(paths.REPO / "tests").glob("*.py"),
             *SCRIPTS.iterdir()]
            if p.is_file() and needle in p.read_text()]
    assert hand == []


@pytest.mark.parametrize("built, want, note", [
    (("debug", "base"), "debug", False),
    (("base",), "base", True),          # after scripts/demo
    ((), "debug", False),               # nothing built: the error names debug
])
def test_boot_without_config_takes_the_kernel_that_is_built(tmp_path, monkeypatch, built, want,
                                                            note):
    """scripts/boot without --config boots the debug kernel, or the one
    built when debug is not (scripts/demo builds base), saying so."""
    monkeypatch.setattr(paths, "kernel_image", lambda c: tmp_path / c / "bzImage")
    for config in built:
        (tmp_path / config).mkdir()
        (tmp_path / config / "bzImage").write_text("")
    a = cli.parser().parse_args(["boot", "--sched", "ule", "true"])
    problem = vm.check_args(a)
    assert a.config == want
    assert getattr(a, "config_chosen", False) == note
    assert (problem is None) == bool(built), problem
    a = cli.parser().parse_args(["boot", "--config", "debug", "true"])
    assert (vm.check_args(a) is None) == ("debug" in built)
