"""Where things live: the repository, the git-ignored build folder, the tree."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
# In-guest test programs (TAP), run from the host filesystem over 9p.
GUEST_TESTS = REPO / "tools" / "testing" / "sched"
BUILD = Path(os.environ.get("SCHEDLAB_BUILD", REPO / "build")).resolve()
TREE = BUILD / "linux"
SOURCE_TARBALL = Path(os.environ.get("SCHEDLAB_SOURCE",
                                     "/usr/src/linux-source-6.1.tar.xz"))

# Repository folders whose files are new kernel files, linked into the
# tree at the same relative path.
OVERLAY_ROOTS = ("kernel", "include", "Documentation")


def obj_dir(config):
    """Out-of-tree build folder for one configuration (make O=...)."""
    return BUILD / f"obj-{config}"


def kernel_image(config):
    return obj_dir(config) / "arch/x86/boot/bzImage"
