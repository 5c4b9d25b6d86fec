"""scripts/reproduce's adapters for real hardware (--host only): the
Phoronix Test Suite and the NAS Parallel Benchmarks, the tools users run
on a machine booted with the patched kernel, run under each class
(switched through kernel.sched_class, order rotated each round) when
they are installed, their results parsed into the same JSON as the guest
experiments (docs/reproduction.rst, "Real hardware").

Neither tool can be installed on the machine this was written on: the
parsers were tested on output written from the tools' documented formats
(tests/test_reproduce_host.py), not on a real run.

Registered on import; experiments/__init__.py imports this module after
the guest experiments' families."""

import os
import re
import shlex
import shutil
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

from ..registry import CLASSES, SCHED_CLASS, Outcome, ReproduceError, bench_info, experiment
from .series import marked_runs, missing_runs, rotated_command


def refuse_guest(ctx, name):
    """Stop an adapter that was handed a guest: check_args refuses these
    experiments without --host, so this holds only for a caller that
    bypassed it."""
    if getattr(ctx.runner, "mode", None) != "host":
        raise ReproduceError(f"{name} runs only on real hardware (--host)")


def rotation(rounds, classes=CLASSES):
    """(round, class) in the order rotated_command() runs them: every class
    once per round, the order rotated each round."""
    for rnd in range(1, rounds + 1):
        k = (rnd - 1) % len(classes)
        for cls in classes[k:] + classes[:k]:
            yield rnd, cls


