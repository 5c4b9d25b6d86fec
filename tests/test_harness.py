"""The boot harness itself: output, exit status, splat and timeout detection,
and the packaged workload tools inside the guest."""

import os
import subprocess

import pytest

from schedlab import vm

TOOLS = ["hackbench", "cyclictest", "rt-app", "sysbench", "stress-ng", "perf",
         "numactl", "taskset", "python3", "trace-cmd"]


def test_output_and_exit_status(guest):
    res = guest("echo hello from $(uname -r); echo to-stderr >&2; exit 3", topology="1")
    assert res.status == 3
    assert "hello from 6.1" in res.output and "to-stderr" in res.output
    # The command's output stays out of the kernel console and vice versa.
    assert "hello from" not in res.console
    assert "Linux version 6.1" in res.console and "Linux version" not in res.output


def test_kernel_warning_fails_even_when_the_command_succeeds(guest):
    with pytest.raises(vm.KernelSplat) as e:
        guest("echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT; true", topology="1")
    assert any(s.startswith("WARNING:") for s in e.value.splats)
    assert e.value.result.output == "" or "provoke" not in e.value.result.output


def test_timeout_is_enforced(guest):
    with pytest.raises(vm.GuestTimeout, match="did not finish within"):
        guest("sleep 600", topology="1", timeout=20)


def test_packaged_tools_run_in_the_guest(guest):
    script = "\n".join([
        "for t in " + " ".join(TOOLS) + "; do command -v $t >/dev/null || echo MISSING $t; done",
        "hackbench -g 2 -l 50 | grep Time",
        "perf bench sched pipe -l 2000 | grep 'Total time'",
        "sysbench cpu --time=1 run | grep 'events per second'",
        "stress-ng --cpu 2 --timeout 1 2>&1 | grep -c successful",
        "cyclictest -q -l 100 -i 1000 -t 1 | tail -1",
        "numactl --hardware | head -1",
        "taskset -c 1 python3 -c 'import os; print(\"affinity\", sorted(os.sched_getaffinity(0)))'",
    ])
    # Two nodes of one CPU each: numactl sees the nodes, taskset a CPU 1.
    res = guest(script, topology="2x1")
    assert res.status == 0, res.output
    assert "MISSING" not in res.output
    for expect in ["Time:", "Total time", "events per second", "available: 2 nodes",
                   "affinity [1]"]:
        assert expect in res.output, res.output


def test_guest_program_rebuilds_when_a_header_of_its_folder_changes(tmp_path, monkeypatch):
    """A guest program is compiled again when a header of its own folder
    that it includes (sched_test.h) is newer than the binary, not only its
    .c; a header it does not include does not count."""
    from schedlab import build, paths
    src, out = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    monkeypatch.setattr(paths, "GUEST_TESTS", src)
    monkeypatch.setattr(paths, "BUILD", out)
    (src / "lib.h").write_text("#define ANSWER 41\n")
    (src / "other.h").write_text("#error not included\n")
    (src / "prog.c").write_text('#include <stdio.h>\n#include "lib.h"\n'
                                'int main(void) { printf("%d\\n", ANSWER); return 0; }\n')
    prog = build.guest_program("prog")
    old = prog.stat().st_mtime - 10
    os.utime(prog, (old, old))
    for f in ("prog.c", "lib.h"):
        os.utime(src / f, (old - 5, old - 5))
    (src / "other.h").touch()
    assert build.guest_program("prog").stat().st_mtime == old
    (src / "lib.h").write_text("#define ANSWER 42\n")
    assert build.guest_program("prog").stat().st_mtime > old
    assert subprocess.run([str(prog)], capture_output=True, text=True).stdout == "42\n"
