"""The ids clients see, and the upstream's call ids they carry (every front's).

A client's call id is a prefix (``toolu_``, ``call_``) + 8 random characters + the upstream's call
id (``r`` and the id as it is when it is made of ``[A-Za-z0-9_-]``, else ``b`` and its base64url),
so the ids a client sees are unique across a conversation even where an upstream repeats its own
(``functions.read:0`` each turn), and the upstream is sent back exactly the ids it gave: no state
is kept, the id carries it. An id of another origin is sent upstream as it is. Every random
character comes from the operating system's random bytes (``parsing.ids``): ids are not
predictable from the ids already seen. A whole answer's ids are cut from one draw of random
characters (``draw``: one take of the pool for all of them, not one each).
"""

from __future__ import annotations

import base64

from ...parsing.ids import random_alnum

_DASHES = bytes.maketrans(b"-_", b"aa")  # (``safe_id``: counted as letters)
NONCE = 8  # random characters of a client's call id
ID = 24  # random characters of any other id (``new_id``)
draw = random_alnum  # ``n`` random characters, to cut several ids from


def client_call_id(prefix: str, call_id: str, nonce: str | None = None) -> str:
    """The client's id for an upstream call id (see the module docstring); ``nonce``: its
    ``NONCE`` random characters, when the caller drew them with others (``draw``)."""
    if nonce is None:
        nonce = random_alnum(NONCE)
    if safe_id(call_id):
        return f"{prefix}{nonce}r{call_id}"
    encoded = base64.urlsafe_b64encode(call_id.encode()).decode().rstrip("=")
    return f"{prefix}{nonce}b{encoded}"


def upstream_call_id(prefix: str, client_id: str) -> str:
    """The upstream's call id a client id made by ``client_call_id(prefix, ...)`` carries; any
    other id as it is."""
    head = len(prefix) + NONCE
    if not client_id.startswith(prefix) or len(client_id) <= head + 1:
        return client_id
    kind, payload = client_id[head], client_id[head + 1:]
    if kind == "r" and safe_id(payload):
        return payload
    if kind == "b":
        try:
            decoded = base64.b64decode(payload + "=" * (-len(payload) % 4), altchars=b"-_", validate=True)
            return decoded.decode() or client_id
        except (ValueError, UnicodeDecodeError):
            return client_id
    return client_id


def safe_id(text: str) -> bool:
    """Whether ``text`` is made of ``[A-Za-z0-9_-]`` alone, and is not empty: ASCII, and its
    bytes letters and digits once ``-`` and ``_`` are counted as letters (``bytes.isalnum`` is
    ASCII's own; ``str.isalnum`` is not, it takes other scripts' letters and digits too). Three
    C methods: half a regex's ``fullmatch`` (1.3k instructions against 2.3k, an id per call)."""
    return text.isascii() and text.encode().translate(_DASHES).isalnum()


def new_id(prefix: str, length: int = ID) -> str:
    """A fresh id: ``prefix`` and ``length`` random characters."""
    return prefix + random_alnum(length)
