"""The prepared kernel tree: extract, apply patches/, overlay new files,
refresh edits back into patches/, export a git-am-able series.

The tree is a git repository whose first commit (tag "pristine") is the
extracted source and whose following commits are the series, one commit
per patch, in series order.  New files from the repository are symlinked
into it, so editing them in the repository is what gets built.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import paths

STATE = "schedlab-state.json"
BOT = {"GIT_COMMITTER_NAME": "schedlab", "GIT_COMMITTER_EMAIL": "schedlab@localhost"}
SKIP_NAMES = re.compile(r"(~$|\.swp$|\.orig$|\.rej$|\.pyc$)")
PATCH_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.patch")


def blank_context(patch):
    """Write the context line of an empty source line as an empty line, not
    a lone space: git apply reads both the same, and the patch files then
    have no trailing whitespace for checkpatch or editors to trip on."""
    head, sep, body = patch.partition("\ndiff --git ")
    if not sep:
        return patch
    lines = body.split("\n")
    return head + sep + "\n".join("" if line == " " else line for line in lines)


class TreeError(Exception):
    """A failure the user must act on; the message says what to do."""


def git(tree, *args, env=None, check=True, input=None):
    full_env = dict(os.environ, **BOT)
    full_env.setdefault("GIT_AUTHOR_NAME", "schedlab")
    full_env.setdefault("GIT_AUTHOR_EMAIL", "schedlab@localhost")
    if env:
        full_env.update(env)
    proc = subprocess.run(["git", "-C", str(tree), *args], env=full_env,
                          input=input, capture_output=True, text=True)
    if check and proc.returncode:
        raise TreeError(f"git {' '.join(args)} failed:\n{proc.stderr.strip()}")
    return proc


def read_series(repo, check=True):
    series = Path(repo) / "patches" / "series"
    if not series.exists():
        return []
    names = []
    for line in series.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line.split()[0])
    for name in names if check else ():
        if not (Path(repo) / "patches" / name).is_file():
            raise TreeError(f"patches/series names {name}, which does not exist")
    return names


def file_sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def overlay_files(repo):
    """Relative paths of the repository's new kernel files."""
    repo = Path(repo)
    found = []
    for root in paths.OVERLAY_ROOTS:
        base = repo / root
        if not base.is_dir():
            continue
        for p in sorted(base.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and not SKIP_NAMES.search(p.name):
                found.append(str(p.relative_to(repo)))
    return found


class Tree:
    def __init__(self, repo=paths.REPO, tree=paths.TREE, source=paths.SOURCE_TARBALL):
        self.repo = Path(repo).resolve()
        self.tree = Path(tree).resolve()
        self.source = Path(source)

    # -- state -------------------------------------------------------
    @property
    def state_file(self):
        return self.tree / ".git" / STATE

    def load_state(self):
        if self.state_file.exists():
            return json.loads(self.state_file.read_text())
        return {"applied": [], "overlay": []}

    def save_state(self, state):
        self.state_file.write_text(json.dumps(state, indent=1) + "\n")

    def head(self):
        return git(self.tree, "rev-parse", "HEAD").stdout.strip()

    def dirty_files(self):
        out = git(self.tree, "status", "--porcelain", "--untracked-files=no").stdout
        return [line[3:] for line in out.splitlines()]

    def untracked_files(self):
        """Files created in the tree that are neither tracked nor overlay links."""
        out = git(self.tree, "ls-files", "--others",
                  "--exclude-from=.git/info/exclude").stdout
        return [f for f in out.splitlines() if not SKIP_NAMES.search(f)]

    # -- prepare -----------------------------------------------------
    def extract(self):
        if not self.source.exists():
            raise TreeError(f"{self.source} is missing: run scripts/setup "
                            "(apt-get install linux-source-6.1)")
        self.tree.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=self.tree.parent, prefix=".extract-"))
        try:
            proc = subprocess.run(["tar", "-xf", str(self.source), "-C", str(tmp)],
                                  capture_output=True, text=True)
            if proc.returncode:
                why = next((l for l in proc.stderr.splitlines() if l.strip()), "tar failed")
                raise TreeError(f"{self.source} is not a readable kernel tarball ({why}): "
                                "give another --source, or reinstall linux-source-6.1")
            tops = list(tmp.iterdir())
            if len(tops) != 1 or not tops[0].is_dir():
                raise TreeError(f"{self.source}: expected one top-level folder")
            git(tops[0], "init", "-q")
            # The Debian tarball's .gitignore ignores the whole top level.
            git(tops[0], "add", "-A", "-f")
            git(tops[0], "commit", "-q", "-m", f"pristine {self.source.name}")
            git(tops[0], "tag", "pristine")
            if self.tree.exists():
                shutil.rmtree(self.tree)
            tops[0].rename(self.tree)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def prepare(self, discard=False, log=print):
        series = read_series(self.repo)
        if not (self.tree / ".git").exists():
            log(f"prepare: extracting {self.source} into {self.tree}")
            self.extract()
        state = self.load_state()
        dirty = self.dirty_files()
        if dirty and not discard:
            raise TreeError("the tree has edits not yet in patches/ ("
                            + ", ".join(dirty[:5]) + "): run scripts/refresh, "
                            "or scripts/prepare --discard to drop them")
        keep = 0
        for i, name in enumerate(series):
            if i >= len(state["applied"]):
                break
            rec = state["applied"][i]
            if rec["name"] != name or rec["sha"] != file_sha(self.repo / "patches" / name):
                break
            keep = i + 1
        base = state["applied"][keep - 1]["commit"] if keep else "pristine"
        if self.head() != git(self.tree, "rev-parse", base).stdout.strip() or dirty:
            git(self.tree, "reset", "-q", "--hard", base)
        applied = state["applied"][:keep]
        for name in series[keep:]:
            patch = self.repo / "patches" / name
            self.apply_one(name, patch)
            applied.append({"name": name, "sha": file_sha(patch), "commit": self.head()})
            state["applied"] = applied
            self.save_state(state)
            log(f"prepare: applied {name}")
        state["applied"] = applied
        self.save_state(state)
        self.sync_overlay(state, log)
        self.save_state(state)
        log(f"prepare: {len(series)} patches, {len(state['overlay'])} new files in {self.tree}")

    def apply_one(self, name, patch):
        proc = git(self.tree, "am", "--quiet", str(patch), check=False)
        if proc.returncode == 0:
            return
        git(self.tree, "am", "--abort", check=False)
        detail = proc.stdout + proc.stderr
        # Re-run with --reject to show exactly which hunks fail, then undo.
        rej = git(self.tree, "apply", "--reject", "--verbose", str(patch), check=False)
        touched = re.findall(r"^\+\+\+ b/(\S+)", patch.read_text(errors="replace"), re.M)
        rejects = []
        for f in touched:
            r = self.tree / (f + ".rej")
            if r.exists():
                rejects.append(f"--- rejected hunks for {f} ---\n{r.read_text(errors='replace')}")
                r.unlink()
        git(self.tree, "reset", "-q", "--hard", "HEAD")
        for f in self.untracked_files():
            if f in touched:
                (self.tree / f).unlink()
        raise TreeError(f"patch {name} does not apply\n{detail.strip()}\n"
                        f"{rej.stderr.strip()}\n" + "\n".join(rejects))

    def sync_overlay(self, state, log=print):
        files = overlay_files(self.repo)
        if files:
            tracked = set(git(self.tree, "ls-files", "-z", "--", *files).stdout.split("\0")) - {""}
            if tracked:
                raise TreeError("new files in the repository would replace kernel files: "
                                + ", ".join(sorted(tracked))
                                + " (change existing files through patches/)")
        for rel in set(state.get("overlay", [])) - set(files):
            dst = self.tree / rel
            if dst.is_symlink():
                dst.unlink()
        for rel in files:
            src, dst = self.repo / rel, self.tree / rel
            if dst.is_symlink():
                if os.readlink(dst) == str(src):
                    continue
                dst.unlink()
            elif dst.exists():
                # An editor replaced the link with a file: keep its content.
                if dst.read_bytes() != src.read_bytes():
                    shutil.copyfile(dst, src)
                    log(f"overlay: took the edits to {rel} back into the repository")
                dst.unlink()
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.symlink_to(src)
        state["overlay"] = files
        exclude = self.tree / ".git" / "info" / "exclude"
        exclude.parent.mkdir(exist_ok=True)
        exclude.write_text("# overlay links made by scripts/prepare\n"
                           + "".join(f"/{f}\n" for f in files))

    # -- refresh -----------------------------------------------------
    def patch_commits(self):
        out = git(self.tree, "rev-list", "--reverse", "pristine..HEAD").stdout
        return out.split()

    def check_in_sync(self, state):
        series = read_series(self.repo)
        names = [r["name"] for r in state["applied"]]
        if names != series or len(self.patch_commits()) != len(series):
            raise TreeError("the tree does not match patches/series: run scripts/prepare first")
        return series

    def refresh(self, patch=None, new=None, subject=None, body=None, log=print):
        state = self.load_state()
        series = self.check_in_sync(state)
        self.sync_overlay(state, log)
        changed = self.dirty_files()
        untracked = self.untracked_files()
        if untracked and not (patch or new):
            raise TreeError("new files in the tree: " + ", ".join(untracked)
                            + ": new kernel files belong in the repository (they are "
                            "linked in); to put one in a patch name it with --patch or --new")
        if not changed and not untracked:
            log("refresh: nothing to refresh")
            return []
        commits = self.patch_commits()
        if new:
            self.new_patch(new, subject, body, changed + untracked, series)
        else:
            groups = {}
            for f in changed + untracked:
                if patch:
                    if patch not in series:
                        raise TreeError(f"{patch} is not in patches/series")
                    target = commits[series.index(patch)]
                else:
                    target = git(self.tree, "log", "-1", "--format=%H",
                                 "pristine..HEAD", "--", f).stdout.strip()
                    if not target:
                        raise TreeError(f"{f} is not changed by any patch: use "
                                        "--new NAME --subject ... --body ... or --patch NAME")
                groups.setdefault(target, []).append(f)
            for target, files in groups.items():
                git(self.tree, "add", "-A", "-f", "--", *files)
                git(self.tree, "commit", "-q", f"--fixup={target}")
            proc = git(self.tree, "rebase", "-q", "-i", "--autosquash", "pristine",
                       env={"GIT_SEQUENCE_EDITOR": "true"}, check=False)
            if proc.returncode:
                git(self.tree, "rebase", "--abort", check=False)
                git(self.tree, "reset", "-q", "--soft", commits[-1])
                raise TreeError("the edit does not fold into that patch without "
                                "conflicting with a later one:\n" + proc.stderr.strip())
        return self.write_patches(state, log)

    def new_patch(self, name, subject, body, files, series):
        if not subject or not body:
            raise TreeError("--new needs --subject and --body (the body says why)")
        if not PATCH_NAME_RE.fullmatch(name):
            raise TreeError(f"{name}: patch names look like sched-thing.patch")
        if name in series:
            raise TreeError(f"{name} is already in patches/series")
        who = self.identity()
        git(self.tree, "add", "-A", "-f", "--", *files)
        msg = f"{subject}\n\n{body.strip()}\n\nSigned-off-by: {who[0]} <{who[1]}>\n"
        git(self.tree, "commit", "-q", "-F", "-", input=msg,
            env={"GIT_AUTHOR_NAME": who[0], "GIT_AUTHOR_EMAIL": who[1]})
        series_file = self.repo / "patches" / "series"
        text = series_file.read_text() if series_file.exists() else ""
        if text and not text.endswith("\n"):
            text += "\n"
        series_file.write_text(text + name + "\n")

    def identity(self):
        def cfg(key):
            return subprocess.run(["git", "-C", str(self.repo), "config", key],
                                  capture_output=True, text=True).stdout.strip()
        name, email = cfg("user.name"), cfg("user.email")
        if not name or not email:
            raise TreeError("set git config user.name and user.email for Signed-off-by")
        return name, email

    def write_patches(self, state, log=print):
        series = read_series(self.repo, check=False)
        commits = self.patch_commits()
        assert len(series) == len(commits), (series, commits)
        written = []
        applied = []
        before = {r["name"]: r["commit"] for r in state["applied"]}
        for name, commit in zip(series, commits):
            dst = self.repo / "patches" / name
            if dst.exists() and name in before and self.same_change(before[name], commit):
                # Untouched by this refresh: keep the file as its author wrote it.
                applied.append({"name": name, "sha": file_sha(dst), "commit": commit})
                continue
            text = blank_context(git(self.tree, "format-patch", "-1", "--stdout",
                                     "--zero-commit", "--no-signature", commit).stdout)
            if not dst.exists() or dst.read_text() != text:
                dst.write_text(text)
                written.append(name)
                log(f"refresh: wrote patches/{name}")
            applied.append({"name": name, "sha": file_sha(dst), "commit": commit})
        state["applied"] = applied
        self.save_state(state)
        return written

    def same_change(self, old, new):
        if old == new:
            return True
        show = ("show", "--format=%an%n%ae%n%B", "--patch")
        return git(self.tree, *show, old).stdout == git(self.tree, *show, new).stdout

    # -- export ------------------------------------------------------
    def export(self, outdir, log=print):
        state = self.load_state()
        self.check_in_sync(state)
        if self.dirty_files():
            log("export: warning: the tree has edits not yet refreshed; they are not exported")
        outdir = Path(outdir).resolve()
        if outdir.exists() and any(outdir.iterdir()):
            raise TreeError(f"{outdir} is not empty")
        index = self.tree / ".git" / "schedlab-export-index"
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            git(self.tree, "read-tree", "pristine", env=env)
            files = overlay_files(self.repo)
            for rel in files:
                src = self.repo / rel
                blob = git(self.tree, "hash-object", "-w", str(src)).stdout.strip()
                mode = "100755" if os.access(src, os.X_OK) else "100644"
                git(self.tree, "update-index", "--add", "--cacheinfo",
                    f"{mode},{blob},{rel}", env=env)
            who = self.identity()
            msg = ("sched: add the new files of the schedlab series\n\n"
                   "The scheduler code, headers and documentation that this series\n"
                   "introduces as new files; the patches that follow wire them into\n"
                   "the build and the core.\n\n"
                   + "".join(f"  {f}\n" for f in files)
                   + f"\nSigned-off-by: {who[0]} <{who[1]}>\n")
            parent = git(self.tree, "rev-parse", "pristine").stdout.strip()
            tip = self.commit_index(env, parent, msg, {"GIT_AUTHOR_NAME": who[0],
                                                       "GIT_AUTHOR_EMAIL": who[1]})
            for commit in self.patch_commits():
                diff = git(self.tree, "diff-tree", "-p", "--binary", f"{commit}^", commit).stdout
                git(self.tree, "apply", "--cached", "-", env=env, input=diff)
                meta = git(self.tree, "log", "-1", "--format=%an%x00%ae%x00%ad%x00%B",
                           commit).stdout.split("\0", 3)
                tip = self.commit_index(env, tip, meta[3], {
                    "GIT_AUTHOR_NAME": meta[0], "GIT_AUTHOR_EMAIL": meta[1],
                    "GIT_AUTHOR_DATE": meta[2]})
        finally:
            index.unlink(missing_ok=True)
        return self.write_series(outdir, tip, who, "apply with git am on 6.1.192", log)

    def write_series(self, outdir, tip, who, what, log=print):
        """format-patch pristine..@tip into @outdir with the cover letter."""
        outdir.mkdir(parents=True, exist_ok=True)
        git(self.tree, "format-patch", "-q", "--cover-letter", "--zero-commit",
            "--no-signature", "-o", str(outdir), f"pristine..{tip}",
            env={"GIT_AUTHOR_NAME": who[0], "GIT_AUTHOR_EMAIL": who[1],
                 "GIT_COMMITTER_NAME": who[0], "GIT_COMMITTER_EMAIL": who[1]})
        self.fill_cover_letter(outdir)
        written = sorted(outdir.glob("*.patch"))
        log(f"export: {len(written)} files in {outdir} ({what})")
        return written

    def commit_index(self, env, parent, msg, author_env):
        tree = git(self.tree, "write-tree", env=env).stdout.strip()
        return git(self.tree, "commit-tree", tree, "-p", parent, "-F", "-",
                   env=dict(env, **author_env), input=msg).stdout.strip()

    def fill_cover_letter(self, outdir):
        cover = next(Path(outdir).glob("0000-*.patch"))
        src = self.repo / "patches" / "cover-letter.txt"
        if src.exists():
            title, _, blurb = src.read_text().partition("\n")
        else:
            title, blurb = "schedlab scheduler series for Linux 6.1", ""
        text = cover.read_text()
        text = text.replace("*** SUBJECT HERE ***", title.strip())
        text = text.replace("*** BLURB HERE ***", blurb.strip())
        cover.write_text(text)
