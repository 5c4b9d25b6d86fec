"""scripts/reproduce's command line: the arguments and their checks,
--list, the run of every experiment named (each written, plotted and
checked as it ends), and the compare, spread and docs subcommands."""

import argparse
import importlib.util
import json
import sys
import threading
import time
from pathlib import Path

from .. import build, command, paths, reference, stats, vm
from .compare import compare, spread
from .docs import write_docs
from .document import check_png, document, load_folder, validate
from .experiments import EXPERIMENTS
from .metadata import config_hash, metadata, result_dir
from .progress import Progress, duration
from .registry import CLASSES, SCHED_CLASS, ReproduceError, with_classes
from .report import save, table
from .runner import (BOOT_SECONDS, Context, GuestRunner, HostRunner, host_refusal, plan_of,
                     references_for, run_experiment)


def parser():
    ap = command.Parser(prog="reproduce", description="Run the seeds' experiments and write "
                 "results/<date>-<rev>/: one JSON per experiment with every raw run and "
                 "its metadata, report.md and a PNG per experiment. "
                 "'reproduce compare A B' puts two result folders side by side; "
                 "'reproduce spread FOLDER...' compares the spread of runs made in "
                 "different QEMU modes; 'reproduce docs FOLDER...' writes the "
                 "project's result pages (docs/results) from result folders.",
                 epilog="Experiments: see --list. Name some, or give --all for every\n"
                 "experiment that runs in a guest (hours: --list gives each one's\n"
                 "estimate). docs/reproduction.rst has the details.\n\n"
                 + command.epilog(command.OK, command.FAILED, command.USAGE, command.GUEST))
    ap.add_argument("experiments", nargs="*", metavar="EXPERIMENT",
                    help="experiments to run, see --list (default: none; --all or "
                         "--quick alone runs every guest experiment)")
    ap.add_argument("--all", action="store_true",
                    help="run every experiment that runs in a guest (with --host, on this "
                         "machine); needed when no experiment is named, unless --quick "
                         "(default: off)")
    ap.add_argument("--classes", type=class_list, metavar="CLASS[,CLASS...]",
                    help="compare only these classes (of cfs, ule, bmq, muqss) with cfs, "
                         "the base of every comparison, which always runs; experiments "
                         "whose variants are not classes (wasted-cores) run as they are "
                         "(default: every class)")
    ap.add_argument("--rounds", type=command.positive_int,
                    help="rounds per experiment, every variant once per round "
                         "(default: 10; 1 with --quick)")
    ap.add_argument("--boots", type=command.positive_int, default=1,
                    help="boots per experiment (and topology) that share its rounds, so "
                         "the interval holds the variation between boots, not only between "
                         "the rounds of one boot (default: 1)")
    ap.add_argument("-t", "--topology",
                    help="VM topology for the experiments that take any (default: each "
                         "experiment's own; smt-spread and sysbench-scaling keep theirs)")
    ap.add_argument("--qemu-mode", choices=list(vm.QEMU_MODES),
                    help="mttcg, tcg or icount for every experiment (default: each "
                         "experiment's own, the one that measured the smallest spread; "
                         "see --list and vm.QEMU_MODES)")
    vm.add_accel_arg(ap)
    ap.add_argument("--config", choices=("base", "debug"),
                    help="kernel configuration (default: base; debug with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke sizes and 1 round on the debug kernel: checks that each "
                         "experiment completes and writes well-formed JSON and PNG")
    ap.add_argument("--out", type=Path, help="result folder (default: "
                    "results/<YYYY-MM-DD>-<git short rev>[-dirty]/)")
    ap.add_argument("--host", action="store_true",
                    help="run on this machine, which must run the patched kernel "
                         "(classes switched through /proc/sys/kernel/sched_class)")
    ap.add_argument("--no-build", action="store_true",
                    help="boot the kernel already built in build/ (stale guest programs are rebuilt)")
    ap.add_argument("--reference", action="append", default=[], metavar="NAME",
                    help="also run each experiment that compares classes on reference "
                         "kernel NAME (scripts/reference-kernel --name NAME, e.g. "
                         "prjc-bmq), as one more variant compared with the class it is "
                         "the original of; may be given more than once (default: none)")
    ap.add_argument("--list", action="store_true", help="list the experiments and exit")
    return ap


