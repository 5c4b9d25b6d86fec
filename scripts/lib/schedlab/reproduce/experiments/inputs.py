"""The applications' inputs, made on the host once: the Lua tree make
builds, the video x264 encodes and the corpus the compressors take
(apps_series.sh, and class_bench.sh's muqss suite)."""

import hashlib
import random
from pathlib import Path

from ... import paths
from ..registry import ReproduceError

# Debian's Lua 5.4 source (the real C tree that make builds), pinned.
LUA_URL = "http://deb.debian.org/debian/pool/main/l/lua5.4/lua5.4_5.4.4.orig.tar.gz"
LUA_SHA256 = "164c7849653b80ae67bec4b7473b884bf5cc8d2dca05653475ec2ed27b9ebf61"
# The raw video x264 encodes: 24 frames of 320x240, 4:2:0.
VIDEO_SIZE, VIDEO_FRAMES = (320, 240), 24
# The text corpus the compressors take: 8 MiB of words.
CORPUS_BYTES = 8 << 20


def write_video(path, size=VIDEO_SIZE, frames=VIDEO_FRAMES):
    """A deterministic YUV4MPEG2 clip: gradients that move from frame to
    frame plus fixed noise, so the encoder has motion and texture."""
    w, h = size
    rnd = random.Random(17)
    noise = bytes(rnd.randrange(24) for _ in range(w * h))
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F24:1 Ip A1:1 C420jpeg\n".encode())
        for k in range(frames):
            luma = bytearray(w * h)
            for j in range(h):
                base, off = (2 * j + 5 * k) & 255, (3 * k) % w
                for x in range(w):
                    luma[j * w + x] = (((x + off) >> 1) + base + noise[j * w + x]) & 255
            f.write(b"FRAME\n" + bytes(luma) + bytes([(128 + k) & 255]) * (w * h // 4) +
                    bytes([(128 - k) & 255]) * (w * h // 4))


def write_corpus(path, size=CORPUS_BYTES):
    """Deterministic text: lines of words drawn with a skewed frequency
    from a fixed vocabulary, compressible as prose is."""
    rnd = random.Random(5)
    words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randrange(2, 10)))
             for _ in range(5000)]
    out, total = [], 0
    while total < size:
        line = " ".join(words[int(rnd.paretovariate(1.2)) % len(words)] for _ in range(12)) + "\n"
        out.append(line)
        total += len(line)
    Path(path).write_text("".join(out))


def apps_inputs(folder=None, url=LUA_URL, sha256=LUA_SHA256):
    """The applications' inputs in `folder` (build/apps), made once: the
    Lua tree (downloaded from Debian and checked against its hash), the
    video and the corpus. ReproduceError when the download fails."""
    folder = Path(folder or paths.BUILD / "apps")
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "lua" / "src" / "Makefile").exists():
        import tarfile
        import urllib.request
        tarball = folder / Path(url).name
        try:
            if not tarball.exists():
                with urllib.request.urlopen(url, timeout=60) as r:
                    tarball.write_bytes(r.read())
        except OSError as e:
            raise ReproduceError(f"cannot download {url}: {e}") from None
        if hashlib.sha256(tarball.read_bytes()).hexdigest() != sha256:
            tarball.unlink()
            raise ReproduceError(f"{url} does not have the expected sha256 {sha256}")
        with tarfile.open(tarball) as tar:
            top = tar.getnames()[0].split("/")[0]
            tar.extractall(folder, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        (folder / top).rename(folder / "lua")
    if not (folder / "video.y4m").exists():
        write_video(folder / "video.y4m.part")
        (folder / "video.y4m.part").rename(folder / "video.y4m")
    if not (folder / "corpus.txt").exists():
        write_corpus(folder / "corpus.txt.part")
        (folder / "corpus.txt.part").rename(folder / "corpus.txt")
    return folder
