"""Tree preparation, refresh and export, on a small fake kernel tarball so
that they run in seconds (host only)."""

import os
import subprocess
import tarfile

import pytest

from schedlab import paths
from schedlab.tree import Tree, TreeError

CLI = paths.REPO / "scripts" / "prepare"
FILES = {
    "Makefile": "VERSION = 6\nPATCHLEVEL = 1\n",
    "init/Kconfig": "menu \"Scheduler features\"\n\nconfig UCLAMP_TASK\n\tbool\n\nendmenu\n",
    "kernel/sched/Makefile": "obj-y += core.o\nobj-y += fair.o\n",
    "kernel/sched/core.c": "".join(f"/* line {i} */\n" for i in range(40)),
    ".gitignore": "/*\n!/debian/\n",
}


def sh(cwd, *args, **kw):
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, text=True, **kw)


def make_patch(workdir, name, edits, subject):
    """A git format-patch file that applies `edits` {path: (old, new)}."""
    scratch = workdir / f"scratch-{name}"
    for rel, text in FILES.items():
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        (scratch / rel).write_text(text)
    sh(scratch, "git", "init", "-q")
    sh(scratch, "git", "add", "-A", "-f")
    sh(scratch, "git", "-c", "user.name=T", "-c", "user.email=t@x", "commit", "-qm", "base")
    for rel, (old, new) in edits.items():
        p = scratch / rel
        text = p.read_text()
        assert old in text
        p.write_text(text.replace(old, new, 1))
    sh(scratch, "git", "-c", "user.name=T", "-c", "user.email=t@x", "commit", "-qam",
       f"{subject}\n\nWhy it matters.\n\nSigned-off-by: T <t@x>")
    return sh(scratch, "git", "format-patch", "-1", "--stdout").stdout


@pytest.fixture
def fake(tmp_path):
    src = tmp_path / "src" / "linux-source-6.1"
    for rel, text in FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    tarball = tmp_path / "linux-source-6.1.tar.xz"
    with tarfile.open(tarball, "w:xz") as tf:
        tf.add(src, arcname="linux-source-6.1")
    repo = tmp_path / "repo"
    (repo / "patches").mkdir(parents=True)
    (repo / "kernel" / "sched").mkdir(parents=True)
    (repo / "kernel" / "sched" / "newclass.c").write_text("int newclass;\n")
    (repo / "kernel" / "Kconfig.sched").write_text("config NEWCLASS\n\tbool\n")
    sh(repo, "git", "init", "-q")
    sh(repo, "git", "config", "user.name", "Dev One")
    sh(repo, "git", "config", "user.email", "dev@example.org")
    (repo / "patches" / "kconfig.patch").write_text(make_patch(
        tmp_path, "a", {"init/Kconfig": ("menu \"Scheduler features\"\n",
                                         "menu \"Scheduler features\"\nsource \"kernel/Kconfig.sched\"\n")},
        "init: source Kconfig.sched"))
    (repo / "patches" / "make.patch").write_text(make_patch(
        tmp_path, "b", {"kernel/sched/Makefile": ("obj-y += fair.o\n",
                                                  "obj-y += fair.o\nobj-y += newclass.o\n")},
        "sched: build newclass"))
    (repo / "patches" / "series").write_text("# order matters\nkconfig.patch\nmake.patch\n")
    return Tree(repo, tmp_path / "build" / "linux", tarball)


def quiet(*_):
    pass


def test_prepare_applies_series_and_links_new_files(fake):
    fake.prepare(log=quiet)
    t = fake.tree
    assert "source \"kernel/Kconfig.sched\"" in (t / "init/Kconfig").read_text()
    assert "newclass.o" in (t / "kernel/sched/Makefile").read_text()
    link = t / "kernel/sched/newclass.c"
    assert link.is_symlink() and os.readlink(link) == str(fake.repo / "kernel/sched/newclass.c")
    # Editing the repository file is what the tree sees.
    (fake.repo / "kernel/sched/newclass.c").write_text("int newclass = 2;\n")
    assert link.read_text() == "int newclass = 2;\n"
    # The overlay does not show up as a change to the tree.
    assert fake.dirty_files() == [] and fake.untracked_files() == []


