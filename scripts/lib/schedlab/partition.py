"""The maintainer's series cut from the final tree: every line the series
adds to 6.1 (to existing files and to new ones) goes to one patch of an
ordered plan, so that each patch applies and builds on the ones before.

A file's change from pristine to final is split into hunks (difflib's
opcodes); a hunk that only inserts lines is cut further into units, each
a run of lines that ends on a blank line only where comments, brackets
and #if blocks are closed: a function, a struct, an #ifdef block, a
Kconfig entry, a paragraph. A hunk that deletes or replaces pristine
lines is one unit. Each unit goes to a patch of the plan by, in order:
a rule of the plan, the class its #if gate or its code names (ULE, BMQ,
MuQSS; SCHED_ISO is core's policy), the owner the plan gives its new
file, and the development patch that last touched its lines (git blame
in the prepared tree), class-neutral lines of existing files going to
the core whichever class brought them. patches/maintainer.toml is the
plan; scripts/export writes the result and scripts/check-series builds
it step by step.
"""

import difflib
import re
import textwrap
from dataclasses import dataclass, field

from .classhooks import ENDIF, GATE, IF, NAMES

CLOSE_COMMENT = re.compile(r"\*/")


@dataclass
class Unit:
    path: str
    anchor: int         # pristine line index the unit goes before (or replaces from)
    end: int            # pristine line index after what it replaces (== anchor: inserts)
    order: int          # position among the units of the same hunk
    lines: list
    first: int          # index of its first line in the final file
    owner: int = -1     # index of its patch in the plan
    why: str = ""       # the rule that placed it
    classes: set = field(default_factory=set)


def _balance(line, state):
    """Update [comment, bracket depth, #if depth] for one line; strings and
    character constants are skipped so that '{' in them does not count."""
    code = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', '""', line)
    if IF.match(code):
        state[2] += 1
    elif ENDIF.match(code):
        state[2] -= 1
    i = 0
    while i < len(code):
        if state[0]:
            m = CLOSE_COMMENT.search(code, i)
            if not m:
                return
            state[0], i = False, m.end()
            continue
        if code.startswith("//", i):
            return
        if code.startswith("/*", i):
            state[0], i = True, i + 2
            continue
        ch = code[i]
        if ch in "{([":
            state[1] += 1
        elif ch in "})]":
            state[1] -= 1
        i += 1


KCONFIG = re.compile(r"Kconfig[^/]*$")
KEYWORD = re.compile(r"^(config|menuconfig|choice|endchoice|comment|menu|endmenu|if|endif|"
                     r"source|mainmenu)\b")


def kconfig_entries(lines):
    """Kconfig runs: each from a keyword at the start of a line to the next
    one, help text (blank lines included) with it; comments and blank
    lines before a keyword go with it."""
    units, start, seen = [], 0, False
    for i, line in enumerate(lines):
        if KEYWORD.match(line):
            if seen:
                # The run's trailing comment and blank lines go with the next.
                cut = i
                while cut > start and (not lines[cut - 1].strip()
                                       or lines[cut - 1].startswith("#")):
                    cut -= 1
                units.append((start, cut))
                start = cut
            seen = True
    units.append((start, len(lines)))
    return [u for u in units if u[0] < u[1]]


def kconfig_segment(lines):
    """Kconfig units: entries, with a choice and its entries as one unit
    (split_lines() cuts it into entries again when they name classes)."""
    units, depth, open_at = [], 0, None
    for s, e in kconfig_entries(lines):
        first = next((ln for ln in lines[s:e] if KEYWORD.match(ln)), "")
        if first.startswith("choice"):
            depth += 1
            if depth == 1:
                open_at = s
            continue
        if first.startswith("endchoice") and depth:
            depth -= 1
            if depth == 0:
                units.append((open_at, e))
            continue
        if not depth:
            units.append((s, e))
    if depth:
        units.append((open_at, len(lines)))
    return units


