"""One error family: everything the package raises on purpose is a ToolBridgeError."""

from __future__ import annotations


class ToolBridgeError(Exception):
    """Base of every error toolbridge raises on purpose."""


class ConfigError(ToolBridgeError):
    """Bad configuration: an unknown dialect, an invalid tools list, a bad option."""


class DialectError(ToolBridgeError):
    """A dialect declaration is inconsistent."""


class UpstreamError(ToolBridgeError):
    """The upstream server failed or answered something unusable."""


class RenderError(ToolBridgeError):
    """A chat template could not be loaded or rendered, or messages cannot be rendered."""


FLAG_HINT = "--tool-fallback (TOOLBRIDGE_TOOL_FALLBACK=1)"
"""How an error names the opt-in prompt-injected tool protocol."""


class FallbackRequired(RenderError):
    """The conversation needs tool support the template lacks, and the protocol is off."""