def test_prepare_is_incremental(fake):
    fake.prepare(log=quiet)
    head = fake.head()
    mtime = (fake.tree / "kernel/sched/Makefile").stat().st_mtime_ns
    fake.prepare(log=quiet)
    assert fake.head() == head
    assert (fake.tree / "kernel/sched/Makefile").stat().st_mtime_ns == mtime
    # Dropping the last patch from the series rewinds just that patch.
    (fake.repo / "patches" / "series").write_text("kconfig.patch\n")
    fake.prepare(log=quiet)
    assert "newclass.o" not in (fake.tree / "kernel/sched/Makefile").read_text()
    assert "Kconfig.sched" in (fake.tree / "init/Kconfig").read_text()


def test_broken_patch_stops_naming_it_and_its_hunk(fake):
    text = (fake.repo / "patches" / "make.patch").read_text()
    (fake.repo / "patches" / "make.patch").write_text(text.replace("obj-y += fair.o", "obj-y += unfair.o"))
    with pytest.raises(TreeError) as e:
        fake.prepare(log=quiet)
    msg = str(e.value)
    assert "patch make.patch does not apply" in msg
    assert "rejected hunks for kernel/sched/Makefile" in msg and "unfair.o" in msg
    # The patches before it stay applied; the tree is left clean.
    assert "Kconfig.sched" in (fake.tree / "init/Kconfig").read_text()
    assert fake.dirty_files() == []
    assert not list(fake.tree.rglob("*.rej"))


