"""A running gateway in front of a replaying upstream, on loopback (tests, demo, benchmark).

Both servers run on an event loop in a background thread; the tests drive them with the
official ``openai`` SDK (synchronous client) over real HTTP.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from typing import Any

from ..app import Gateway
from ..config import GatewayConfig
from .upstream import Detokenize, ReplayUpstream, Script


class Stack:
    """``with Stack(script, tool_call_parser="hermes") as s: s.client().chat...``"""

    def __init__(self, script: Script, detokenize: Detokenize | None = None, upstream: str | None = None,
                 models: tuple[str, ...] | None = ("replay",), strict: bool = False, **config: Any) -> None:
        self.upstream = ReplayUpstream(script, detokenize=detokenize, models=models, strict=strict)
        self._upstream_url = upstream
        self._config = GatewayConfig(upstream="http://127.0.0.1:1/v1", port=0, **config)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._clients: list[Any] = []  # made by ``client``: closed with the stack
        self.gateway: Gateway | None = None

    def __enter__(self) -> Stack:
        self._thread.start()
        self._call(self._start())
        return self

    def __exit__(self, *exc: object) -> None:
        for client in self._clients:
            client.close()  # its pooled connections, before the gateway goes
        self._call(self._stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    async def _start(self) -> None:
        await self.upstream.__aenter__()
        config = replace(self._config, upstream=self._upstream_url or self.upstream.url)
        self.gateway = Gateway(config)
        await self.gateway.start()

    async def _stop(self) -> None:
        assert self.gateway is not None
        await self.gateway.close()
        await self.upstream.__aexit__()

    @property
    def url(self) -> str:
        assert self.gateway is not None and self.gateway.server is not None
        return f"http://127.0.0.1:{self.gateway.server.port}/v1"

    def client(self, **kwargs: Any) -> Any:
        """An ``openai.OpenAI`` client pointed at the gateway (the SDK is a demo/test extra)."""
        import openai

        client = openai.OpenAI(base_url=self.url, api_key=kwargs.pop("api_key", "sk-test"),
                               max_retries=kwargs.pop("max_retries", 0), timeout=kwargs.pop("timeout", 20),
                               **kwargs)
        self._clients.append(client)
        return client

    def direct(self) -> Any:
        """A client that talks to the upstream itself, bypassing the gateway."""
        import openai

        client = openai.OpenAI(base_url=self.upstream.url, api_key="sk-test", max_retries=0, timeout=20)
        self._clients.append(client)
        return client
