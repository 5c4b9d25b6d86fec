"""The maintainer's series (scripts/lib/schedlab/partition.py,
patches/maintainer.toml): units are cut where a file can take them one by
one, every line finds its patch, and the plan covers the development
series and the new files exactly once. Host-only."""

import pytest

from schedlab import partition, paths, tree
from schedlab.partition import Plan, Unit, apply_units, segment, split_lines, units_of


def lines(text):
    return text.splitlines(keepends=True)


def test_a_function_with_blank_lines_inside_is_one_unit():
    text = lines("int a;\n\nstatic void f(void)\n{\n\tint x;\n\n\tx = 1;\n}\n\n"
                 "#ifdef CONFIG_X\nint b;\n\nint c;\n#endif\n")
    assert segment(text, "kernel/sched/core.c") == [(0, 1), (1, 8), (8, 14)]


def test_a_comment_with_a_brace_does_not_open_a_block():
    text = lines("/* a { in a comment */\nint a;\n\n/* and '(' here */\nint b;\n")
    assert segment(text, "x.c") == [(0, 2), (2, 5)]


def test_a_header_guard_is_not_one_unit_and_its_endif_stands_alone():
    text = lines("#ifndef X_H\n#define X_H\n\nint a;\n\nint b;\n#endif\n")
    assert segment(text, "x.h") == [(0, 2), (2, 4), (4, 6), (6, 7)]


def test_kconfig_is_cut_into_entries_help_text_and_choices_whole():
    text = lines("config A\n\tbool \"a (\"\n\thelp\n\t  x\n\n\t  If unsure, say N.\n\n"
                 "# B's\nchoice\n\tprompt \"p\"\n\nconfig C\n\tbool\n\nendchoice\n")
    assert segment(text, "kernel/Kconfig.sched") == [(0, 6), (6, 15)]


def test_a_kconfig_choice_of_several_classes_splits_into_entries():
    text = lines("choice\n\tprompt \"p\"\n\nconfig SCHED_DEFAULT_ULE\n\tbool\n\n"
                 "config SCHED_DEFAULT_BMQ\n\tbool\n\nendchoice\n")
    assert split_lines(text, "kernel/Kconfig.sched") == [(0, 2), (2, 5), (5, 8), (8, 10)]


def test_text_is_cut_at_blank_lines():
    text = lines("A (\nb\n\nc\n")
    assert segment(text, "Documentation/x.rst") == [(0, 2), (2, 4)]


def test_an_insert_slides_to_where_its_braces_balance():
    """difflib may start an inserted function with the closing brace of
    the one before it; the unit must not take that brace away."""
    pristine = lines("void a(void)\n{\n\tx();\n}\n\nint z;\n")
    final = lines("void a(void)\n{\n\tx();\n}\n\nvoid b(void)\n{\n\ty();\n}\n\nint z;\n")
    units = units_of("k.c", pristine, final)
    assert ["".join(u.lines) for u in units] == ["void b(void)\n{\n\ty();\n}\n\n"]
    assert apply_units(pristine, units) == final


def test_a_unit_naming_several_classes_splits_into_lines_and_if_blocks():
    text = lines("#ifdef CONFIG_SCHED_ULE\n\tstruct a u;\n#endif\n"
                 "/* BMQ's */\n\tstruct b b;\n\tint muqss_x;\n")
    assert split_lines(text) == [(0, 3), (3, 5), (5, 6)]


def test_applying_every_unit_gives_the_final_file_and_a_subset_keeps_order():
    pristine = lines("a\nb\nc\n")
    final = lines("a\nx\n\ny\nb\nz\n")
    units = units_of("f.txt", pristine, final)
    assert apply_units(pristine, units) == final
    inserted = [u for u in units if u.anchor == u.end]
    assert apply_units(pristine, inserted[1:]) == lines("a\n\ny\nb\nc\n")


PLAN = [
    {"name": "core", "from": ["core.patch"], "files": ["k/shared.c", "k/core.c"],
     "shared": ["k/shared.c"]},
    {"name": "obs", "from": ["obs.patch"], "units": [{"file": "k/shared.c", "match": "^config OBS"}]},
    {"name": "ule", "class": "ule", "from": ["ule.patch"], "files": ["k/ule.c"]},
    {"name": "bmq", "class": "bmq", "from": ["bmq.patch"]},
]


