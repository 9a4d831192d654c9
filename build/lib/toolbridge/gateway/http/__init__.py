"""HTTP/1.1 for the gateway: the server (``server``), the pooled upstream client (``client``)
and the SSE codec (``sse``), on asyncio protocols with httptools. Nothing here knows of tool
calls or of any API's body shape."""