def class_list(text):
    """--classes: comma-separated names of CLASSES, in their order."""
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in CLASSES]
    if unknown or not names:
        what = f"unknown class {unknown[0]!r}" if unknown else "no class given"
        raise argparse.ArgumentTypeError(
            f"{what}: give one or more of {', '.join(CLASSES)}, separated by commas")
    return tuple(c for c in CLASSES if c in names)


def compare_parser():
    ap = command.Parser(prog="reproduce compare",
                 description="Two result folders side by side: medians and ratios, the "
                             "change B/A and its bootstrap 95 % interval.")
    ap.add_argument("a", type=Path, metavar="A", help="result folder (before)")
    ap.add_argument("b", type=Path, metavar="B", help="result folder (after)")
    return ap


def list_text():
    """--list: the experiments, what they reproduce, where and how long."""
    lines = []
    for exp in EXPERIMENTS.values():
        topos = ", ".join(exp.topologies) if exp.topologies else f"{exp.default_topology} or -t"
        minutes = sum(BOOT_SECONDS + 10 * exp.estimate(t, False)
                      for t in exp.topologies_for(None, False, False)) / 60
        where = "real hardware (--host)" if exp.host_only else f"{topos}, QEMU {exp.qemu_mode}"
        lines.append(f"{exp.name:20} {exp.title} [{exp.seed}] on {where}; "
                     f"about {minutes:.0f} min at 10 rounds (estimate)")
    return "\n".join(lines)


def default_names(a):
    """The experiments --all (or --quick alone) runs: the real-hardware
    ones only when named."""
    return [n for n, e in EXPERIMENTS.items() if not e.host_only]


def run_estimate(names, a):
    """Seconds the named experiments take with these arguments (estimate)."""
    rounds = a.rounds or (1 if a.quick else 10)
    return sum(BOOT_SECONDS * a.boots + rounds * EXPERIMENTS[n].estimate(t, a.quick)
               for n in names
               for t in EXPERIMENTS[n].topologies_for(a.topology, a.quick, a.host))


# What the report and figures import, checked before hours of runs.
REPORT_MODULES = ("matplotlib",)


def missing_modules():
    return [m for m in REPORT_MODULES if importlib.util.find_spec(m) is None]


def names_problem(a):
    """Hours of runs start only when asked for: experiments named, --all
    or --quick."""
    if a.experiments and a.all:
        return "--all runs every experiment: name none with it"
    if a.experiments or a.all or a.quick:
        return None
    names = default_names(a)
    return (f"name experiments (see --list) or give --all: all {len(names)} take "
            f"about {run_estimate(names, a) / 3600:.1f} h (estimate)")


def check_args(a, sched_class=SCHED_CLASS):
    """The first problem with the arguments as one line, or None: checked
    before anything is built or booted."""
    for name in a.experiments:
        if name not in EXPERIMENTS:
            return f"unknown experiment {name!r}: one of {', '.join(EXPERIMENTS)}"
        exp = EXPERIMENTS[name]
        if exp.host_only and not a.host:
            return f"experiment {name!r} runs only on real hardware: add --host"
        if exp.preflight and (problem := exp.preflight(a)):
            return problem
    if a.topology:
        try:
            vm.topology(a.topology)
        except ValueError as err:
            return str(err)
    if a.out and a.out.exists() and not a.out.is_dir():
        return f"--out {a.out} exists and is not a folder"
    for name in getattr(a, "reference", []):
        if a.host:
            return "--reference boots a reference kernel: not with --host"
        if reference.info_of(name) is None or not reference.kernel_image(name).exists():
            return (f"--reference {name}: no such reference kernel: build it with "
                    f"scripts/reference-kernel --patch FILE --name {name}")
    rounds = a.rounds or (1 if a.quick else 10)
    if a.boots > rounds:
        return f"--boots {a.boots} is more than the {rounds} round(s) to share between them"
    if a.host:
        given = [o for o, v in (("-t", a.topology), ("--qemu-mode", a.qemu_mode),
                                ("--boots", a.boots > 1),
                                ("--accel", a.accel != "auto"),
                                ("--config", a.config), ("--no-build", a.no_build)) if v]
        if given:
            return f"{', '.join(given)} do(es) not apply with --host"
        return host_refusal(sched_class)
    problem = vm.accel_problem(a.accel, a.qemu_mode)
    if problem:
        return problem
    config = a.config or ("debug" if a.quick else "base")
    if a.no_build and not paths.kernel_image(config).exists():
        return f"--no-build: {paths.kernel_image(config)} does not exist"
    return None