def _float(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value == value and abs(value) != float("inf") else None


# -- the Phoronix Test Suite ---------------------------------------------------

PTS = "phoronix-test-suite"
PTS_TESTS_ENV = "REPRODUCE_PTS_TESTS"
# The ULE paper's 16 Phoronix applications (§4.2: compilation, compression,
# image processing, scientific, cryptography, web), as the 11 test profiles
# that give them: scimark2 and john-the-ripper give one result per option.
PTS_DEFAULT_TESTS = ("pts/build-apache", "pts/build-php", "pts/compress-7zip",
                     "pts/compress-gzip", "pts/c-ray", "pts/dcraw", "pts/himeno", "pts/hmmer",
                     "pts/scimark2", "pts/john-the-ripper", "pts/apache")
# A test profile, suite or OpenBenchmarking.org result: [repository/]name,
# which also keeps the shell out of a name.
PTS_TEST_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
PTS_MARK = "reproduce-pts"
PTS_STATUS = "reproduce-pts-status"
# Trials of a test within one result: one, since the rounds repeat it with
# the classes alternating, which PTS's own repetitions would not.
PTS_TIMES_TO_RUN = 1
# Where PTS saves result files when its configuration does not say: as
# root with /var/lib and /etc writable (--host runs as root), and as a user.
PTS_RESULT_DIRS = ("/var/lib/phoronix-test-suite/test-results",
                   "~/.phoronix-test-suite/test-results")
# Its configuration files, root's and a user's, whose
# Options/Testing/ResultsDirectory may name another folder.
PTS_CONFIGS = ("/etc/phoronix-test-suite.xml", "~/.phoronix-test-suite/user-config.xml")
# A result's DisplayFormat that holds one number per run; line graphs,
# pass/fail and image comparisons do not.
PTS_NUMERIC_FORMATS = ("", "BAR_GRAPH")
# bench_info()'s two words name a ratio above 1 and one below 1 (written
# for times, where lower is better); a PTS result says which is better.
PTS_WORDS = {"HIB": ("better (higher)", "worse (lower)"),
             "LIB": ("worse (higher)", "better (lower)")}


def pts_tests(env=None):
    """The tests to run: $REPRODUCE_PTS_TESTS (separated by spaces), or
    the ULE paper's applications."""
    env = os.environ if env is None else env
    return env.get(PTS_TESTS_ENV, "").split() or list(PTS_DEFAULT_TESTS)


def pts_refusal(args=None, env=None, which=shutil.which):
    """Why phoronix cannot run here (one line), or None: checked with the
    other arguments, before anything runs."""
    if not which(PTS):
        return (f"phoronix needs the Phoronix Test Suite: {PTS} is not in PATH "
                "(docs/reproduction.rst, \"Real hardware\")")
    bad = [t for t in pts_tests(env) if not PTS_TEST_NAME.match(t)]
    if bad:
        return f"{PTS_TESTS_ENV}: {bad[0]!r} is not a test name such as pts/c-ray"
    return None


def pts_result_name(stamp, rnd, cls):
    """The result file of one run. PTS turns TEST_RESULTS_NAME into the
    folder's name by lower-casing it and dropping all but letters, digits
    and dashes; this name has nothing else, so the folder is found under
    it. The stamp keeps a run from adding to an earlier run's file."""
    return f"reproduce-{stamp}-r{rnd}-{cls}"


def pts_command(rounds, tests, stamp, classes=CLASSES):
    """Shell that runs `phoronix-test-suite batch-benchmark TESTS` under each
    class per round, as rotated_command() does (class switched through
    kernel.sched_class, order rotated each round, "MARK ROUND CLASS" before
    each run, the boot's class restored at the end), each run saving its
    own result file (TEST_RESULTS_NAME) with the class as the run's
    identifier, and printing PTS's exit status after it. Its standard
    input is /dev/null: batch mode must not wait for a prompt."""
    quoted = " ".join(shlex.quote(t) for t in tests)
    parts = [f"first=$(cat {SCHED_CLASS})"]
    for rnd, cls in rotation(rounds, classes):
        env = (f"TEST_RESULTS_NAME={pts_result_name(stamp, rnd, cls)} "
               f"TEST_RESULTS_IDENTIFIER={cls} "
               f"TEST_RESULTS_DESCRIPTION='scripts/reproduce phoronix round {rnd} class {cls}' "
               f"FORCE_TIMES_TO_RUN={PTS_TIMES_TO_RUN}")
        parts.append(f"echo {cls} >{SCHED_CLASS} && sleep 1 && echo {PTS_MARK} {rnd} {cls} && "
                     f"{{ {env} {PTS} batch-benchmark {quoted} </dev/null; "
                     f"echo {PTS_STATUS} $?; }}")
    parts.append(f"echo $first >{SCHED_CLASS}")
    return "; ".join(parts)


def pts_result_dirs(configs=PTS_CONFIGS, defaults=PTS_RESULT_DIRS):
    """Folders that may hold PTS's result files: the ResultsDirectory its
    configuration names, then its defaults."""
    dirs = []
    for config in configs:
        try:
            root = ET.parse(Path(config).expanduser()).getroot()
        except (OSError, ET.ParseError):
            continue
        configured = (root.findtext("Options/Testing/ResultsDirectory") or "").strip()
        if configured:
            dirs.append(Path(configured).expanduser())
    dirs += [Path(d).expanduser() for d in defaults]
    return list(dict.fromkeys(dirs))


def find_composite(name, dirs):
    """NAME/composite.xml in the first of `dirs` that has it, or None."""
    for folder in dirs:
        path = Path(folder) / name / "composite.xml"
        if path.is_file():
            return path
    return None


def parse_composite(text):
    """The results of a PTS result file (composite.xml), one dict per
    <Result>: the test profile (Identifier), Title, the options in words
    (Description) and as arguments (Arguments), Scale (the unit),
    Proportion (HIB: higher is better, LIB: lower is), DisplayFormat and
    the <Data> entries, each run's Identifier, Value and RawString (every
    trial's value, colon separated). ValueError when `text` is no such
    file."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        raise ValueError(f"not well-formed XML ({err})") from None
    if root.tag != "PhoronixTestSuite":
        raise ValueError(f"<{root.tag}> is not a PTS result file's <PhoronixTestSuite>")
    results = []
    for result in root.findall("Result"):
        def field(tag, node=result):
            return (node.findtext(tag) or "").strip()
        results.append({
            "test": field("Identifier"), "title": field("Title"),
            "app_version": field("AppVersion"), "arguments": field("Arguments"),
            "description": field("Description"), "scale": field("Scale"),
            "proportion": field("Proportion"), "format": field("DisplayFormat"),
            "entries": [{"identifier": field("Identifier", e), "value": field("Value", e),
                         "raw": field("RawString", e)} for e in result.findall("Data/Entry")]})
    return results


def pts_bench_name(result):
    """"Title: options", the way PTS heads a result's graph."""
    title = result["title"] or result["test"]
    return f"{title}: {result['description']}" if result["description"] else title


def pts_bench_info(scale, proportion):
    """bench_info() of a PTS result: compared as a ratio to the base, the
    verdict in the result's own sense (for a higher-is-better result a
    ratio above 1 is "better (higher)")."""
    above, below = PTS_WORDS.get(proportion, ("higher", "lower"))
    return bench_info(scale or "(no unit)", "ratio", worse=above, better=below)


def pts_runs(results, rnd, cls, topology):
    """Raw runs, failures and bench_info() of one run's parsed result file:
    a value per numeric result, the entry being the run identified as the
    class (or the only one). A result without a number is a failure."""
    runs, failures, benches = [], [], {}
    for result in results:
        if result["format"] not in PTS_NUMERIC_FORMATS:
            continue
        name = pts_bench_name(result)
        entries = [e for e in result["entries"] if e["identifier"] == cls] or \
            (result["entries"] if len(result["entries"]) == 1 else [])
        if not entries:
            failures.append({"bench": name, "variant": cls, "round": rnd,
                             "why": f"no entry for {cls} in its result"})
            continue
        value = _float(entries[0]["value"])
        if value is None:
            failures.append({"bench": name, "variant": cls, "round": rnd,
                             "why": f"value {entries[0]['value']!r} is not a number"})
            continue
        trials = [_float(v) for v in entries[0]["raw"].split(":") if v.strip()]
        benches[name] = pts_bench_info(result["scale"], result["proportion"])
        runs.append({"bench": name, "variant": cls, "round": rnd, "value": value,
                     "unit": benches[name]["unit"], "topology": topology,
                     "test": result["test"], "arguments": result["arguments"],
                     "proportion": result["proportion"],
                     "trials": [t for t in trials if t is not None]})
    return runs, failures, benches


def run_status(lines, mark):
    """The exit status a run printed after "MARK STATUS", or None."""
    for line in lines:
        f = line.split()
        if len(f) == 2 and f[0] == mark and f[1].lstrip("-").isdigit():
            return int(f[1])
    return None


def pts_outcome(output, stamp, rounds, topology, dirs, keep=None):
    """Runs, failures and benches of pts_command()'s output: each run's
    result file found in `dirs` (and copied into `keep`, the run's own
    folder), parsed; a run without one, or with one that does not parse,
    is a failure, as is a result that other runs have and this one lacks
    (its test failed under that class)."""
    runs, failures, benches = [], [], {}
    ran = marked_runs(output, PTS_MARK)
    for (rnd, cls), lines in ran.items():
        name = pts_result_name(stamp, rnd, cls)
        status = run_status(lines, PTS_STATUS)
        path = find_composite(name, dirs)
        if path is None:
            failures.append({"bench": "all", "variant": cls, "round": rnd,
                             "why": f"no result file {name} ({PTS} exit status {status})"})
            continue
        text = path.read_text(errors="replace")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / f"{name}.composite.xml").write_text(text)
        try:
            results = parse_composite(text)
        except ValueError as err:
            failures.append({"bench": "all", "variant": cls, "round": rnd,
                             "why": f"{path}: {err}"})
            continue
        r, f, b = pts_runs(results, rnd, cls, topology)
        if not r and not f:
            f = [{"bench": "all", "variant": cls, "round": rnd,
                  "why": f"{path} has no numeric result ({PTS} exit status {status})"}]
        runs += r
        failures += f
        benches.update(b)
    have = {(r["bench"], r["variant"], r["round"]) for r in runs}
    have |= {(f["bench"], f["variant"], f["round"]) for f in failures}
    failed_runs = {(f["variant"], f["round"]) for f in failures if f["bench"] == "all"}
    failures += [{"bench": b, "variant": cls, "round": rnd, "why": "no result"}
                 for (rnd, cls) in ran if (cls, rnd) not in failed_runs
                 for b in benches if (b, cls, rnd) not in have]
    failures += missing_runs(runs, rounds, failures)
    return runs, failures, benches


