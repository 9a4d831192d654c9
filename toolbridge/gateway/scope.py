"""Whose a stored thing is: the caller's scope, and the keys derived from the gateway's secret.

Everything the gateway keeps for a caller (stored responses and their conversations today) is
keyed by ``(scope, id)``, never by the id alone, so that one caller's ids open nothing of
another's, and a lookup in another scope is indistinguishable from an unknown id. The scope is
a string, ready to prefix a key in a shared store:

- with ``--api-key``: every client that passes the check holds the one key, so they share one
  scope (``k`` and the key's tag);
- without it: the credential the client sends, which is what the upstream is given (the token of
  ``Authorization: Bearer``, the whole field for another scheme, else ``x-api-key``):
  ``c`` and its tag;
- with no credential at all: ``ANONYMOUS``, which no tag equals: a client without a credential
  sees none of the entries made with one (nor the other way round).

A tag is a keyed hash (BLAKE2b, 128 bits, keyed by ``derive_key(secret, "scope")``): the raw
credential is read from the request's header and kept nowhere. With ``--responses-secret`` every
process and restart gives a credential the same scope (what a store shared between processes
needs); without it each start has its own key.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .http.server import Request

ANONYMOUS = "anonymous"


def derive_key(secret: bytes, purpose: str) -> bytes:
    """A 32-byte key for ``purpose`` from the whole ``secret``: HMAC-SHA256 of the purpose under
    the secret's SHA-256, so that every byte of a secret of any length counts (BLAKE2b's own key
    takes at most 64 bytes) and keys for different purposes are unrelated."""
    key = hashlib.sha256(secret).digest()
    return hmac.new(key, b"toolbridge/" + purpose.encode(), hashlib.sha256).digest()


def credential(req: Request) -> bytes:
    """The credential a request carries (empty when none): see the module docstring."""
    field = (req.header(b"authorization") or b"").strip()
    if field:
        scheme, _, token = field.partition(b" ")
        return token.strip() if scheme.lower() == b"bearer" else field
    return (req.header(b"x-api-key") or b"").strip()


class Scopes:
    """The scope of each request, for one gateway process."""

    def __init__(self, secret: bytes, api_key: str = "") -> None:
        self._key = derive_key(secret, "scope")
        self._shared = "k" + self._tag(api_key.encode()) if api_key else None

    def of(self, req: Request | None) -> str:
        """``req``'s scope (``ANONYMOUS`` for no request: an in-process caller)."""
        if self._shared is not None:
            return self._shared
        secret = credential(req) if req is not None else b""
        return "c" + self._tag(secret) if secret else ANONYMOUS

    def _tag(self, secret: bytes) -> str:
        return hashlib.blake2b(secret, key=self._key, digest_size=16).hexdigest()
