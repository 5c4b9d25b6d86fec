"""Bad input: one line on stderr naming file and position, exit 2, no traceback."""

import re
import struct

import pytest

from sched_vis import format as F
from sched_vis import testing as T


def good():
    return T.dump({0: T.nr_running(1, 0, 1) + T.nr_running(2, 0, 2),
                   1: T.nr_running(3, 1, 1)}, nr_cpus=2)


def patched(off, fmt, value):
    d = bytearray(good())
    struct.pack_into(fmt, d, off, value)
    return bytes(d)


# Layout of good(): header 0-63, node map 64-71, section 0 header 72-103,
# its 2 records 104-135, section 1 header 136-167, 1 record 168-183.
CASES = [
    ("empty", b"", r"byte offset 0: empty file"),
    ("junk", b"\x00\x01garbage\xff" * 8, r"byte offset 0: bad magic"),
    ("short-header", good()[:40], r"byte offset 40: truncated file header"),
    ("version", patched(8, "<H", 2), r"byte offset 8: unsupported version 2"),
    ("header-size", patched(10, "<H", 72), r"byte offset 10: header_size 72"),
    ("record-size", patched(12, "<H", 24), r"byte offset 12: record_size 24"),
    ("no-cpus", patched(16, "<I", 0), r"byte offset 16: nr_cpus is 0"),
    ("node-map-cut", good()[:68], r"byte offset 64: truncated node map"),
    ("huge-nr-cpus", patched(16, "<I", 1 << 30), r"byte offset 64: truncated node map"),
    ("section-header-cut", good()[:90], r"byte offset 72: section 0 of 2: header cut off"),
    ("second-section-cut", good()[:150], r"byte offset 136: section 1 of 2"),
    ("records-cut", good()[:120], r"byte offset 104: section 0 \(cpu 0\): nr_records 2"),
    ("nr-records-huge", patched(80, "<Q", 1 << 62), r"byte offset 104: .*nr_records"),
    ("section-cpu", patched(72, "<I", 9), r"byte offset 72: section 0: cpu 9 >= nr_cpus"),
    ("duplicate-section", patched(136, "<I", 0), r"byte offset 136: .*second section"),
    ("text-bad-field",
     "cpus=2\n  a-1 [000] 1.0: rq_nr_running: cpu=0 nr_running=1\n"
     "  a-1 [001] 1.1: rq_load: cpu=one load=3\n",
     r"line 3: rq_load: bad value 'one' for cpu="),
    ("text-missing-field", "  a-1 [000] 1.0: wake_busy: pid=3 target=1\n",
     r"line 1: wake_busy: missing field idle="),
    ("text-no-events", "version = 6\nCPU 0 is empty\n", r"line 2: no sched_events events"),
]


@pytest.mark.parametrize("name, data, pattern", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("command", ["info", "heatmap", "idle-overload", "perfetto"])
def test_bad_input(cli, write, tmp_path, monkeypatch, name, data, pattern, command):
    monkeypatch.chdir(tmp_path)          # default outputs land here
    p = write(name + ".in", data)
    r = cli(command, p)
    assert r.code == 2
    assert "Traceback" not in r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert re.search(r"^sched-vis: .*%s\.in: %s" % (re.escape(name), pattern), lines[0]), \
        lines[0]
    assert not list(tmp_path.glob("*.png")) and not list(tmp_path.glob("*.json"))


@pytest.mark.parametrize("name, data, pattern", CASES[:4] + CASES[11:12] + CASES[15:16],
                         ids=[c[0] for c in CASES[:4] + CASES[11:12] + CASES[15:16]])
def test_bad_input_in_a_real_process(run_tool, write, name, data, pattern):
    p = write(name + ".in", data)
    r = run_tool("info", p)
    assert r.code == 2
    assert "Traceback" not in r.err and r.out == ""
    assert re.search(pattern, r.err), r.err


def test_missing_file(cli, tmp_path):
    r = cli("info", tmp_path / "nope.bin")
    assert r.code == 2
    assert "nope.bin: No such file or directory" in r.err


def test_trailing_bytes_only_warn(cli, write):
    p = write("t.bin", good() + b"\0" * 5)
    r = cli("info", p)
    assert r.code == 0
    assert "5 trailing bytes" in r.err and "byte offset 184" in r.err


@pytest.mark.parametrize("argv, pattern", [
    (["heatmap", "{f}", "--nodes", "0-3,x"], r"bad --nodes item 'x'"),
    (["info", "{f}", "--nodes", "0-3,2-5"], r"--nodes names CPU 2 twice"),
    (["info", "{f}", "--cpus-per-node", "0"], r"must be a positive integer"),
    (["heatmap", "{f}", "--bins", "0"], r"must be a positive integer"),
    (["heatmap", "{f}", "--start", "0.5", "--end", "0.1"], r"--end must be after --start"),
    (["heatmap", "{f}", "--consider", "nosuchkind"], r"unknown kind 'nosuchkind'"),
    (["idle-overload", "{f}", "--start", "50"], r"past the end"),
    (["heatmap", "{f}", "--metric", "bogus"], r"invalid choice"),
    (["info", "{f}", "--nodes", "0-1", "--cpus-per-node", "2"], r"not allowed with"),
])
def test_usage_errors_exit_2(cli, write, tmp_path, monkeypatch, argv, pattern):
    monkeypatch.chdir(tmp_path)
    f = write("g.bin", good())
    r = cli(*[a.format(f=f) for a in argv])
    assert r.code == 2
    assert re.search(pattern, r.err), r.err
    assert "Traceback" not in r.err


def test_output_may_not_overwrite_input(cli, write):
    p = write("x.bin", good())
    r = cli("perfetto", p, "-o", p)
    assert r.code == 2 and "overwrite the input" in r.err
    assert p.read_bytes()[:8] == F.MAGIC


def test_fuzzed_dumps_never_crash(cli, write, tmp_path, monkeypatch):
    """Random byte flips and cuts: a clean result or a clean exit 2."""
    import random
    monkeypatch.chdir(tmp_path)
    rnd = random.Random(7)
    base = T.dump({0: T.consider(5, 0, 1, 2, [1, 70]) + T.migrate(6, 3, 0, 70, 1)
                   + T.violation(7, 1, 4, 1, 0),
                   70: T.nr_running(1, 70, 2) + T.load(2, 70, 2048)
                   + T.wake_busy(3, 9, 70, 1) + [T.rec(4, 12, 1, 2, 3)]},
                  nr_cpus=71, flags=F.FLAG_FLIGHT)
    for i in range(150):
        d = bytearray(base)
        for _ in range(rnd.randint(1, 4)):
            d[rnd.randrange(8, len(d))] = rnd.randrange(256)
        if rnd.random() < 0.3:
            d = d[:rnd.randrange(len(d))]
        p = write("f%d.bin" % i, bytes(d))
        for command in ("info", "idle-overload", "perfetto"):
            r = cli(command, p)
            assert r.code in (0, 2), (i, command, r.err)
            assert "internal error" not in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("launcher", ["script", "module"])
def test_missing_numpy_is_one_line_not_a_traceback(tmp_path, launcher):
    """On a machine without numpy, the command says what to install."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    fake = tmp_path / "numpy"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{root}")
    cmd = [str(root / "sched-vis")] if launcher == "script" else [sys.executable, "-m",
                                                                   "sched_vis"]
    proc = subprocess.run([*cmd, "--help"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "numpy is missing" in proc.stderr \
        and "pip install numpy" in proc.stderr, proc.stderr
