"""Gemma dict-syntax calls: ``gemma4`` (Gemma 4) and ``functiongemma`` (FunctionGemma).

Samples (the google-gemma-4-31B-it and vLLM functiongemma chat templates)::

    <|channel>thought
    The user wants the weather.
    <channel|><|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>

    <start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>

ARGS is ``key:value`` pairs with bare keys; strings sit between ``<|"|>`` (FunctionGemma:
``<escape>``) with no escaping and stream as they arrive; ``{}`` and ``[]`` nest; numbers,
booleans and null are bare. Back-to-back calls are consecutive blocks (or several ``call:``
in one block). Gemma 4 reasons in ``<|channel>thought ... <channel|>``; the word ``thought``
is part of the opener, so reasoning keeps only the newlines around the text, as ``<think>`` does.
"""

from __future__ import annotations

from functools import partial

from ..syntax.bodies.gemma import GemmaBody, render_gemma
from ..syntax.dialect import Dialect, register

QUOTE = '<|"|>'
START, END = "<|tool_call>", "<tool_call|>"
FG_QUOTE, FG_START, FG_END = "<escape>", "<start_function_call>", "<end_function_call>"

GEMMA4 = register(
    Dialect(
        name="gemma4",
        aliases=("gemma_4", "gemma4_it"),
        call_start=(START,),
        body=partial(GemmaBody, close=END, quote=QUOTE),
        reasoning=("<|channel>thought", "<channel|>"),
        stray_tokens=("<|channel>", "<channel|>"),
        special_markers=True,
        end_tokens=("<turn|>", "<|turn>", "<eos>", "<|tool_response>", "<tool_response|>"),
        render=partial(render_gemma, start=START, end=END, quote=QUOTE),
        sample='<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>',
    )
)

FUNCTIONGEMMA = register(
    Dialect(
        name="functiongemma",
        aliases=("function_gemma",),
        call_start=(FG_START,),
        body=partial(GemmaBody, close=FG_END, quote=FG_QUOTE),
        reasoning=None,
        special_markers=True,
        end_tokens=("<end_of_turn>", "<start_of_turn>", "<eos>", "<start_function_response>"),
        render=partial(render_gemma, start=FG_START, end=FG_END, quote=FG_QUOTE),
        sample="<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>",
    )
)
