"""Each request's id, as the APIs give one: made here for every request (``req_`` and 24 random
characters), sent back in the response's header (``request-id`` on the Messages front's paths,
``x-request-id`` on the others, where each SDK reads it: ``_request_id``, ``request_id``),
repeated in Messages' error bodies (``request_id``, as Anthropic's are) and logged in the access
line, so a user can quote it and an operator find the request.

An id the client sends is not taken as the request's: neither API does (OpenAI takes the
client's own as ``X-Client-Request-Id`` and logs it beside its own), and a client's value would
make the ids neither unique nor safe to log. It is logged beside ours instead
(``client_request_id``), so the two can be matched.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from operator import itemgetter

from .http.server import Request

# The id of the request the running task answers: the handler's task sets it (each request has
# its own task, so its own context), and the error bodies that repeat it read it.
CURRENT: ContextVar[str | None] = ContextVar("toolbridge_request_id", default=None)
_CLIENT = (b"x-client-request-id", b"x-request-id")
_NAMED = frozenset(_CLIENT)
_NAME = itemgetter(0)
_SHOWN = re.compile(rb"[\x21-\x7e]{1,128}")  # what of a client's id the log shows: visible ASCII


def client_request_id(req: Request) -> str | None:
    """The id the client gave its request (OpenAI's ``X-Client-Request-Id``, else a proxy's
    ``X-Request-Id``), when it is visible ASCII of at most 128 characters; None otherwise."""
    if _NAMED.isdisjoint(map(_NAME, req.headers)):  # most requests send neither: one pass, in C
        return None
    for name in _CLIENT:
        value = req.header(name)
        if value and _SHOWN.fullmatch(value.strip()):
            return value.strip().decode("ascii")
    return None
