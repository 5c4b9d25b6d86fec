"""scripts/check-configs, the build matrix (README, "Build matrix"): which
warnings count as ours, what each cell asks of Kconfig, the table; and
the cell CI builds (CI_CELL, uniprocessor) built for real, W=1 included."""

import json
import subprocess

from schedlab import check_configs, paths

TREE = "/work/x/build/linux"
OWNED = {"kernel/sched/ule.c": None, "kernel/sched/core.c": {10, 11, 12}}


def test_only_warnings_at_our_lines_count():
    log = "\n".join([
        f"{TREE}/kernel/sched/ule.c:40:5: warning: no previous prototype for 'f' "
        "[-Wmissing-prototypes]",
        f"{TREE}/kernel/sched/core.c:11:1: warning: symbol 'g' was not declared. "
        "Should it be static?",
        f"{TREE}/kernel/sched/core.c:900:1: warning: upstream's own",
        "../../linux/kernel/sched/core.c:12: error: ours again, relative",
        f"{TREE}/kernel/sched/rt.c:11:1: warning: not a file of ours",
        "  CC      kernel/sched/core.o",
        f"{TREE}/kernel/sched/ule.c:40:5: warning: no previous prototype for 'f' "
        "[-Wmissing-prototypes]",
    ])
    assert check_configs.ours(log, OWNED, TREE) == [
        "kernel/sched/ule.c:40: warning: no previous prototype for 'f' [-Wmissing-prototypes]",
        "kernel/sched/core.c:11: warning: symbol 'g' was not declared. Should it be static?",
        "kernel/sched/core.c:12: error: ours again, relative",
    ]


def test_our_lines_are_the_new_files_and_the_patched_lines():
    owned = check_configs.our_lines()
    assert owned["kernel/sched/ule.c"] is None and owned["kernel/sched/bmq.c"] is None
    assert owned["include/trace/events/sched_events.h"] is None
    core = owned["kernel/sched/core.c"]
    assert core and len(core) < len((paths.TREE / "kernel/sched/core.c").read_text()
                                    .splitlines()) / 10
    assert "kernel/sched/rt.c" not in owned


def test_cells_ask_for_what_they_test():
    cells = check_configs.CELLS
    assert set(cells) == {"up", "numa-off", "preempt-none", "nohz-full",
                          "cgroup-sched-off", "sched-core", "ule-only", "bmq-only", "muqss-only",
                          "neither"}
    assert cells["up"].must == {"CONFIG_SMP": None}
    assert cells["sched-core"].must["CONFIG_SCHED_CORE"] == "y"
    assert cells["sched-core"].must["CONFIG_SCHED_ULE"] is None
    assert cells["neither"].must == {"CONFIG_SCHED_ULE": None, "CONFIG_SCHED_BMQ": None,
                                     "CONFIG_SCHED_MUQSS": None, "CONFIG_SCHED_EVENTS": "y",
                                     "CONFIG_SCHED_SANITY": "y"}
    assert check_configs.CI_CELL in cells


def test_table_has_a_row_per_cell():
    text = check_configs.table({"up": {"what": "uniprocessor (SMP=n)", "classes": ["SCHED_ULE"],
                                       "build": "clean", "w1": "clean",
                                       "sparse": "2 in our code", "seconds": 300}})
    rows = text.splitlines()
    assert len(rows) == 2 + len(check_configs.CELLS)
    assert rows[2] == "| `up` | uniprocessor (SMP=n) | ule | clean | clean | 2 in our code | 5.0 |"
    assert "| `neither` |" in text and "not run" in text


def test_ci_cell_builds_clean():
    """The uniprocessor configuration, kernel/sched/ built with W=1 (the
    whole vmlinux and sparse are for scripts/check-configs before
    resolving, not every CI run: they took 10 minutes cold)."""
    proc = subprocess.run([str(paths.REPO / "scripts" / "check-configs"), "--ci"],
                          capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(check_configs.results_path().read_text())[check_configs.CI_CELL]
    assert result["build"] == "clean" and result["w1"] == "clean", result
    assert result["target"] == "kernel/sched/"
    # The recorder and the checker are about several CPUs: Kconfig keeps
    # them to SMP.
    assert result["classes"] == ["SCHED_ULE", "SCHED_BMQ", "SCHED_MUQSS"]


def test_upstream_sparse_patterns_are_counted_apart(tmp_path):
    """A domain walk (for_each_domain, sd->parent) on our line draws the
    same sparse warning as every such walk in fair.c: accepted, listed,
    not ours to fix; the same warning elsewhere still counts."""
    src = tmp_path / "kernel/sched"
    src.mkdir(parents=True)
    (src / "ule.c").write_text("int a;\n\tfor_each_domain(cpu, sd) {\n\tp = rq->curr;\n"
                               "\t\tsd = sd->parent;\n")
    log = "\n".join(f"{tmp_path}/kernel/sched/ule.c:{n}:9: warning: incorrect type in "
                    "assignment (different address spaces)" for n in (2, 3, 4))
    accepted = []
    found = check_configs.ours(log, {"kernel/sched/ule.c": None}, tmp_path, accepted)
    assert found == ["kernel/sched/ule.c:3: warning: incorrect type in assignment "
                     "(different address spaces)"]
    assert [a.split(":")[1] for a in accepted] == ["2", "4"]
    assert all("__rcu in 6.1" in a for a in accepted)
    assert check_configs.clean({"build": "clean", "w1": "clean",
                                "sparse": "clean (2 upstream-pattern)"})
    assert not check_configs.clean({"build": "clean", "w1": "1 in our code", "sparse": "clean"})
