"""scripts/reproduce's JSON document: what one experiment reproduces,
its metadata, every raw run and the summary derived from them; the
checks --quick and compare apply to it, and a result folder's
documents."""

import json
import math
from pathlib import Path

from .registry import EXPERIMENTS
from .summary import summarise

SCHEMA = 1
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


METADATA_KEYS = ("git_revision", "git_dirty", "kernel_release", "config", "config_sha256",
                 "topology", "classes", "features", "host_cpu", "qemu_mode", "rounds",
                 "quick", "date", "command_line")


def document(exp, outcome_runs, benches, commands, failures, meta, references=None):
    """The JSON of one experiment: what it reproduces, the metadata, every
    raw run and the summary derived from them. `references` (name: what
    scripts/reference-kernel recorded) adds each reference kernel's
    variant after the experiment's own."""
    references = references or {}
    doc = {"schema": SCHEMA, "experiment": exp.name, "title": exp.title, "seed": exp.seed,
           "published": exp.published, "variants": list(exp.variants) + list(references),
           "base": exp.base, "metadata": meta, "benches": benches, "commands": commands,
           "failures": failures, "runs": outcome_runs}
    if references:
        doc["references"] = references
    doc["summary"] = summarise(doc)
    return doc


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def validate(doc):
    """Problems of a result document (empty when well formed): the checks
    --quick applies to every experiment it runs, and compare to what it
    reads."""
    problems = []
    for key, kind in (("schema", int), ("experiment", str), ("seed", str),
                      ("published", str), ("variants", list), ("base", str),
                      ("metadata", dict), ("benches", dict), ("runs", list),
                      ("failures", list), ("commands", dict)):
        if not isinstance(doc.get(key), kind):
            problems.append(f"{key}: missing or not a {kind.__name__}")
    if problems:
        return problems
    if doc["schema"] != SCHEMA:
        problems.append(f"schema {doc['schema']}, expected {SCHEMA}")
    missing = [k for k in METADATA_KEYS if k not in doc["metadata"]]
    if missing:
        problems.append(f"metadata lacks {', '.join(missing)}")
    if doc["base"] not in doc["variants"]:
        problems.append(f"base {doc['base']!r} is not a variant")
    if not doc["runs"]:
        problems.append("no runs")
    for i, run in enumerate(doc["runs"]):
        if run.get("bench") not in doc["benches"]:
            problems.append(f"run {i}: unknown bench {run.get('bench')!r}")
        if run.get("variant") not in doc["variants"]:
            problems.append(f"run {i}: unknown variant {run.get('variant')!r}")
        if not isinstance(run.get("round"), int) or run["round"] < 1:
            problems.append(f"run {i}: round {run.get('round')!r}")
        if not _number(run.get("value")):
            problems.append(f"run {i}: value {run.get('value')!r}")
    for name, info in doc["benches"].items():
        if info.get("compare") not in ("ratio", "difference") or not info.get("unit"):
            problems.append(f"bench {name}: compare/unit {info}")
    for name, ref in doc.get("references", {}).items():
        if name not in doc["variants"] or not isinstance(ref, dict) or \
                not ref.get("patch_sha256"):
            problems.append(f"reference {name}: not a variant, or no patch_sha256")
    return problems


def check_png(path):
    """Problems of a plot file: it must exist and be a PNG with pixels."""
    path = Path(path)
    if not path.is_file():
        return [f"{path.name}: missing"]
    data = path.read_bytes()
    if not data.startswith(PNG_MAGIC) or len(data) < 100:
        return [f"{path.name}: not a PNG"]
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return [] if width > 0 and height > 0 else [f"{path.name}: empty image"]


def load_folder(folder):
    """{experiment: document} of a result folder, in registry order."""
    docs = {}
    for path in sorted(Path(folder).glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue
        if isinstance(doc, dict) and doc.get("schema") and doc.get("experiment"):
            docs[doc["experiment"]] = doc
    order = list(EXPERIMENTS)
    return dict(sorted(docs.items(), key=lambda kv: (
        order.index(kv[0]) if kv[0] in order else len(order), kv[0])))
