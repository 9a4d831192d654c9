"""The ids the parsers and the gateway make (``parsing.ids``): from the operating system's
random bytes, never repeated across threads or a fork, and not given by a seeded generator."""

from __future__ import annotations

import os
import random
import re
import threading
from collections import Counter

from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolbridge.gateway.fronts.ids import client_call_id, new_id, safe_id, upstream_call_id
from toolbridge.parsing.ids import ALNUM, random_alnum, random_hex
from toolbridge.parsing.stream import random_call_id
from tests.budget import examples


def test_shapes() -> None:
    assert re.fullmatch(r"call_[0-9a-f]{24}", random_call_id())
    assert re.fullmatch(r"resp_[0-9A-Za-z]{24}", new_id("resp_"))
    call = client_call_id("call_", "functions.read:0")
    assert upstream_call_id("call_", call) == "functions.read:0"


_SAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
# Any character (surrogates too), and often the safe ones and their look-alikes: other scripts'
# letters and digits (which ``str.isalnum`` takes), and what is near them in ASCII.
_ANY = st.one_of(st.sampled_from(_SAFE), st.characters(exclude_categories=()),
                 st.sampled_from("\u0663\u00b2\u2167\u00e9\u01c5\uff21\u0410 .:/+=\x00\n\x7f\ud800"))


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(_ANY))
@example("")
@example("-")
@example("_")
@example("call_\u0663")
@example("\ud800")
def test_a_safe_id_is_what_the_pattern_matches(text: str) -> None:
    """``safe_id`` takes exactly the strings ``[A-Za-z0-9_-]+`` matches whole: the ids sent
    with ``r`` as they are (any other is base64url-encoded), and taken back so."""
    assert safe_id(text) == bool(re.fullmatch(r"[A-Za-z0-9_-]+", text))
    if any("\ud800" <= c <= "\udfff" for c in text):
        return  # (a lone surrogate: no UTF-8 carries it, nor an id JSON gives)
    call = client_call_id("toolu_", text)
    assert call[len("toolu_") + 8] == ("r" if safe_id(text) else "b")
    assert upstream_call_id("toolu_", call) == (text or call)


def test_ids_do_not_follow_the_random_module() -> None:
    """Seeding ``random`` the same way twice gives different ids: they do not come from it."""
    random.seed(7)
    first = [new_id("x"), random_call_id()]
    random.seed(7)
    assert [new_id("x"), random_call_id()] != first


def test_no_id_repeats_across_threads() -> None:
    """Many threads cutting ids from the one pool at once get distinct ids (each character is
    handed out once), across several refills of the pool."""
    made: list[list[str]] = [[] for _ in range(8)]

    def work(out: list[str]) -> None:
        for _ in range(2000):
            out.append(random_alnum(24))
            out.append(random_hex(24))

    threads = [threading.Thread(target=work, args=(out,)) for out in made]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for out in made for i in out]
    assert len(every) == len(set(every)) == 8 * 4000


def test_the_alphabet_is_used_evenly() -> None:
    """Each of the 62 characters is about equally likely (a byte-modulo bias would make the
    first 8 a quarter more frequent than the rest)."""
    counts = Counter(random_alnum(200) for _ in range(1000))
    counts = Counter("".join(counts.elements()))
    assert set(counts) == set(ALNUM)
    mean = 200_000 / 62
    low = [counts[c] for c in ALNUM[:8]]
    high = [counts[c] for c in ALNUM[8:]]
    assert abs(sum(low) / 8 - mean) < 0.1 * mean and abs(sum(high) / 54 - mean) < 0.1 * mean


def test_a_forked_child_does_not_repeat_its_parents_ids() -> None:
    random_alnum(1)  # the pool holds characters now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, to the parent
        try:
            os.write(write, (random_alnum(24) + random_hex(24)).encode())
        finally:
            os._exit(0)
    os.close(write)
    child = os.read(read, 100).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert len(child) == 48
    assert child != random_alnum(24) + random_hex(24)
