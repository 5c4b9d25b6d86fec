"""How much of the kernel outside each class's own files names the class
(scripts/class-hooks): the class layer of issue 39 lowers it step by step,
and nothing may raise it again."""

import sys

import pytest

from schedlab import classhooks, paths

# Ceilings: lower them as the layer takes hooks out of core code.
# SCHED_ISO ("iso") is a policy core keeps, counted apart from MuQSS.
MOST_LINES = {"ule": 12, "bmq": 21, "muqss": 19, "iso": 21}
MOST_CODE_LINES = {"ule": 0, "bmq": 0, "muqss": 0, "iso": 7}


def test_counter_follows_names_and_config_gates(tmp_path):
    sched = tmp_path / "kernel" / "sched"
    sched.mkdir(parents=True)
    (sched / "core.c").write_text(
        "#ifdef CONFIG_SCHED_ULE\n"      # ule: gate line
        "\tfoo();\n"                     # ule: inside the gate
        "#endif\n"                       # ule: closes it
        "\tbar();\n"                     # nothing
        "\tmuqss_tick(rq);\n"            # muqss, code
        "/* BMQ and ule, a comment */\n"  # bmq and ule, not code
        "#if defined(CONFIG_SMP)\n"      # an unrelated gate
        "\tif (iso_policy(p))\n"         # iso, code
        "#endif\n"
        "#ifdef CONFIG_SCHED_POLICY_ISO\n"  # iso: gate line
        "\tcase 4:\n"                    # iso: inside the gate
        "#endif\n"                       # iso: closes it
        "\tschedule();\n")               # "ule" inside a word: nothing
    got = classhooks.count(tmp_path)
    assert got["files"] == {"kernel/sched/core.c": {"ule": 4, "bmq": 1, "muqss": 1, "iso": 4}}
    assert got["code"] == {"ule": 0, "bmq": 0, "muqss": 1, "iso": 1}


def test_core_lines_naming_a_class_do_not_grow(debug_kernel):
    got = classhooks.count(paths.TREE)
    print(classhooks.table(got), file=sys.stderr)
    assert got["total"]["ule"] > 0, "no class named anywhere: is the tree prepared?"
    over = {c: (got["total"][c], MOST_LINES[c]) for c in classhooks.COLUMNS
            if got["total"][c] > MOST_LINES[c]}
    assert not over, f"lines naming a class outside its files (got, ceiling): {over}"
    over = {c: (got["code"][c], MOST_CODE_LINES[c]) for c in classhooks.COLUMNS
            if got["code"][c] > MOST_CODE_LINES[c]}
    assert not over, f"code lines naming a class in core .c files (got, ceiling): {over}"


@pytest.mark.parametrize("cls", classhooks.COLUMNS)
def test_ceilings_are_tight(debug_kernel, cls):
    """A ceiling above the count lets a hook come back unseen: lower it."""
    got = classhooks.count(paths.TREE)
    assert (got["total"][cls], got["code"][cls]) == (MOST_LINES[cls], MOST_CODE_LINES[cls]), \
        f"{cls}: the tree has {got['total'][cls]} lines, {got['code'][cls]} code lines; " \
        "set MOST_LINES and MOST_CODE_LINES to them"
