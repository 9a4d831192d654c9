"""How a server process's C allocator keeps and returns memory (glibc's ``mallopt``).

The gateway and the bench's servers on its stack (the floor, the bound) set it alike at start,
so that a comparison between them measures their work and not their allocators.

- Blocks over ``LARGE_BLOCK`` are mapped on their own and given back when freed. By default
  glibc raises that threshold to the largest block freed so far (up to 32 MB): after one large
  request or answer, blocks of that size come from the heap, and each large event can leave the
  process at a new high-water mark (``toolbridge bench --soak`` measures it).
- Fixing that threshold also fixes the trim threshold, glibc's other adaptive setting, at its
  128 KB default: free space over 128 KB at the heap's top goes back to the system at once. A
  server holding a few dozen answers of tens of kilobytes crosses that line on nearly every
  request, and gets the pages back a moment later, each faulted in and zeroed by the kernel
  again: a quarter to a third of the CPU time of a 33k-character answer (``bench --plain``). So
  free space at the top is kept up to ``KEPT_TOP``, the most a process holds unused there.

Elsewhere (other C libraries, other systems) nothing is done. Where the operator set glibc's
own knobs (``MALLOC_*_`` variables, ``GLIBC_TUNABLES``), those are left as they are.
"""

from __future__ import annotations

import ctypes
import os
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
LARGE_BLOCK = 1 << 20  # bytes: a block this large is mapped on its own, returned when freed
KEPT_TOP = 32 << 20  # bytes: free space at the heap's top kept for the next requests
OPERATORS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES")


def tune() -> bool:
    """Set this process's allocator as the module says; whether it was set."""
    if not sys.platform.startswith("linux") or any(name in os.environ for name in OPERATORS):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK)) and bool(mallopt(M_TRIM_THRESHOLD, KEPT_TOP))
