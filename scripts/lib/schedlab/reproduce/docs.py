"""scripts/reproduce docs: the project's pages of results (docs/results/)
written from result folders, so that a figure in the documentation is
what a command measured and can be written again from the raw runs kept
beside it."""

import json
import re
import shutil
from pathlib import Path

from .document import load_folder
from .report import section, table_rows

INDEX = "index.rst"
GENERATED = (".. This page is written by scripts/reproduce docs from {json}; "
             "edit the command, not the page.")


def rst_text(text):
    """`text` with the characters reStructuredText would read as markup
    escaped."""
    return re.sub(r"([\\*`_|])", r"\\\1", str(text))


def rst_table(heads, rows):
    """A list-table of `heads` and `rows` (lists of cells)."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for cells in [heads] + rows:
        lines.append(f"   * - {rst_text(cells[0])}")
        lines += [f"     - {rst_text(cell)}" for cell in cells[1:]]
    return "\n".join(lines)


def heading(text, char):
    return [text, char * len(text)]


def rst_page(doc):
    """One experiment's page: what the report says, as reStructuredText."""
    part = section(doc)
    meta = doc["metadata"]
    dirty = " (dirty tree)" if meta.get("git_dirty") else ""
    lines = [GENERATED.format(json=f"{doc['experiment']}.json"), ""]
    lines += heading(rst_text(part["title"]), "=") + [""]
    for text in part["paragraphs"]:
        lines += [rst_text(text), ""]
    lines += [rst_text(f"Revision {meta['git_revision']}{dirty}, {meta['date']}, host CPU "
                       f"{meta['host_cpu']}; command: {meta['command_line']}."), ""]
    lines += [rst_table(*table_rows(doc, doc.get("summary"))), ""]
    for text in part["notes"]:
        lines += [rst_text(text), ""]
    lines += [f".. image:: {part['figure']}", ""]
    return "\n".join(lines)


def newest(folders):
    """{experiment: (document, its folder)}, the newest run of each
    experiment across `folders` (by the document's date)."""
    found = {}
    for folder in folders:
        for name, doc in load_folder(folder).items():
            if name not in found or doc["metadata"]["date"] > found[name][0]["metadata"]["date"]:
                found[name] = (doc, Path(folder))
    return found


def write_docs(folders, out):
    """Write `out`/EXPERIMENT.rst, .json and .png for the newest run of
    each experiment in `folders`, and `out`/index.rst listing every page
    there; `out` may be among `folders` (the pages are written again from
    the runs kept there). Returns the pages written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    pages = []
    for name, (doc, folder) in newest(folders).items():
        png = folder / f"{name}.png"
        if folder.resolve() != out.resolve():
            (out / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
            if png.exists():
                shutil.copyfile(png, out / png.name)
        page = out / f"{name}.rst"
        page.write_text(rst_page(doc))
        pages.append(page)
    names = sorted(p.stem for p in out.glob("*.rst") if p.name != INDEX)
    index = [GENERATED.format(json="the .json files of this folder"), ""]
    index += heading("Results", "=") + [""]
    index += ["Each page is one experiment's newest run that ``scripts/reproduce docs``",
              "was given, written from the raw runs kept beside it (the ``.json``).", ""]
    index += [f"- `{rst_text(name)} <{name}.rst>`__" for name in names] + [""]
    (out / INDEX).write_text("\n".join(index))
    return pages