def segment(lines, path=""):
    """Cut inserted lines into units: (start, stop) index pairs. Blank
    lines before a unit belong to it; trailing blank lines to the last
    unit. Text files (Kconfig, rst, txt, Makefile) are cut at blank lines."""
    if KCONFIG.search(path):
        return kconfig_segment(lines)
    brackets = not re.search(r"(\.rst|\.txt|Makefile)$", path)
    units, start, state = [], 0, [False, 0, 0]
    content = False
    guard = include_guard(lines)
    for i, line in enumerate(lines):
        if i in guard:
            content = content or bool(line.strip())
            continue
        blank = not line.strip()
        balanced = not state[0] and state[2] <= 0 and (state[1] <= 0 or not brackets)
        if blank and content and balanced:
            units.append((start, i))
            start, content = i, False
        if not blank:
            content = True
        if brackets:
            _balance(line, state)
        elif IF.match(line) or ENDIF.match(line):
            _balance(line, state)
    if content or not units:
        units.append((start, len(lines)))
    else:
        units[-1] = (units[-1][0], len(lines))
    if guard:
        # The guard's #endif closes the file whoever adds the units before it.
        end = max(guard)
        cut = []
        for s, e in units:
            if s <= end < e:
                cut.extend([(s, end), (end, end + 1), (end + 1, e)])
            else:
                cut.append((s, e))
        units = cut
    return [u for u in units if u[0] < u[1]]


GUARD = re.compile(r"\s*#\s*(ifndef\s+(\w+)|if\s+!defined\((\w+)\)\s*\|\|\s*"
                   r"defined\(TRACE_HEADER_MULTI_READ\))")


def include_guard(lines):
    """Indexes of a header's include guard (#ifndef X or a trace header's
    #if !defined(X) || ..., #define X, its #endif): they enclose the file
    and do not make it one unit."""
    code = [i for i, line in enumerate(lines) if line.strip()
            and not line.lstrip().startswith(("/*", "*", "//"))]
    first = next((n for n, i in enumerate(code) if IF.match(lines[i])), None)
    if first is None or first + 1 >= len(code):
        return set()
    m = GUARD.match(lines[code[first]])
    name = m and (m.group(2) or m.group(3))
    if not name or not re.match(rf"\s*#\s*define\s+{name}\b", lines[code[first + 1]]):
        return set()
    depth = 0
    for i in code[first:]:
        if IF.match(lines[i]):
            depth += 1
        elif ENDIF.match(lines[i]):
            depth -= 1
            if depth == 0:
                return {code[first], code[first + 1], i}
    return set()


def split_lines(lines, path=""):
    """A unit that names more than one class cut finer: each #if block and
    each line outside one on its own, comments with what follows; in
    Kconfig, each entry, and a choice's first and last lines on their own."""
    if KCONFIG.search(path) and any(KEYWORD.match(ln) for ln in lines):
        parts = []
        for s, e in kconfig_entries(lines):
            if len(classes_named(lines[s:e])) > 1:
                parts.extend((i, i + 1) for i in range(s, e))   # an entry's own lines
            else:
                parts.append((s, e))
        return parts
    parts, start, depth, comment = [], 0, 0, False
    for i, line in enumerate(lines):
        if IF.match(line):
            depth += 1
        elif ENDIF.match(line):
            depth -= 1
        stripped = line.strip()
        if stripped.startswith("/*") and "*/" not in stripped:
            comment = True
        elif comment and "*/" in stripped:
            comment = False
            continue
        if depth <= 0 and not comment and not stripped.startswith("/*") and stripped:
            parts.append((start, i + 1))
            start = i + 1
        elif not stripped and depth <= 0 and not comment:
            continue
    if start < len(lines):
        parts.append((start, len(lines)))
    return parts


def classes_named(lines):
    """The classes a run of lines names. SCHED_ISO is core's policy (any
    class may run it), so naming it names no class."""
    found = set()
    for line in lines:
        for name, pat in NAMES.items():
            if name != "iso" and pat.search(line):
                found.add(name)
    return found


def _depths(lines):
    """(net bracket depth, lowest depth reached) of a run of lines."""
    state, low = [False, 0, 0], 0
    for line in lines:
        _balance(line, state)
        low = min(low, state[1])
    return state[1], low


