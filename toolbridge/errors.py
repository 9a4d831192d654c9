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
