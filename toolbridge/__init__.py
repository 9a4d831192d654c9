"""toolbridge: native OpenAI tool calls from every open-weight model's own dialect."""

from __future__ import annotations

from .dialects import dialect_names, get_dialect
from .errors import ConfigError, DialectError, ToolBridgeError, UpstreamError
from .events import (
    ArgumentsDelta,
    CallAborted,
    CallRejected,
    Event,
    Invalid,
    Reasoning,
    Repaired,
    Text,
    ToolCallBegin,
    ToolCallEnd,
)
from .openai import ChunkEncoder, MessageBuilder, Report, assemble, finish_reason
from .parsing.parser import ParseResult, StreamParser, parse
from .syntax.dialect import Dialect, register
from .tools import Toolset

__all__ = [
    "ArgumentsDelta",
    "CallAborted",
    "CallRejected",
    "ChunkEncoder",
    "ConfigError",
    "Dialect",
    "DialectError",
    "Event",
    "Invalid",
    "MessageBuilder",
    "ParseResult",
    "Reasoning",
    "Repaired",
    "Report",
    "StreamParser",
    "Text",
    "ToolBridgeError",
    "ToolCallBegin",
    "ToolCallEnd",
    "Toolset",
    "UpstreamError",
    "assemble",
    "dialect_names",
    "finish_reason",
    "get_dialect",
    "parse",
    "register",
]