def folder_problem(folder):
    """Why FOLDER cannot be compared (None if it can): not a folder, no
    result document in it, or a document that validate() finds fault with."""
    docs = load_folder(folder) if folder.is_dir() else {}
    if not docs:
        return f"{folder} is not a result folder"
    for name, doc in docs.items():
        problems = validate(doc)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            return f"{folder}: the {name} document is malformed: {problems[0]}{more}"
    return None


def main_compare(argv):
    a = compare_parser().parse_args(argv)
    for folder in (a.a, a.b):
        problem = folder_problem(folder)
        if problem:
            print(f"reproduce compare: {problem}", file=sys.stderr)
            return 2
    print(compare(a.a, a.b))
    return 0


def spread_parser():
    ap = command.Parser(prog="reproduce spread",
                 description="The same experiments run in different QEMU modes (one "
                             "result folder each): how widely each comparison's rounds "
                             "scatter per folder, and the mode with the smallest spread.")
    ap.add_argument("folders", type=Path, nargs="+", metavar="FOLDER",
                    help="result folder (two or more)")
    ap.add_argument("--rounds", type=command.positive_int, default=None, metavar="N",
                    help="only each folder's first N rounds, so that folders of "
                         "different lengths compare alike (default: all)")
    return ap


def main_spread(argv):
    a = spread_parser().parse_args(argv)
    if len(a.folders) < 2:
        print("reproduce spread: give two or more result folders", file=sys.stderr)
        return 2
    for folder in a.folders:
        problem = folder_problem(folder)
        if problem:
            print(f"reproduce spread: {problem}", file=sys.stderr)
            return 2
    print(spread(a.folders, a.rounds))
    return 0


def docs_parser():
    ap = command.Parser(prog="reproduce docs",
                 description="The project's result pages: for the newest run of each "
                             "experiment in the result folders, its page, JSON and "
                             "figure in OUT, and OUT/index.rst. Given OUT itself, it "
                             "writes the pages again from the runs kept there.")
    ap.add_argument("folders", type=Path, nargs="+", metavar="FOLDER",
                    help="result folder of scripts/reproduce")
    ap.add_argument("--out", type=Path, default=paths.REPO / "docs" / "results",
                    metavar="DIR", help="where the pages go (default: docs/results)")
    return ap


def main_docs(argv):
    a = docs_parser().parse_args(argv)
    for folder in a.folders:
        problem = folder_problem(folder)
        if problem:
            print(f"reproduce docs: {problem}", file=sys.stderr)
            return 2
    if a.out.exists() and not a.out.is_dir():
        print(f"reproduce docs: --out {a.out} exists and is not a folder", file=sys.stderr)
        return 2
    for page in write_docs(a.folders, a.out):
        print(page)
    return 0


