"""Command line surface: help, version, launcher, stdin."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sched_vis import testing as T

TOOL = Path(__file__).resolve().parents[1]

COMMANDS = ["info", "heatmap", "compare", "idle-overload", "perfetto"]


def test_top_level_help(cli):
    r = cli("--help")
    assert r.code == 0
    for c in COMMANDS:
        assert c in r.out


@pytest.mark.parametrize("command", COMMANDS)
def test_subcommand_help(cli, command):
    r = cli(command, "--help")
    assert r.code == 0
    assert "--nodes" in r.out and "--cpus-per-node" in r.out and "FILE" in r.out


@pytest.mark.parametrize("command", ["heatmap", "compare"])
def test_chart_help_lists_overlays_and_figure_options(cli, command):
    out = cli(command, "--help").out
    for opt in ("--metric", "--start", "--end", "--consider", "--migrations",
                "--wake-busy", "--violations", "--title", "--agg", "--vmax",
                "--load-percentile", "--figsize", "--fontsize", "--max-arrows", "--dpi"):
        assert opt in out
    # Defaults are in the help.
    for default in ("default 1500", "default 1000", "default 99", "default 10)",
                    "default 100)"):
        assert default in " ".join(out.split()), default


def test_perfetto_help_lists_time_and_tasks(cli):
    out = cli("perfetto", "--help").out
    assert "--absolute-time" in out and "--no-tasks" in out


def test_no_command_is_a_usage_error(cli):
    r = cli()
    assert r.code == 2 and "required" in r.err


def test_version(cli):
    r = cli("--version")
    assert r.code == 0 and r.out.startswith("sched-vis ")


def test_launcher_runs_without_install(run_tool, write):
    p = write("l.bin", T.dump({0: T.nr_running(1, 0, 1)}, nr_cpus=1))
    r = run_tool("info", p)
    assert r.code == 0, r.err
    assert "NR_RUNNING" in r.out


def test_python_dash_m_and_stdin(write):
    # CPU0 has 2 tasks from 0 to 10 ns while CPU1 is idle: 10 ns.
    data = T.report({0: T.nr_running(0, 0, 2) + T.nr_running(10, 0, 1),
                     1: T.nr_running(0, 1, 0)})
    p = subprocess.run([sys.executable, "-m", "sched_vis", "idle-overload", "-", "--json"],
                       input=data, capture_output=True, text=True, cwd=TOOL, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["total_ns"] == 10


def test_output_piped_into_head_is_quiet(write):
    p = write("h.bin", T.dump({c: T.nr_running(1, c, 1) for c in range(64)}, nr_cpus=64))
    sh = subprocess.run("%s %s idle-overload %s | head -1" % (sys.executable,
                                                               TOOL / "sched-vis", p),
                        shell=True, capture_output=True, text=True, timeout=60)
    assert sh.stdout.startswith("idle while overloaded")
    assert "Traceback" not in sh.stderr and "Broken pipe" not in sh.stderr
