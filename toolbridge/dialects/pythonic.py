"""Python-literal calls: ``pythonic`` (Llama 3.2/4, ToolACE), ``olmo3`` and ``lfm2``.

Samples (the vLLM llama3.2/llama4 pythonic and ToolACE templates; vLLM's OLMo 3 parser tests;
the LFM2 / LFM2.5 chat templates)::

    [get_weather(city='Paris', days=3), get_time(tz='CET')]
    <|python_start|>[get_weather(city='Paris')]<|python_end|>
    <function_calls>get_weather(city='Paris')
    get_time(tz='CET')</function_calls>
    <|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>

Values are Python literals (``true``/``false``/``null`` accepted too); each element is parsed
with ``ast`` once its closing parenthesis is read, never evaluated. A bare ``[`` is a call list
only where the answer starts (``bare_start``): a bracket later in prose is prose. LFM2 may write
JSON call objects as the elements, or one object without brackets. LFM2.5 reasons in
``<think>...</think>``, which its template always closes: a call written inside it is quoted
reasoning, not a call.
"""

from __future__ import annotations

from functools import partial

from ..syntax.bodies.pythonic import PythonicBody, render_pythonic
from ..syntax.dialect import Body, CallSink, Dialect, register
from ..syntax.shape import Args, Shape

LLAMA4_START, LLAMA4_END = "<|python_start|>", "<|python_end|>"


def _llama_body(sink: CallSink, opened_by: str) -> Body:
    return PythonicBody(sink, opened_by, close="" if opened_by == "[" else LLAMA4_END)


PYTHONIC = register(
    Dialect(
        name="pythonic",
        aliases=("llama4_pythonic", "llama3_pythonic", "toolace"),
        call_start=(LLAMA4_START,),
        bare_start=("[",),
        body=_llama_body,
        reasoning=None,
        special_markers=True,  # <|python_start|> is a Llama 4 special token
        end_tokens=("<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<|start_header_id|>",
                    "<|eot|>", "<|eom|>", "<|header_start|>", "<|python_end|>"),
        render=render_pythonic,
        shape=Shape(calls=("{NAME}({ARGS})",), args=Args.PYTHON, separator=", ", section=("[", "]"),
                    trigger=""),
        sample="[get_weather(city='Paris', days=3), get_time(tz='CET')]",
    )
)

OLMO3 = register(
    Dialect(
        name="olmo3",
        aliases=("olmo3_pythonic", "olmo"),
        call_start=("<function_calls>",),
        body=partial(PythonicBody, close="</function_calls>"),
        end_tokens=("<|im_end|>", "<|endoftext|>", "<|im_start|>"),
        render=partial(render_pythonic, start="<function_calls>", end="</function_calls>", sep="\n",
                       brackets=False),
        shape=Shape(calls=("{NAME}({ARGS})",), args=Args.PYTHON, separator="\n",
                    section=("<function_calls>", "</function_calls>"), trigger="<function_calls>"),
        sample="<function_calls>get_weather(city='Paris')\nget_time(tz='CET')</function_calls>",
    )
)

LFM2 = register(
    Dialect(
        name="lfm2",
        aliases=("lfm2_5", "lfm25", "liquid"),
        call_start=("<|tool_call_start|>",),
        body=partial(PythonicBody, close="<|tool_call_end|>", objects=True),
        calls_in_reasoning=False,  # the LFM2.5 template always closes <think>; reasoning may quote a call
        special_markers=True,
        end_tokens=("<|im_end|>", "<|endoftext|>", "<|im_start|>"),
        render=partial(render_pythonic, start="<|tool_call_start|>", end="<|tool_call_end|>"),
        shape=Shape(calls=("{NAME}({ARGS})",), args=Args.PYTHON, separator=", ",
                    section=("<|tool_call_start|>[", "]<|tool_call_end|>"), trigger="<|tool_call_start|>"),
        sample='<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>',
    )
)
