"""How call blocks are read: the dialect declaration and the body contract (``dialect``), marker
search (``markers``), the incremental JSON scanner (``jsonscan``), raw parameter values
(``rawvalue``), and one module per body kind in ``bodies``. Standard library only; nothing here
knows a model family (those are ``toolbridge.dialects``) or drives a whole response
(``toolbridge.parsing``)."""