def slide(pristine, final, i1, j1, j2):
    """An inserted run may sit a few lines up or down when the lines at
    its edges repeat (a closing brace, a blank line): difflib may put
    "}" at its start instead of its end. Take the position where the run
    is balanced, closes nothing it did not open, and ends on a blank line
    if it can."""
    n = j2 - j1
    up = 0
    while i1 - up > 0 and final[j2 - 1 - up] == pristine[i1 - 1 - up]:
        up += 1
    down = 0
    while i1 + down < len(pristine) and j2 + down < len(final) and \
            final[j1 + down] == pristine[i1 + down]:
        down += 1
    best = None
    for shift in range(-up, down + 1):
        run = final[j1 + shift:j1 + shift + n]
        net, low = _depths(run)
        score = (net == 0 and low == 0, not run[-1].strip(), -abs(shift))
        if best is None or score > best[0]:
            best = (score, shift)
    shift = best[1]
    return i1 + shift, j1 + shift, j2 + shift


def units_of(path, pristine, final):
    """The units of one file's change from @pristine to @final (lists of
    lines; a new file's pristine is empty)."""
    units = []
    sm = difflib.SequenceMatcher(a=pristine, b=final, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert":
            i1, j1, j2 = slide(pristine, final, i1, j1, j2)
            for n, (s, e) in enumerate(segment(final[j1:j2], path)):
                units.append(Unit(path, i1, i1, n, final[j1 + s:j1 + e], j1 + s))
        else:
            units.append(Unit(path, i1, i2, 0, final[j1:j2], j1))
    for u in units:
        u.classes = classes_named(u.lines)
    return units


def apply_units(pristine, units):
    """@pristine with @units (of one file, each from the same diff) applied."""
    out, pos = [], 0
    for u in sorted(units, key=lambda u: (u.anchor, u.end != u.anchor, u.order)):
        out.extend(pristine[pos:u.anchor])
        out.extend(u.lines)
        pos = max(pos, u.end, u.anchor)
    out.extend(pristine[pos:])
    return out


def blame_patches(tree, rel, commits_to_patch):
    """For each line of @rel at HEAD of the prepared @tree, the development
    patch that last changed it ("" for a pristine line)."""
    from .tree import git
    out = git(tree, "blame", "--porcelain", "pristine..HEAD", "--", rel).stdout
    owners, current = [], None
    for line in out.splitlines():
        m = re.match(r"^\^?([0-9a-f]{40}) \d+ \d+", line)
        if m:
            current = commits_to_patch.get(m.group(1), "")
        elif line.startswith("\t"):
            owners.append(current)
    return owners


CLASS_OF_GATE = {"ULE": "ule", "BMQ": "bmq", "MUQSS": "muqss", "POLICY_ISO": "muqss"}
COMMENT = re.compile(r"^\s*(/\*|\*|//)")


def code_classes(unit):
    """The classes a unit names outside comments: a comment that gives a
    class as an example does not make core code that class's."""
    return classes_named([line for line in unit.lines if not COMMENT.match(line)])


class Plan:
    """patches/maintainer.toml: the ordered patches and their rules."""

    def __init__(self, patches):
        self.patches = patches
        self.index = {p["name"]: i for i, p in enumerate(patches)}
        self.from_old = {old: i for i, p in enumerate(patches) for old in p.get("from", ())}
        self.owner = {f: i for i, p in enumerate(patches) for f in p.get("files", ())}
        self.shared = {f for p in patches for f in p.get("shared", ())}
        self.of_class = {p["class"]: i for i, p in enumerate(patches) if "class" in p}
        self.neutral = next((i for i, p in enumerate(patches) if p.get("neutral")), None)
        self.rules = [(i, u["file"], re.compile(u["match"], re.M))
                      for i, p in enumerate(patches) for u in p.get("units", ())]

    @classmethod
    def load(cls, path):
        """The plan in @path; TreeError if it is missing or malformed."""
        import tomllib
        from .tree import TreeError
        try:
            with open(path, "rb") as f:
                return cls(tomllib.load(f)["patch"])
        except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError) as e:
            raise TreeError(f"{path}: no plan of the maintainer's series ({e}); "
                            "--development exports the development series") from e

    def class_patch(self, name, old):
        """The patch of class @name: the one @old (a development patch)
        maps to if it is that class's, else the class's first."""
        i = self.from_old.get(old)
        if i is not None and self.patches[i].get("class") == name:
            return i
        return self.of_class[name]

    def assign(self, unit, blame):
        """Set unit.owner (a plan index) and unit.why. @blame: the
        development patch of each line of the unit's file ("" if none)."""
        text = "".join(unit.lines)
        votes = {}
        for i in range(unit.first, min(unit.first + len(unit.lines), len(blame))):
            if blame[i] in self.from_old:
                # Braces, blank lines and short lines match anywhere.
                weight = 1 if len(re.sub(r"[\s{}();]", "", unit.lines[i - unit.first])) > 3 \
                    else 0.01
                votes[blame[i]] = votes.get(blame[i], 0) + weight
        last_old = max(votes, key=lambda o: (votes[o], self.from_old[o]), default="")
        for i, path, pat in self.rules:
            if path == unit.path and pat.search(text):
                unit.owner, unit.why = i, "rule"
                return
        new_file = unit.path in self.owner
        first = next((line for line in unit.lines if line.strip()), "")
        gate = IF.match(first) and GATE.search(first)
        if gate:
            unit.owner, unit.why = self.class_patch(CLASS_OF_GATE[gate.group(1)], last_old), "gate"
            return
        if new_file and unit.path not in self.shared:
            unit.owner, unit.why = self.owner[unit.path], "file"
            return
        named = code_classes(unit) if not new_file else unit.classes
        if len(named) == 1:
            unit.owner, unit.why = self.class_patch(next(iter(named)), last_old), "class"
            return
        if new_file:
            unit.owner, unit.why = self.owner[unit.path], "file"
            return
        if last_old:
            unit.owner, unit.why = self.from_old[last_old], "blame"
            if "class" in self.patches[unit.owner] and self.neutral is not None:
                # Core code that names no class is the layer's, whichever
                # class brought it.
                unit.owner, unit.why = self.neutral, "neutral"
        else:
            unit.owner, unit.why = -1, "unknown"


