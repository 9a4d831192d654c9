"""Reasoning sealed into ``encrypted_content``, so that a conversation keeps its reasoning with
``store: false`` (what Codex sends): no state on the gateway, the item carries it.

A sealed item is ``tb1.`` and the base64url of a 16-byte nonce, the reasoning text compressed
(zlib) and enciphered with a keystream (BLAKE2b keyed with the encryption key, over the nonce
and a block counter), and a 16-byte HMAC-SHA256 tag over all of it (encrypt-then-MAC); both keys
are derived from the whole secret (``scope.derive_key``). It is opaque to the client, and any
change to it is seen: an item that does not verify (tampered, or sealed by a gateway with
another key) is dropped with a log line and counted, and the turn goes on without that
reasoning (counted in ``toolbridge_reasoning_unsealed_total``; ``--responses-secret`` gives
every process and restart one key; without it each start makes its own). Reasoning longer than
``MAX_TEXT`` characters keeps its last ``MAX_TEXT``; a sealed string longer than ``MAX_SEALED``
is refused (400). A conversation summary (``compaction``) is sealed the same way.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import zlib
from collections.abc import Callable

from ...scope import derive_key
from ...turn import RequestError

log = logging.getLogger("toolbridge.gateway")

PREFIX = "tb1."
MAX_TEXT = 256 << 10
MAX_SEALED = 1 << 20
_NONCE, _TAG, _BLOCK = 16, 16, 64


class Sealer:
    """Seals and opens reasoning with keys derived from one secret."""

    def __init__(self, secret: bytes | None = None, on_reject: Callable[[], None] | None = None) -> None:
        secret = secret or os.urandom(32)
        self._on_reject = on_reject  # told of each item that does not verify (the metrics)
        self._enc = derive_key(secret, "seal/encrypt")  # (from the whole secret, whatever its length)
        self._mac = derive_key(secret, "seal/authenticate")

    def seal(self, text: str) -> str:
        if len(text) > MAX_TEXT:
            text = text[-MAX_TEXT:]
        nonce = os.urandom(_NONCE)
        body = self._cipher(nonce, zlib.compress(text.encode(), 6))
        tag = hmac.new(self._mac, nonce + body, hashlib.sha256).digest()[:_TAG]
        return PREFIX + base64.urlsafe_b64encode(nonce + body + tag).decode().rstrip("=")

    def open(self, sealed: str, where: str) -> str | None:
        """The text of an item this gateway sealed; None (logged and counted) when it does not verify."""
        text, why = self.read(sealed, where)
        return text if text is not None else self._reject(where, why)

    def read(self, sealed: str, where: str) -> tuple[str | None, str]:
        """The text of an item this gateway sealed, or None and why it does not verify (neither
        logged nor counted: a compaction item that does not verify is refused instead)."""
        if len(sealed) > MAX_SEALED:
            raise RequestError(f"{where}.encrypted_content: longer than {MAX_SEALED} characters",
                               param=f"{where}.encrypted_content")
        if not sealed.startswith(PREFIX):
            return None, "not sealed by toolbridge"
        try:
            raw = base64.urlsafe_b64decode(sealed[len(PREFIX):] + "=" * (-len(sealed) % 4))
        except ValueError:
            return None, "not base64url"
        if len(raw) < _NONCE + _TAG:
            return None, "too short"
        nonce, body, tag = raw[:_NONCE], raw[_NONCE:-_TAG], raw[-_TAG:]
        expected = hmac.new(self._mac, nonce + body, hashlib.sha256).digest()[:_TAG]
        if not hmac.compare_digest(tag, expected):
            return None, "its tag does not verify (changed, or sealed with another key)"
        try:
            inflater = zlib.decompressobj()
            text = inflater.decompress(self._cipher(nonce, body), MAX_TEXT * 4)
            return text.decode(), ""
        except (zlib.error, UnicodeDecodeError):
            return None, "its content cannot be read"

    def _reject(self, where: str, why: str) -> None:
        if self._on_reject is not None:
            self._on_reject()
        log.warning("responses: %s.encrypted_content is dropped: %s", where, why)
        return None

    def _cipher(self, nonce: bytes, data: bytes) -> bytes:
        """``data`` XORed with the keystream of ``nonce`` (the same call enciphers and deciphers)."""
        blocks = -(-len(data) // _BLOCK)
        stream = b"".join(hashlib.blake2b(nonce + i.to_bytes(8, "big"), key=self._enc).digest()
                          for i in range(blocks))[:len(data)]
        return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(data), "big")
