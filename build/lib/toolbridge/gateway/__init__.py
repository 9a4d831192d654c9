"""The gateway: an OpenAI-compatible server in front of any upstream.

``request``, ``native``, ``response`` and ``streaming`` are pure translation over OpenAI JSON
objects (no I/O); ``server`` and ``upstream`` carry the HTTP and know nothing of dialects.
"""
