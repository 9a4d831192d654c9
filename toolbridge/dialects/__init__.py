"""The built-in dialects; importing this package registers each of them."""

from . import glm, hermes, qwen3_coder

__all__ = ["glm", "hermes", "qwen3_coder"]
