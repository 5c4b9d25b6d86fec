"""scripts/check-series (README, "Build matrix"): which options a step
turns on, how the loop over the series names the commit that breaks, and
when it reconfigures. The build itself takes longer than CI has; the
README gives the last run's table and time."""

from schedlab import check_series, paths

KCONFIG = """\
config SCHED_FOO
\tbool "Foo class"
\tdepends on !SCHED_CORE
\tselect SCHED_CLASS_SWITCH

config SCHED_FOO_KUNIT_TEST
\tbool "KUnit tests for foo" if !KUNIT_ALL_TESTS
\tdepends on KUNIT=y && SCHED_FOO

config SCHED_HIDDEN
\tbool
\thelp
\t  bool "not a prompt"

choice
\tprompt "Default class"
config SCHED_DEFAULT_FOO
\tbool "foo"
endchoice

config SCHED_NAME
\tstring
\tdefault "foo"
"""


def test_prompted_options_skip_hidden_options_and_choice_members():
    assert check_series.prompted_options(KCONFIG) == ["SCHED_FOO", "SCHED_FOO_KUNIT_TEST"]


def test_every_class_and_observer_of_the_series_is_turned_on():
    options = check_series.prompted_options((paths.REPO / "kernel/Kconfig.sched").read_text())
    for name in ("SCHED_ULE", "SCHED_BMQ", "SCHED_MUQSS", "SCHED_EVENTS", "SCHED_SANITY",
                 "SCHED_FAIR_GROUP_MIN_LOAD", "SCHED_FAIR_WAKE_IDLE_LONGEST"):
        assert name in options
    for name in ("SCHED_DEFAULT_CFS", "SCHED_DEFAULT_ULE", "SCHED_CLASS_SWITCH",
                 "SCHED_POLICY_ISO", "SCHED_RQ_LOCK_SHARE", "SCHED_DEFAULT_NAME"):
        assert name not in options


def patch(tmp_path, number, subject, files=("kernel/sched/core.c",)):
    path = tmp_path / f"{number:04d}-x.patch"
    diffs = "".join(f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n" for f in files)
    path.write_text(f"From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH {number:02d}/09] "
                    f"{subject}\n continued\n\nbody\n---\n{diffs}")
    return path


class Fakes:
    def __init__(self, bad_apply=(), bad_make=()):
        self.bad_apply, self.bad_make = bad_apply, bad_make
        self.applied, self.configured, self.built = [], [], []

    def apply(self, path):
        n = int(path.name[:4])
        self.applied.append(n)
        return "patch failed: kernel/sched/core.c:10" if n in self.bad_apply else None

    def configure(self, step):
        self.configured.append(step.number)
        step.options = ["SCHED_FOO"]

    def make(self, step):
        self.built.append(step.number)
        step.status = "make failed (exit 2)" if step.number in self.bad_make else "clean"


def test_the_subject_is_read_without_its_patch_prefix(tmp_path):
    assert check_series.patch_subject(patch(tmp_path, 3, "sched: a thing")) == \
        "sched: a thing continued"


def test_a_step_that_does_not_build_is_named_and_the_rest_still_build(tmp_path):
    patches = [patch(tmp_path, n, f"p{n}") for n in range(1, 5)]
    f = Fakes(bad_make={2})
    steps = check_series.run_steps(patches, f.apply, f.configure, f.make, log=lambda m: None)
    assert [s.status for s in steps] == ["clean", "make failed (exit 2)", "clean", "clean"]
    assert [s.number for s in steps if not s.clean] == [2]
    assert f.built == [1, 2, 3, 4]


def test_a_commit_that_does_not_apply_ends_the_run(tmp_path):
    patches = [patch(tmp_path, n, f"p{n}") for n in range(1, 5)]
    f = Fakes(bad_apply={3})
    steps = check_series.run_steps(patches, f.apply, f.configure, f.make, log=lambda m: None)
    assert len(steps) == 3 and steps[-1].status.startswith("does not apply: patch failed")
    assert f.applied == [1, 2, 3] and f.built == [1, 2]


def test_configured_at_the_first_built_step_and_after_kconfig_changes(tmp_path):
    patches = [patch(tmp_path, 1, "new files"), patch(tmp_path, 2, "wire"),
               patch(tmp_path, 3, "kconfig", ("init/Kconfig", "kernel/Kconfig.sched")),
               patch(tmp_path, 4, "more")]
    f = Fakes()
    steps = check_series.run_steps(patches, f.apply, f.configure, f.make, log=lambda m: None)
    assert f.configured == [1, 3]
    assert all(s.options == ["SCHED_FOO"] for s in steps)
    f = Fakes()
    steps = check_series.run_steps(patches, f.apply, f.configure, f.make, first=4,
                                   log=lambda m: None)
    assert f.applied == [1, 2, 3, 4] and f.built == [4] and f.configured == [4]
    assert [s.status for s in steps[:3]] == ["applied, not built"] * 3


def test_table_lists_each_step():
    step = check_series.Step(1, "sched: x", applied=True, configured=True, status="clean",
                             options=["SCHED_ULE", "SCHED_EVENTS"], seconds=90)
    rows = check_series.table([step]).splitlines()
    assert rows[2] == "| 1 | sched: x | clean | ule, events | 1.5 |"