def unit(path, text, first=0):
    u = Unit(path, 0, 0, 0, lines(text), first)
    u.classes = partition.classes_named(u.lines)
    return u


@pytest.mark.parametrize("path, text, blame, owner, why", [
    ("k/shared.c", "config OBS\n", [], "obs", "rule"),
    ("k/core.c", "int ule_x;\n", [], "core", "file"),
    ("k/core.c", "#ifdef CONFIG_SCHED_BMQ\nint b;\n#endif\n", [], "bmq", "gate"),
    ("k/shared.c", "config SCHED_ULE\n", [], "ule", "class"),
    ("k/shared.c", "config OTHER\n", [], "core", "file"),
    ("kernel/sched/core.c", "\tif (bmq_x())\n", ["obs.patch"], "bmq", "class"),
    # A class named in a comment only does not move core code.
    ("kernel/sched/core.c", "/* as ULE does */\nint y;\n", ["obs.patch"] * 2, "obs", "blame"),
    ("kernel/sched/core.c", "int z;\n", ["core.patch"], "core", "blame"),
    ("kernel/sched/core.c", "int z;\n", [""], None, "unknown"),
])
def test_a_unit_goes_to_its_patch(path, text, blame, owner, why):
    plan = Plan(PLAN)
    u = unit(path, text)
    plan.assign(u, blame)
    assert (u.why, plan.patches[u.owner]["name"] if owner else u.owner) == (why, owner or -1)


def test_an_unplaced_closing_line_goes_with_its_neighbour():
    plan = Plan(PLAN)
    pristine = lines("a\n}\n")
    final = lines("a\nint ule_q;\n}\n}\n")
    units = partition.cut(plan, "kernel/sched/core.c", pristine, final, ["", "ule.patch", "", ""])
    assert [(u.why, plan.patches[u.owner]["name"]) for u in units] == \
        [("class", "ule"), ("neighbour", "ule")]


def test_the_plan_takes_every_development_patch_and_new_file_once():
    plan = Plan.load(paths.REPO / partition.PLAN)
    olds = [o for p in plan.patches for o in p.get("from", ())]
    assert sorted(olds) == sorted(tree.read_series(paths.REPO))
    owned = [f for p in plan.patches for f in p.get("files", ())]
    assert sorted(owned) == sorted(tree.overlay_files(paths.REPO))
    assert set(plan.shared) <= set(owned)
    for p in plan.patches:
        assert ("message" in p) != ("subject" in p and "body" in p), p["name"]
        if p.get("message") not in (None, "from"):
            assert p["message"] in p["from"], p["name"]
        assert ("upstream" in p) == ("upstream_title" in p), p["name"]


def test_the_prepared_tree_is_cut_whole():
    """Every unit of the real series is placed, and all of them together
    give back the final tree."""
    t = tree.Tree()
    if not (t.tree / ".git").is_dir() or not t.patch_commits():
        pytest.skip("no prepared tree (scripts/prepare)")
    try:
        t.check_in_sync(t.load_state())
    except tree.TreeError as e:
        pytest.skip(str(e))
    plan = Plan.load(paths.REPO / partition.PLAN)
    files = partition.cut_tree(t, plan)
    last = len(plan.patches) - 1
    for rel, text in partition.states(files, last).items():
        src = t.repo / rel if files[rel][0] is None else t.tree / rel
        assert text == src.read_text(), rel
    assert not [(rel, u.first) for rel, (_, units) in files.items()
                for u in units if u.owner < 0]
    # A class's files appear with its patch, not before.
    ule = plan.index["sched-ule-class"]
    assert partition.states(files, ule - 1)["kernel/sched/ule.c"] is None


@pytest.mark.parametrize("text", [None, "[[patch]\nname = 1\n", "title = 'no patches'\n"])
def test_a_missing_or_malformed_plan_is_one_clear_error(tmp_path, text):
    path = tmp_path / "maintainer.toml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(tree.TreeError, match="no plan of the maintainer's series"):
        Plan.load(path)