@experiment(
    "phoronix",
    title="Phoronix Test Suite applications per class, on real hardware",
    seed="the ULE paper §6.3 (Figure 8: the Phoronix applications of §4.2)",
    published="On 32 cores ULE and CFS differed little over the 37 applications (2.75 % in "
              "ULE's favour on average; 1.5 % on one core, Figure 5, where scimark2 was 36 % "
              "slower on ULE and apache 40 % faster); c-ray took the same time on both.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    topologies=("host",),
    host_only=True, preflight=pts_refusal, seconds_per_round=2400, quick_seconds=300)
def phoronix(ctx, topology):
    """`phoronix-test-suite batch-benchmark` of $REPRODUCE_PTS_TESTS (the
    first alone with --quick) under each class, one result file per class
    and round, one trial each (the rounds repeat); every numeric result
    of those files becomes a benchmark, compared with CFS as a ratio."""
    refuse_guest(ctx, "phoronix")
    tests = pts_tests()[:1] if ctx.quick else pts_tests()
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    cmd = pts_command(ctx.rounds, tests, stamp, ctx.classes or CLASSES)
    tag = f"phoronix-{topology}"
    boot = ctx.runner.run(cmd, topology, tag, ctx.track(rf"^{PTS_MARK} (\d+) "), ctx.timeout())
    runs, failures, benches = pts_outcome(boot.output, stamp, ctx.rounds, topology,
                                          pts_result_dirs(), keep=boot.files)
    if not runs:
        raise ReproduceError(f"{PTS} gave no result (exit {boot.status}); output in "
                             f"{boot.files}")
    how = (f"FORCE_TIMES_TO_RUN={PTS_TIMES_TO_RUN} {PTS} batch-benchmark {' '.join(tests)} "
           "under each class")
    commands = {b: f"{how} ({r['test']}, arguments {r['arguments']!r})"
                for b in benches for r in runs if r["bench"] == b}
    return Outcome(runs=runs, benches=benches, commands=commands, failures=failures,
                   release=boot.release)


