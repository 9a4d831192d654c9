"""The server processes' allocator (``toolbridge.gateway.allocator``): free space at the heap's
top is kept for the next requests instead of going back to the system on each one, large
blocks still go back, and glibc knobs an operator set are left alone. Each case runs in its own
interpreter: the setting is the process's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                                reason="glibc's mallopt: Linux with glibc only")

# Tunes the allocator or not, then runs the steps named, printing after each how far the
# resident size fell when its memory was freed, in MB. ``large``: one 8 MB block. ``heap``: 16 MB
# in 64 KB blocks (from the heap, under either mmap threshold). A large block goes first where
# both run: once the heap's top holds free space, a large block is carved from it.
PROBE = """
import sys
from toolbridge.gateway import allocator

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

def fell(make):
    held = make()
    before = rss()
    del held[:]
    return round(before - rss(), 1)

STEPS = {"large": lambda: [b"x" * (8 << 20)], "heap": lambda: [b"x" * (64 << 10) for _ in range(256)]}
print(allocator.tune() if sys.argv[1] == "tuned" else "-")
for step in sys.argv[2:]:
    print(fell(STEPS[step]))
"""


def _probe(*argv: str, **env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], env={**clean, **env}, capture_output=True,
                         text=True, timeout=60, check=True)
    return out.stdout.split()


def test_heap_top_is_kept_and_large_blocks_go_back():
    set_, large_fell, heap_fell = _probe("tuned", "large", "heap")
    assert set_ == "True"
    assert float(large_fell) > 7.0  # a large block is mapped on its own and returned
    assert float(heap_fell) < 1.0  # kept for the next requests


def test_untuned_process_returns_the_heap_top():  # what tune() changes: glibc's default trims it
    _, heap_fell = _probe("plain", "heap")
    assert float(heap_fell) > 8.0


@pytest.mark.parametrize("knob", ["MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_",
                                  "GLIBC_TUNABLES"])
def test_operator_knobs_are_left_alone(knob):
    value = "glibc.malloc.check=0" if knob == "GLIBC_TUNABLES" else "131072"
    assert _probe("tuned", **{knob: value}) == ["False"]