def main(argv=None):
    """scripts/reproduce; returns the exit status: command.USAGE for bad
    arguments, command.GUEST when a guest did not finish an experiment,
    command.FAILED when one gave no usable or a malformed result."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["compare"]:
        return main_compare(argv[1:])
    if argv[:1] == ["spread"]:
        return main_spread(argv[1:])
    if argv[:1] == ["docs"]:
        return main_docs(argv[1:])
    a = parser().parse_args(argv)
    if a.list:
        print(list_text())
        return 0
    problem = check_args(a) or names_problem(a)
    if problem:
        print(f"reproduce: {problem}", file=sys.stderr)
        return 2
    missing = missing_modules()
    if missing:
        print(f"reproduce: the report and figures need {', '.join(missing)}: run "
              f"scripts/setup (or python3 -m pip install {' '.join(missing)})", file=sys.stderr)
        return 1
    names = list(dict.fromkeys(a.experiments)) or default_names(a)
    experiments = [with_classes(EXPERIMENTS[n], a.classes) for n in names]
    rounds = a.rounds or (1 if a.quick else 10)
    if rounds < stats.MIN_ROUNDS and not a.quick:
        print(f"reproduce: {rounds} rounds give medians but no interval (needs "
              f"{stats.MIN_ROUNDS})", file=sys.stderr)
    folder = (a.out or result_dir()).resolve()
    workdir = paths.BUILD / "reproduce" / folder.name
    if a.host:
        runner = HostRunner(workdir)
    else:
        config = a.config or ("debug" if a.quick else "base")
        if not a.no_build and build.build(config) != 0:
            print("reproduce: kernel build failed", file=sys.stderr)
            return 1
        vm.set_accel(a.accel)
        runner = GuestRunner(config, a.qemu_mode or "mttcg", workdir)
    references = {name: reference.info_of(name) for name in dict.fromkeys(a.reference)}
    progress = Progress(plan_of(experiments, rounds, a.quick, a.topology, a.host, a.boots,
                                references))
    # Stopped with the run: a caller in the same process (the tests) must
    # not get its lines on its own stderr later.
    stop = threading.Event()
    heartbeat = threading.Thread(target=progress.heartbeat, args=(60.0, stop), daemon=True)
    heartbeat.start()
    ctx = Context(rounds, a.quick, runner, progress,
                  boots=a.boots, references=references)
    failed, status = [], command.OK
    try:
        for index, exp in enumerate(experiments):
            done = run_and_save(exp, index, ctx, a, folder, argv)
            if done is not True:
                failed.append(exp.name)
                status = max(status, command.GUEST if done == command.GUEST else command.FAILED)
    finally:
        stop.set()
        heartbeat.join()
    print(f"reproduce: {len(experiments) - len(failed)} of {len(experiments)} experiments "
          f"done in {duration(time.monotonic() - progress.start)}; report: "
          f"{folder / 'report.md'}; guest files: {workdir}", file=sys.stderr)
    if failed:
        print(f"reproduce: failed: {', '.join(failed)}", file=sys.stderr)
    return status


def run_and_save(exp, index, ctx, a, folder, argv):
    """Run one experiment, write its JSON, PNG and the report, and check
    them; True when done, else command.GUEST (a guest did not finish) or
    False (no usable result, a malformed one, or a failed run with
    --quick). The other experiments still run."""
    start = time.monotonic()
    if not a.host:
        # KVM replaces the emulation an experiment would choose.
        ctx.runner.mode = a.qemu_mode or ("mttcg" if a.accel == "kvm" else exp.mode_for(a.quick))
    try:
        outcome, topologies = run_experiment(exp, index, ctx, a.topology, a.host)
    except vm.GuestError as err:
        print(f"reproduce: {exp.name} failed: guest failure: {err}", file=sys.stderr)
        return command.GUEST
    except (ReproduceError, build.BuildError, OSError) as err:
        print(f"reproduce: {exp.name} failed: {err}", file=sys.stderr)
        return False
    meta = metadata(exp, release=outcome.release, config=ctx.runner.config,
                    config_sha256=ctx.runner.config_sha256(), topologies=topologies,
                    qemu_mode="kvm" if ctx.runner.accel == "kvm" else ctx.runner.mode,
                    rounds=ctx.rounds, quick=ctx.quick, boots=ctx.boots,
                    accel=ctx.runner.accel,
                    argv=["scripts/reproduce", *argv])
    meta["seconds"] = round(time.monotonic() - start)
    sysctls = reference.original_sysctls(references_for(exp, ctx.references))
    if sysctls and not a.host:
        meta["sysctls"] = {f"kernel.{k}": v for k, v in sysctls.items()}
    refs = {name: {**info, "like": reference.LIKE.get(info.get("scheduler")),
                   "kernel_release": outcome.references.get(name, {}).get("kernel_release", ""),
                   "config_sha256": config_hash(reference.ROOT / name / "obj" / ".config")}
            for name, info in references_for(exp, ctx.references).items()}
    doc = document(exp, outcome.runs, outcome.benches, outcome.commands,
                   outcome.failures, meta, refs)
    json_path, png, _ = save(doc, folder)
    problems = validate(json.loads(json_path.read_text())) + check_png(png)
    if ctx.quick and outcome.failures:
        problems.append(f"failed runs: {outcome.failures}")
    print(f"\n{exp.name} ({exp.seed}): {json_path}\n{table(doc)}")
    for problem in problems:
        print(f"reproduce: {exp.name}: {problem}", file=sys.stderr)
    return not problems
