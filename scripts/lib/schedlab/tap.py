"""Parse TAP/KTAP from in-guest test programs, kselftest and KUnit (whose
output arrives through the kernel console, with printk timestamps)."""

import re
from dataclasses import dataclass, field

RESULT_RE = re.compile(r"^(?P<indent>\s*)(?P<ok>not ok|ok)\b\s*(?P<num>\d+)?\s*(?:-\s*)?"
                       r"(?P<name>[^#]*?)\s*(?:#\s*(?P<directive>\w+)?(?P<reason>.*))?$")
PLAN_RE = re.compile(r"^\s*1\.\.(\d+)")
SUBTEST_RE = re.compile(r"^\s*# Subtest: (.+)$")
TIMESTAMP_RE = re.compile(r"^\[\s*\d+\.\d+\]\s?")


@dataclass
class Point:
    ok: bool
    number: int
    name: str
    directive: str = ""         # "SKIP", "TODO" or ""
    reason: str = ""
    depth: int = 0
    diagnostics: list = field(default_factory=list)

    @property
    def failed(self):
        return not self.ok and self.directive != "TODO"

    @property
    def skipped(self):
        return self.directive == "SKIP"


@dataclass
class Tap:
    plan: int = None
    points: list = field(default_factory=list)
    bail_out: str = None

    def top(self):
        return [p for p in self.points if p.depth == 0]

    def failures(self):
        return [p for p in self.points if p.failed]

    def problems(self):
        """Reasons the run as a whole is not a pass (empty list: pass)."""
        out = []
        if self.bail_out is not None:
            out.append(f"bailed out: {self.bail_out}")
        top = self.top()
        if self.plan is None:
            out.append("no plan line")
        elif self.plan != len(top):
            out.append(f"planned {self.plan} tests, ran {len(top)}")
        for p in self.failures():
            diag = "; ".join(d.strip() for d in p.diagnostics[-5:])
            out.append(f"not ok {p.number} {p.name}" + (f" ({diag})" if diag else ""))
        return out


def parse(text, strip_timestamps=False):
    tap = Tap()
    diagnostics = []
    for raw in text.splitlines():
        line = TIMESTAMP_RE.sub("", raw) if strip_timestamps else raw
        line = line.rstrip("\r")
        indent = len(line) - len(line.lstrip(" "))
        if line.strip().startswith("Bail out!"):
            tap.bail_out = line.strip()[len("Bail out!"):].strip()
            continue
        m = PLAN_RE.match(line)
        if m and indent == 0 and tap.plan is None:
            tap.plan = int(m.group(1))
            continue
        m = RESULT_RE.match(line)
        if m and (m.group("num") or m.group("name")):
            directive = (m.group("directive") or "").upper()
            if directive not in ("SKIP", "TODO"):
                directive = ""
            tap.points.append(Point(
                ok=m.group("ok") == "ok", number=int(m.group("num") or 0),
                name=m.group("name").strip(), directive=directive,
                reason=(m.group("reason") or "").strip(), depth=indent // 4,
                diagnostics=diagnostics))
            diagnostics = []
            continue
        if line.strip().startswith("#"):
            diagnostics.append(line.strip()[1:])
    return tap


def kunit_suites(console):
    """{suite name: Tap of its cases} from KUnit's output in a console log."""
    lines = [TIMESTAMP_RE.sub("", raw).rstrip("\r") for raw in console.splitlines()]
    suites = {}
    current = None
    body = []
    for line in lines:
        m = SUBTEST_RE.match(line)
        if m and line.startswith("    "):
            current, body = m.group(1).strip(), []
            continue
        if current is None:
            continue
        m = RESULT_RE.match(line)
        if m and not line.startswith(" ") and m.group("name").strip() == current:
            suites[current] = parse("\n".join(l[4:] if l.startswith("    ") else l
                                              for l in body))
            suites[current].points.append(Point(
                ok=m.group("ok") == "ok", number=0, name=f"suite {current}", depth=-1))
            current = None
            continue
        body.append(line)
    return suites


def assert_ok(text, what="guest test"):
    """For tests: fail with every not-ok point, a missing plan or a bail-out."""
    result = parse(text)
    problems = result.problems()
    assert not problems, f"{what}:\n  " + "\n  ".join(problems) + f"\n--- output ---\n{text}"
    return result
