"""The ``toolbridge`` command line: ``main`` builds the argument tree and dispatches; one module
per command (``parse``, ``render``, ``serve``, ``demo``; ``bench`` lives in ``toolbridge.bench``)."""