def test_broken_patch_fails_the_command(fake):
    (fake.repo / "patches" / "make.patch").write_text(
        (fake.repo / "patches" / "make.patch").read_text().replace("fair.o", "nope.o"))
    proc = subprocess.run([str(CLI), "--repo", str(fake.repo),
                           "--tree", str(fake.tree), "--source", str(fake.source)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "make.patch does not apply" in proc.stderr


def test_corrupt_tarball_is_one_line(fake):
    """A --source that tar cannot read: one line that names it, no
    traceback, and no tree or scratch folder left behind."""
    fake.source.write_bytes(os.urandom(4096))
    proc = subprocess.run([str(CLI), "--repo", str(fake.repo),
                           "--tree", str(fake.tree), "--source", str(fake.source)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert f"{fake.source} is not a readable kernel tarball" in proc.stderr
    assert not fake.tree.exists() and not list(fake.tree.parent.glob(".extract-*"))


def test_missing_patch_in_series(fake):
    (fake.repo / "patches" / "series").write_text("kconfig.patch\ngone.patch\n")
    with pytest.raises(TreeError, match="gone.patch"):
        fake.prepare(log=quiet)


def test_prepare_refuses_to_drop_unrefreshed_edits(fake):
    fake.prepare(log=quiet)
    (fake.tree / "kernel/sched/core.c").write_text("edited\n")
    with pytest.raises(TreeError, match="scripts/refresh"):
        fake.prepare(log=quiet)
    fake.prepare(discard=True, log=quiet)
    assert (fake.tree / "kernel/sched/core.c").read_text() == FILES["kernel/sched/core.c"]


def test_refresh_folds_edit_into_the_patch_that_touches_the_file(fake):
    fake.prepare(log=quiet)
    mk = fake.tree / "kernel/sched/Makefile"
    mk.write_text(mk.read_text() + "obj-y += extra.o\n")
    assert fake.refresh(log=quiet) == ["make.patch"]
    patch = (fake.repo / "patches" / "make.patch").read_text()
    assert "+obj-y += extra.o" in patch and "Subject: [PATCH] sched: build newclass" in patch
    assert "Signed-off-by: T <t@x>" in patch
    assert fake.dirty_files() == []
    # A fresh tree built from the refreshed series has the edit.
    other = Tree(fake.repo, fake.tree.parent / "again", fake.source)
    other.prepare(log=quiet)
    assert "extra.o" in (other.tree / "kernel/sched/Makefile").read_text()


def test_refresh_writes_blank_context_without_trailing_space(fake):
    """Blank source lines in a hunk's context are written as empty lines,
    which git am still applies."""
    fake.prepare(log=quiet)
    kc = fake.tree / "init/Kconfig"
    kc.write_text(kc.read_text().replace("\tbool\n", "\tbool\n\thelp\n\t  Clamp.\n"))
    assert fake.refresh(log=quiet) == ["kconfig.patch"]
    patch = (fake.repo / "patches" / "kconfig.patch").read_text()
    diff = patch[patch.index("\ndiff --git "):]
    assert "\n\n" in diff and not any(line.endswith((" ", "\t")) for line in diff.splitlines())
    other = Tree(fake.repo, fake.tree.parent / "again", fake.source)
    other.prepare(log=quiet)
    assert "Clamp." in (other.tree / "init/Kconfig").read_text()


def test_refresh_untouched_file_needs_new_patch(fake):
    fake.prepare(log=quiet)
    core = fake.tree / "kernel/sched/core.c"
    core.write_text(core.read_text().replace("/* line 3 */", "/* line three */"))
    with pytest.raises(TreeError, match="--new"):
        fake.refresh(log=quiet)
    with pytest.raises(TreeError, match="--body"):
        fake.refresh(new="core-words.patch", subject="sched: words", log=quiet)
    fake.refresh(new="core-words.patch", subject="sched/core: spell out a number",
                 body="Numbers read better as words here.", log=quiet)
    assert (fake.repo / "patches" / "series").read_text().splitlines()[-1] == "core-words.patch"
    patch = (fake.repo / "patches" / "core-words.patch").read_text()
    assert "Signed-off-by: Dev One <dev@example.org>" in patch
    assert "Numbers read better as words here." in patch
    assert "+/* line three */" in patch


def test_refresh_takes_back_edits_through_a_broken_link(fake):
    fake.prepare(log=quiet)
    link = fake.tree / "kernel/sched/newclass.c"
    link.unlink()
    link.write_text("int newclass = 3;\n")     # what an editor that renames does
    assert fake.refresh(log=quiet) == []
    assert (fake.repo / "kernel/sched/newclass.c").read_text() == "int newclass = 3;\n"
    assert link.is_symlink()


def test_new_file_may_not_shadow_a_kernel_file(fake):
    (fake.repo / "kernel/sched/core.c").write_text("mine\n")
    with pytest.raises(TreeError, match="kernel/sched/core.c"):
        fake.prepare(log=quiet)


def test_export_is_a_git_am_series_with_cover_letter(fake, tmp_path):
    fake.prepare(log=quiet)
    files = fake.export(tmp_path / "out", log=quiet)
    names = [f.name for f in files]
    assert names[0].startswith("0000-cover-letter")
    assert len(names) == 4          # cover, new files, two patches
    cover = files[0].read_text()
    assert "*** SUBJECT HERE ***" not in cover and "*** BLURB HERE ***" not in cover
    # Applying the export to the pristine source gives the prepared tree.
    check = tmp_path / "check"
    check.mkdir()
    sh(check, "tar", "-xf", str(fake.source))
    top = check / "linux-source-6.1"
    sh(top, "git", "init", "-q")
    sh(top, "git", "add", "-A", "-f")
    sh(top, "git", "-c", "user.name=T", "-c", "user.email=t@x", "commit", "-qm", "base")
    sh(top, "git", "-c", "user.name=T", "-c", "user.email=t@x", "am", *map(str, files[1:]))
    for rel in ["init/Kconfig", "kernel/sched/Makefile", "kernel/sched/newclass.c",
                "kernel/Kconfig.sched"]:
        assert (top / rel).read_text() == (fake.tree / rel).read_text(), rel
