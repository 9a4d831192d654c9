"""gpt-oss (Harmony): channelled messages; calls are messages to ``functions.NAME``.

Sample (the gpt-oss chat template; the model's output continues the prompt's ``<|start|>assistant``)::

    <|channel|>analysis<|message|>The user wants the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>

Channels: ``analysis`` is reasoning, ``commentary`` carries calls and preambles (content),
``final`` is the answer. The recipient may sit in the role header (``<|start|>assistant
to=functions.NAME<|channel|>commentary json<|message|>``, as the template writes it) or in the
channel header; a call in the analysis channel is a call too. Several messages follow one another.
A call to a recipient that was not offered (``python``, ``container.exec``) stays content.
"""

from __future__ import annotations

import json

from ..syntax.bodies.harmony import HarmonyBody
from ..syntax.dialect import Calls, Dialect, register
from ..syntax.shape import Shape


def render(calls: Calls) -> str:
    """Calls as the gpt-oss template writes them: one message per call."""
    return "".join(
        f"<|start|>assistant to=functions.{name}<|channel|>commentary json<|message|>"
        f"{json.dumps(args, ensure_ascii=False)}<|call|>"
        for name, args in calls
    )


GPT_OSS = register(
    Dialect(
        name="gpt_oss",
        aliases=("openai", "harmony", "gpt-oss"),
        call_start=("<|start|>", "<|channel|>"),
        bare_start=("to=",),
        body=HarmonyBody,
        reasoning=("<|channel|>analysis<|message|>", "<|end|>"),
        special_markers=True,
        end_tokens=("<|return|>", "<|endoftext|>"),
        render=render,
        # What the template writes; the model's own spelling, which continues the prompt's
        # <|start|>assistant (or follows its reasoning with a new message); both end at <|call|>.
        shape=Shape(calls=(
            "<|start|>assistant to=functions.{NAME}<|channel|>commentary json<|message|>{ARGS}<|call|>",
            "<|channel|>commentary to=functions.{NAME} <|constrain|>json<|message|>{ARGS}<|call|>",
            "<|start|>assistant<|channel|>commentary to=functions.{NAME} <|constrain|>json<|message|>{ARGS}<|call|>",
        )),
        sample=(
            "<|channel|>analysis<|message|>The user wants the weather.<|end|><|start|>assistant"
            '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>'
        ),
    )
)
