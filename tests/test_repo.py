"""Repository rules: every patch is in the series and has a real commit
message; checkpatch --strict is clean on every patch and new kernel file."""

import re
import subprocess

import pytest

from schedlab import paths, tree

PATCHES = sorted((paths.REPO / "patches").glob("*.patch"))
NEW_FILES = [f for f in tree.overlay_files(paths.REPO) if re.search(r"\.(c|h|rst)$|Kconfig", f)]


def test_series_lists_every_patch_once():
    series = tree.read_series(paths.REPO)
    assert sorted(series) == sorted(p.name for p in PATCHES)
    assert len(series) == len(set(series))


@pytest.mark.parametrize("patch", PATCHES, ids=lambda p: p.name)
def test_patch_has_subject_body_and_signoff(patch):
    text = patch.read_text()
    head, _, _ = text.partition("\n---\n")
    subject = re.search(r"^Subject: \[PATCH\] (.+(?:\n .+)*)", head, re.M)
    assert subject, "no Subject:"
    body = head[subject.end():].strip()
    assert re.search(r"^Signed-off-by: .+ <.+@.+>$", body, re.M), "no Signed-off-by"
    prose = re.sub(r"^Signed-off-by: .*$", "", body, flags=re.M).strip()
    assert len(prose.split()) >= 15, "the body must say why"


@pytest.mark.parametrize("patch", PATCHES, ids=lambda p: p.name)
def test_patch_file_has_no_trailing_whitespace(patch):
    """Checked on the file itself, as a diff of patches/ shows it (checkpatch
    reads the patch's own lines and would not see a lone-space context)."""
    bad = [n for n, line in enumerate(patch.read_text().splitlines(), 1)
           if line != line.rstrip()]
    assert not bad, f"trailing whitespace on lines {bad[:10]}"


@pytest.fixture(scope="module")
def checkpatch():
    script = paths.TREE / "scripts" / "checkpatch.pl"
    if not script.exists():
        tree.Tree().prepare(log=lambda *_: None)
    return script


def run_checkpatch(checkpatch, *args):
    proc = subprocess.run(["perl", str(checkpatch), "--strict", "--no-tree",
                           "--show-types", *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("patch", PATCHES, ids=lambda p: p.name)
def test_checkpatch_patch(checkpatch, patch):
    rc, out = run_checkpatch(checkpatch, str(patch))
    assert rc == 0 and "total: 0 errors, 0 warnings, 0 checks" in out, out


@pytest.mark.parametrize("path", NEW_FILES)
def test_checkpatch_new_file(checkpatch, path):
    rc, out = run_checkpatch(checkpatch, "-f", str(paths.REPO / path))
    assert rc == 0 and "total: 0 errors, 0 warnings, 0 checks" in out, out


# The kernel's documents and the project's own (docs/).
RST_DOCS = sorted([*(paths.REPO / "Documentation").rglob("*.rst"),
                   *(paths.REPO / "docs").rglob("*.rst")])


@pytest.mark.parametrize("doc", RST_DOCS, ids=lambda p: str(p.relative_to(paths.REPO)))
def test_rst_document_parses(doc):
    """docutils reports malformed tables, bad indentation and the like
    (Sphinx roles and directives it does not know are not errors here)."""
    import io

    import docutils.core

    errors = io.StringIO()
    docutils.core.publish_doctree(doc.read_text(), source_path=str(doc),
                                  settings_overrides={"report_level": 2, "halt_level": 5,
                                                      "warning_stream": errors})
    problems = [line for line in errors.getvalue().splitlines()
                if re.search(r"\((WARNING|ERROR|SEVERE)/", line)
                and not re.search(r'Unknown interpreted text role|No role entry|Unknown directive type', line)]
    assert not problems, "\n".join(problems)


def test_every_event_kind_has_one_name_in_the_tracepoint_and_in_sched_vis():
    """include/linux/sched/events.h's kinds, the tracepoint's print table
    (what perf and trace-cmd show) and sched-vis's KIND_NAMES agree: a kind
    missing from the table prints as a number."""
    import importlib.util
    enum = (paths.REPO / "include/linux/sched/events.h").read_text()
    kinds = {name: int(value) for name, value in
             re.findall(r"^\s*(SCHED_EV_\w+)\s*=\s*(\d+),", enum, re.M)
             if not name.endswith("_FIRST")}
    trace = (paths.REPO / "include/trace/events/sched_events.h").read_text()
    table = dict(re.findall(r'\{ (SCHED_EV_\w+),\s*"(\w+)" \}', trace))
    defined = set(re.findall(r"TRACE_DEFINE_ENUM\((SCHED_EV_\w+)\);", trace))
    spec = importlib.util.spec_from_file_location(
        "sched_vis_format", paths.REPO / "tools/sched-vis/sched_vis/format.py")
    fmt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fmt)
    assert kinds and set(table) == set(kinds) == defined, sorted(set(kinds) ^ set(table))
    for name, value in kinds.items():
        assert table[name] == name[len("SCHED_EV_"):].lower(), name
        assert fmt.KIND_NAMES[value] == table[name], name
    assert set(fmt.KIND_NAMES) == set(kinds.values())


def test_both_test_folders_collect_in_one_run():
    """scripts/test collects tests/ and tools/sched-vis/tests/ together; a
    module that imports from its folder's conftest gets the other one."""
    out = subprocess.run(
        ["python3", "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only",
         "tests", "tools/sched-vis/tests"],
        cwd=paths.REPO, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout[-3000:]