# -- the NAS Parallel Benchmarks -------------------------------------------------

NPB_DIR_ENV = "REPRODUCE_NPB_DIR"
NPB_SELECT_ENV = "REPRODUCE_NPB"
NPB_MARK = "reproduce-npb"
NPB_BINARY = "reproduce-npb-binary"
NPB_STATUS = "reproduce-npb-status"
# NPB's binaries are named BENCHMARK.CLASS.x (make mg CLASS=C gives mg.C.x);
# the classes from the smallest, for --quick.
NPB_SUFFIX = ".x"
NPB_CLASS_ORDER = "SWABCDEF"
NPB_COMPLETED = re.compile(r"^\s*(\S+) Benchmark Completed\.?\s*$")
NPB_FIELD = re.compile(r"^\s*([A-Za-z][A-Za-z /()]*?)\s*=\s*(.*?)\s*$")
NPB_VERIFIED = "SUCCESSFUL"


def npb_binaries(folder):
    """The NPB binaries in `folder`: executable files named *.x, sorted."""
    try:
        return sorted(p.name for p in Path(folder).iterdir()
                      if p.name.endswith(NPB_SUFFIX) and p.is_file() and os.access(p, os.X_OK))
    except OSError:
        return []


def npb_selected(env=None):
    """(folder, binaries): $REPRODUCE_NPB_DIR and the binaries named in
    $REPRODUCE_NPB (mg.C or mg.C.x, separated by spaces), or every one
    there."""
    env = os.environ if env is None else env
    folder = env.get(NPB_DIR_ENV, "")
    names = [n if n.endswith(NPB_SUFFIX) else n + NPB_SUFFIX
             for n in env.get(NPB_SELECT_ENV, "").split()]
    return folder, names or (npb_binaries(folder) if folder else [])