def cut(plan, path, pristine, final, blame):
    """The units of one file, each assigned; a unit naming several classes
    is cut finer first."""
    out = []
    for u in units_of(path, pristine, final):
        if len(u.classes) > 1 and u.anchor == u.end and (
                path not in plan.owner or path in plan.shared):
            for n, (s, e) in enumerate(split_lines(u.lines, path)):
                sub = Unit(path, u.anchor, u.end, 0, u.lines[s:e], u.first + s)
                sub.classes = classes_named(sub.lines)
                out.append(sub)
        else:
            out.append(u)
    for n, u in enumerate(out):     # the order of units at one anchor
        u.order = n
    for u in out:
        plan.assign(u, blame)
    for n, u in enumerate(out):
        if u.why == "unknown":
            settle(u, out[n - 1::-1] if n else [], out[n + 1:])
    return out


def settle(unit, before, after):
    """A unit no rule places: a closing line git blame gives to pristine
    (diffs align differently) goes with the nearest placed unit before it,
    or after it."""
    for other in [*before, *after]:
        if other.why != "unknown":
            unit.owner, unit.why = other.owner, "neighbour"
            return


def cut_tree(tree, plan):
    """Every unit of the series in the prepared @tree (a schedlab.tree.Tree
    at the end of patches/series), assigned: {path: (pristine, units)},
    pristine None for a new file."""
    from .tree import git, overlay_files, read_series
    commits = tree.patch_commits()
    to_patch = dict(zip(commits, read_series(tree.repo)))
    changed = git(tree.tree, "diff", "--name-only", "pristine", "HEAD").stdout.split()
    files = {}
    for rel in changed:
        pristine = git(tree.tree, "show", f"pristine:{rel}").stdout.splitlines(keepends=True)
        final = (tree.tree / rel).read_text().splitlines(keepends=True)
        units = cut(plan, rel, pristine, final, blame_patches(tree.tree, rel, to_patch))
        for u in units:
            if not u.lines:
                deleted_by(tree, plan, u, pristine, commits, to_patch)
        files[rel] = (pristine, units)
    for rel in overlay_files(tree.repo):
        final = (tree.repo / rel).read_text().splitlines(keepends=True)
        files[rel] = (None, cut(plan, rel, [], final, []))
    return files


