"""Shared helpers: import sched_vis from the source tree and run the CLI."""

import io
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOL))

from sched_vis.cli import main  # noqa: E402

LAUNCHER = TOOL / "sched-vis"


class Result:
    def __init__(self, code, out, err):
        self.code, self.out, self.err = code, out, err


@pytest.fixture
def cli():
    """Run main(argv) in-process; returns exit code, stdout, stderr."""
    def run(*argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main([str(a) for a in argv])
            except SystemExit as e:          # argparse: --help, usage errors
                code = e.code
        return Result(code, out.getvalue(), err.getvalue())
    return run


@pytest.fixture
def run_tool():
    """Run the launcher script in a subprocess, as a user would."""
    def run(*argv, **kw):
        p = subprocess.run([sys.executable, str(LAUNCHER)] + [str(a) for a in argv],
                           capture_output=True, text=True, timeout=120, **kw)
        return Result(p.returncode, p.stdout, p.stderr)
    return run


@pytest.fixture
def write(tmp_path):
    """write(name, data) -> path of a file holding bytes or str."""
    def w(name, data):
        p = tmp_path / name
        if isinstance(data, str):
            p.write_text(data)
        else:
            p.write_bytes(data)
        return p
    return w
