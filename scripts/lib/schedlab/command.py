"""What every command in scripts/ shares: one exit-status scheme, help that
shows each option's default and the statuses, and argument checks that
fail in one line before anything is installed, extracted, built or booted.
"""

import argparse
import sys
import textwrap
from pathlib import Path

# Exit statuses. A guest command that exits non-zero gets its own status
# (COMMAND, its own value on stderr), so a command exiting 3 is not taken
# for a guest that never finished.
OK = 0
FAILED = 1
USAGE = 2
GUEST = 3
COMMAND = 4

STATUS_TEXT = {
    OK: "done",
    FAILED: "the work failed (a build, a tree operation, a benchmark without results)",
    USAGE: "usage error: a bad argument; nothing was installed, built or booted",
    GUEST: "guest failure: the guest did not run its command to completion "
           "(timeout, kernel splat, QEMU died, no exit status)",
    COMMAND: "the guest's command exited non-zero; stderr says \"guest command "
             "exited with status N\"",
}


# Width of the exit-status lines in --help.
HELP_WIDTH = 78


def epilog(*statuses):
    """The exit statuses a command can end with (default: all), for its --help."""
    lines = ["exit status:"]
    for status in statuses or sorted(STATUS_TEXT):
        lines += textwrap.wrap(STATUS_TEXT[status], HELP_WIDTH, initial_indent=f"  {status}  ",
                               subsequent_indent="     ")
    return "\n".join(lines)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default after its help, unless the help states it or
    there is none to show (flags; None, where the help says what happens
    then). Text with line breaks (docstrings, the exit statuses) is kept
    as written, other text is filled."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or "(default" in action.help:
            return action.help
        if action.default == "":
            return action.help + " (default: none)"
        return super()._get_help_string(action)

    def _fill_text(self, text, width, indent):
        if "\n" in text.strip():
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Parser(argparse.ArgumentParser):
    """Usage errors as one line naming the bad value, exit status USAGE."""

    def __init__(self, *args, **kw):
        kw.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kw)

    def error(self, message):
        self.exit(USAGE, f"{self.prog}: {message} (see --help)\n")


def usage_error(prog, message):
    """Report a problem found after parsing (a combination of options, a
    missing file) like a parser error; returns USAGE."""
    print(f"{prog}: {message} (see --help)", file=sys.stderr)
    return USAGE


def guest_status(prog, status, seconds=None):
    """Report the guest command's own exit status on stderr and map it to
    this scheme: OK, or COMMAND when it is not 0."""
    took = f" after {seconds:.1f} s" if seconds is not None else ""
    print(f"{prog}: guest command exited with status {status}{took}", file=sys.stderr)
    return OK if status == 0 else COMMAND


def _number(text, convert, low, inclusive, says):
    """argparse type body: `text` as convert() of at least (or above) low,
    finite, else an error naming the value."""
    try:
        value = convert(text)
    except ValueError:
        value = None
    if value is None or value != value or value == float("inf") or \
            (value < low if inclusive else value <= low):
        raise argparse.ArgumentTypeError(f"{says}: {text!r}")
    return value


def positive_int(text):
    return _number(text, int, 0, False, "not a positive whole number")


def non_negative_int(text):
    return _number(text, int, 0, True, "not a whole number >= 0")


def positive_float(text):
    return _number(text, float, 0, False, "not a positive number")


def existing_file(text):
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    return path


def folder(text):
    """A folder to write into: may not exist yet, but may not be a file."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"not a folder: {text!r}")
    return path