def deleted_by(tree, plan, unit, pristine, commits, to_patch):
    """A unit that only deletes pristine lines goes with the first
    development patch after which those lines, with a line of context on
    each side, are gone."""
    from .tree import git
    block = "".join(pristine[max(unit.anchor - 1, 0):unit.end + 1])
    for commit in commits:
        text = git(tree.tree, "show", f"{commit}:{unit.path}", check=False).stdout
        if block not in text and to_patch[commit] in plan.from_old:
            unit.owner, unit.why = plan.from_old[to_patch[commit]], "deleted"
            return


def states(files, upto):
    """{path: text} of every file the series has changed or created by plan
    patch @upto (included); None for a new file that does not exist yet."""
    out = {}
    for rel, (pristine, units) in files.items():
        mine = [u for u in units if u.owner <= upto]
        if pristine is None and not mine:
            out[rel] = None
            continue
        out[rel] = "".join(apply_units(pristine or [], mine))
    return out


PLAN = "patches/maintainer.toml"


def message(tree, plan, n, old_commits, who):
    """The commit message of plan patch @n."""
    from .tree import git
    p = plan.patches[n]
    src = p.get("message")
    if src:
        old = p["from"][0] if src == "from" else src
        return git(tree.tree, "log", "-1", "--format=%B", old_commits[old]).stdout
    # A backport names the upstream commit it follows.
    upstream = ""
    if "upstream" in p:
        ref = f"Backport of upstream commit {p['upstream'][:12]} (\"{p['upstream_title']}\")."
        upstream = textwrap.fill(ref, 72) + "\n\n"
    return (f"{p['subject']}\n\n{upstream}{p['body'].strip()}\n\n"
            f"Signed-off-by: {who[0]} <{who[1]}>\n")


def export(tree, outdir, log=print):
    """Write the maintainer's series (patches/maintainer.toml) to @outdir,
    as Tree.export() writes the development one: a cover letter, then one
    patch per plan entry, each the state of every file after it."""
    import os
    from pathlib import Path
    from .tree import TreeError, git, read_series
    state = tree.load_state()
    tree.check_in_sync(state)
    plan = Plan.load(tree.repo / PLAN)
    files = cut_tree(tree, plan)
    lost = sorted({u.path for _, units in files.values() for u in units if u.owner < 0})
    if lost:
        raise TreeError(f"{PLAN} places no patch for lines of {', '.join(lost)}")
    old_commits = dict(zip(read_series(tree.repo), tree.patch_commits()))
    outdir = Path(outdir).resolve()
    if outdir.exists() and any(outdir.iterdir()):
        raise TreeError(f"{outdir} is not empty")
    who = tree.identity()
    index = tree.tree / ".git" / "schedlab-maintainer-index"
    env = {"GIT_INDEX_FILE": str(index)}
    tip = git(tree.tree, "rev-parse", "pristine").stdout.strip()
    try:
        git(tree.tree, "read-tree", "pristine", env=env)
        for n in range(len(plan.patches)):
            for rel, text in states(files, n).items():
                if text is None:
                    continue
                src = tree.repo / rel if files[rel][0] is None else tree.tree / rel
                mode = "100755" if os.access(src, os.X_OK) else "100644"
                blob = git(tree.tree, "hash-object", "-w", "--stdin", input=text).stdout.strip()
                git(tree.tree, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{rel}",
                    env=env)
            tip = tree.commit_index(env, tip, message(tree, plan, n, old_commits, who),
                                    {"GIT_AUTHOR_NAME": who[0], "GIT_AUTHOR_EMAIL": who[1]})
    finally:
        index.unlink(missing_ok=True)
    final = git(tree.tree, "diff", "--stat", "HEAD", tip, "--",
                *[f for f in files if files[f][0] is not None]).stdout
    if final.strip():
        raise TreeError(f"the maintainer's series does not end at the tree:\n{final}")
    return tree.write_series(outdir, tip, who, f"the maintainer's series, {PLAN}", log)
