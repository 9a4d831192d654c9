"""Parse time is linear on marker-dense text, for auto and every pinned dialect, whole and streamed.

Hypothesis draws texts as ``tests/linear.py`` makes them (a prefix that opens a body, then one to
three markers of every dialect repeated) and times them at n and 4n: within 5x (linear is 4x,
quadratic 16x). Measured with clocks, made robust as that module says; the short profile draws a
few texts beside the examples, ``make check`` more, ``make fuzz`` many (``tests.fuzz --linear``).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from toolbridge.dialects import dialect_names, get_dialect

from . import linear
from .budget import examples
from .linear import Dense

NAMES = sorted({get_dialect(n).name for n in dialect_names()})


@st.composite
def dense(draw: st.DrawFn) -> Dense:
    parser = draw(st.one_of(st.just("auto"), st.sampled_from(NAMES)))
    opener = st.sampled_from(linear.OPENERS)
    prefix = draw(st.one_of(st.sampled_from(linear.prefixes()),
                            st.tuples(st.sampled_from(linear.ALL_MARKERS), opener).map("".join)))
    unit = "".join(draw(st.lists(st.sampled_from(linear.pool(parser)), min_size=1, max_size=3)))
    return Dense(parser, prefix, unit)


# Two shapes that were quadratic (600 repetitions took 2.6 s and 24 s, 6x and 17x the time of
# 150): every marker's trials read all the rest of the text, and a refused trial was closed,
# which read it again.
@pytest.mark.serial  # it measures time: alone, not beside another worker
@settings(max_examples=examples(30, floor=3), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@example(Dense("auto", '<tool_calls>[{"', "<tool_calls>"))
@example(Dense("auto", '[{"name": "get_weather", "argume', "<tool_call><|eot_id|><|eot_id|>"))
@given(dense())
def test_parse_time_is_linear_on_marker_dense_text(case: Dense) -> None:
    for chunk in (0, linear.CHUNK):
        why = linear.check(case, chunk)
        assert why is None, why
