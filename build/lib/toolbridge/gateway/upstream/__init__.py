"""How the upstream is reached and its answer read: native calls (``native``), the completions
mode (``completions``) and the prompt-injected protocol in front of a chat upstream
(``fallback``)."""