def npb_refusal(args=None, env=None):
    """Why nas cannot run here (one line), or None: checked with the other
    arguments, before anything runs."""
    folder, names = npb_selected(env)
    if not folder:
        return (f"nas needs the NAS Parallel Benchmarks: set {NPB_DIR_ENV} to the folder "
                "of their binaries (NPB3.4-OMP/bin)")
    if not Path(folder).is_dir():
        return f"{NPB_DIR_ENV}: {folder} is not a folder"
    found = npb_binaries(folder)
    if not found:
        return f"{NPB_DIR_ENV}: no NPB binary (executable *{NPB_SUFFIX}) in {folder}"
    missing = [n for n in names if n not in found]
    if missing:
        return f"{NPB_SELECT_ENV}: no executable {missing[0]} in {folder}"
    return None


def npb_quick(names):
    """--quick's binary: the one of the smallest class."""
    def rank(name):
        parts = name.split(".")
        cls = parts[1] if len(parts) == 3 else ""
        return (NPB_CLASS_ORDER.find(cls) if cls in NPB_CLASS_ORDER else len(NPB_CLASS_ORDER),
                name)
    return [min(names, key=rank)]


def npb_command(rounds, folder, names, threads, classes=CLASSES):
    """rotated_command() of the binaries one after the other with
    OMP_NUM_THREADS=`threads`, each announced by "reproduce-npb-binary
    NAME" and followed by its exit status."""
    steps = []
    for name in names:
        path = shlex.quote(str(Path(folder) / name))
        steps += [f"echo {NPB_BINARY} {name}", f"OMP_NUM_THREADS={threads} {path}",
                  f"echo {NPB_STATUS} $?"]
    return rotated_command(rounds, NPB_MARK, "{ " + "; ".join(steps) + "; }", classes)


def parse_npb(lines):
    """NPB's closing block ("MG Benchmark Completed." and then "Key =
    value" lines: Class, Size, Iterations, Time in seconds, Total threads,
    Mop/s total, Verification...) as {"name", "class", "time_s", "mops",
    "verification", ...}. ValueError without the block or its time."""
    fields, name = {}, None
    for line in lines:
        if m := NPB_COMPLETED.match(line):
            fields, name = {}, m[1]
        elif name and (m := NPB_FIELD.match(line)):
            fields.setdefault(m[1], m[2])
    if not name:
        raise ValueError("no \"Benchmark Completed\" block")
    time_s = _float(fields.get("Time in seconds"))
    if time_s is None:
        raise ValueError(f"{name}: no \"Time in seconds\"")
    threads = fields.get("Total threads", fields.get("Total processes"))
    return {"name": name, "class": fields.get("Class", "?"), "time_s": time_s,
            "mops": _float(fields.get("Mop/s total")),
            "verification": fields.get("Verification", "").strip(),
            "size": fields.get("Size"), "iterations": fields.get("Iterations"),
            "threads": int(threads) if threads and threads.isdigit() else None}


def npb_split(lines):
    """{binary: (its lines, its exit status)} of one run of npb_command()."""
    out, name = {}, None
    for line in lines:
        f = line.split()
        if len(f) == 2 and f[0] == NPB_BINARY:
            name = f[1]
            out[name] = ([], None)
        elif name and len(f) == 2 and f[0] == NPB_STATUS and f[1].isdigit():
            out[name] = (out[name][0], int(f[1]))
        elif name:
            out[name][0].append(line)
    return out


def parse_nas(output, names, rounds, topology):
    """Raw runs and failures of npb_command()'s output: per class, round
    and binary (the benchmark named as the binary, mg.C for mg.C.x) the
    time in seconds, with Mop/s total, the verification and the sizes
    beside it. A run without NPB's closing block, or whose verification
    is not SUCCESSFUL, is a failure, not a value."""
    runs, failures = [], []
    for (rnd, cls), lines in marked_runs(output, NPB_MARK).items():
        per_binary = npb_split(lines)
        for binary in names:
            bench = binary[:-len(NPB_SUFFIX)]
            if binary not in per_binary:
                failures.append({"bench": bench, "variant": cls, "round": rnd,
                                 "why": "did not run"})
                continue
            blines, status = per_binary[binary]
            try:
                result = parse_npb(blines)
            except ValueError as err:
                failures.append({"bench": bench, "variant": cls, "round": rnd,
                                 "why": f"{err} (exit status {status})"})
                continue
            if result["verification"] != NPB_VERIFIED:
                failures.append({"bench": bench, "variant": cls, "round": rnd,
                                 "why": f"verification {result['verification'] or 'missing'}",
                                 "time_s": result["time_s"]})
                continue
            runs.append({"bench": bench, "variant": cls, "round": rnd,
                         "value": result["time_s"], "unit": "s", "topology": topology,
                         "binary": binary, "npb": f"{result['name']} class {result['class']}",
                         "mops_total": result["mops"],
                         "verification": result["verification"],
                         "threads": result["threads"], "size": result["size"],
                         "iterations": result["iterations"], "exit_status": status})
    failures += missing_runs(runs, rounds, failures)
    return runs, failures


@experiment(
    "nas",
    title="NAS Parallel Benchmarks, one thread per CPU, per class, on real hardware",
    seed="the ULE paper §6.3 (Figure 8: BT, CG, DC, EP, FT, IS, LU, MG, SP, UA)",
    published="MG was 73 % faster on ULE than on CFS: ULE placed one thread per core and "
              "never migrated them, while CFS sometimes put two MG threads on one core and "
              "the barriers delayed every thread; FT and UA were faster on ULE for the same "
              "reason.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    topologies=("host",),
    host_only=True, preflight=npb_refusal, seconds_per_round=1800, quick_seconds=60)
def nas(ctx, topology):
    """Each NPB binary of $REPRODUCE_NPB_DIR ($REPRODUCE_NPB selects; the
    smallest class alone with --quick) under each class with one OpenMP
    thread per online CPU; the time in seconds compared with CFS as a
    ratio (the paper compared Mop/s, its inverse, kept in the runs)."""
    refuse_guest(ctx, "nas")
    folder, names = npb_selected()
    names = npb_quick(names) if ctx.quick else names
    threads = os.cpu_count() or 1
    cmd = npb_command(ctx.rounds, folder, names, threads, ctx.classes or CLASSES)
    boot = ctx.runner.run(cmd, topology, f"nas-{topology}", ctx.track(rf"^{NPB_MARK} (\d+) "),
                          ctx.timeout())
    runs, failures = parse_nas(boot.output, names, ctx.rounds, topology)
    if not runs:
        raise ReproduceError(f"the NPB binaries gave no verified result (exit {boot.status}); "
                             f"output in {boot.files}")
    benches = {r["bench"]: bench_info("s") for r in runs}
    commands = {r["bench"]: f"OMP_NUM_THREADS={threads} {Path(folder) / r['binary']} "
                            "under each class" for r in runs}
    return Outcome(runs=runs, benches=benches, commands=commands, failures=failures,
                   release=boot.release)
