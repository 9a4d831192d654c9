"""A quick schema check for the flat schemas tools nearly always declare.

Validating a call's arguments with jsonschema costs tens of microseconds, as much as parsing the
call; nearly every tool declares only types, properties, required keys, string enums and simple bounds
(``minimum``, ``maxLength``, ``minItems`` ...). For
such a schema ``quick_check`` builds a plain function that answers True only when jsonschema
would find no error. It answers False when it is not sure, and the caller then asks jsonschema,
which also words the errors; a schema using any other keyword gets no quick check (None).
Annotations (``description``, ``format``, which is not asserted, ...) are ignored, as
jsonschema ignores them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_EXACT_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "null": (type(None),), "array": (list,), "object": (dict,),
}
# Keywords that never make an instance invalid (annotations; ``format`` is not asserted).
_ANNOTATIONS = frozenset(("description", "title", "default", "examples", "deprecated", "readOnly",
                          "writeOnly", "$comment", "format"))
_KNOWN_DRAFTS = re.compile(r"https?://json-schema\.org/(draft-0[4-7]|draft/20(19-09|20-12))/schema#?")
Check = Callable[[Any], bool]


def quick_check(schema: Any, root: bool = True) -> Check | None:
    """A check that answers True only for instances jsonschema finds no error in, for the flat
    schemas tools nearly always declare (types, properties, required, string enums); None when
    the schema uses anything else. False means "ask jsonschema", which also words the errors.

    Types are matched by exact Python type, as ``json.loads`` makes them: ``1.0`` for an
    integer, say, is left to jsonschema.
    """
    if not isinstance(schema, dict):
        return None
    schema = dict(schema)
    if root and isinstance(schema.get("$schema"), str) and _KNOWN_DRAFTS.fullmatch(schema["$schema"]):
        del schema["$schema"]
    checks: list[Check] = []
    exact = None  # the types ``type`` allows, tested in the check itself (not by a check of its own)
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key == "type":
            exact = _exact_types(value)
            if exact is None:
                return None
            continue
        if key == "additionalProperties" and value is False:
            check = _closed_object(schema)
        else:
            check = _KEYWORDS[key](value) if key in _KEYWORDS else None
        if check is None:
            return None
        checks.append(check)
    return _all_of(tuple(checks), exact)


def _all_of(checks: tuple[Check, ...], exact: tuple[type, ...] | None = None) -> Check:
    """One check that passes when the instance is of the ``exact`` types (any, when None) and
    each of ``checks`` passes (a plain loop: a generator made at every call cost as much as the
    checks themselves)."""
    if exact is None and len(checks) == 1:
        return checks[0]
    if not checks and exact is not None:
        return lambda instance: type(instance) in exact

    def check(instance: Any) -> bool:
        if exact is not None and type(instance) not in exact:
            return False
        for one in checks:
            if not one(instance):
                return False
        return True

    return check


def _exact_types(declared: Any) -> tuple[type, ...] | None:
    """The Python types of ``type``'s value (None when it names anything else)."""
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not all(isinstance(n, str) and n in _EXACT_TYPES for n in names):
        return None
    return tuple(t for n in names for t in _EXACT_TYPES[n])


def _type_only(schema: Any) -> tuple[type, ...] | None:
    """The types a schema of ``type`` alone (annotations aside) allows, the common member; None
    for any other schema."""
    if not isinstance(schema, dict) or "type" not in schema or any(
            key != "type" and key not in _ANNOTATIONS for key in schema):
        return None
    return _exact_types(schema["type"])


_TYPES_ONLY_ROOT = frozenset(("type", "properties", "required", "additionalProperties", "$schema"))


def member_types(schema: Any) -> tuple[dict[str, tuple[type, ...]], list[str]] | None:
    """For a schema that only states its members' types (``properties``, ``required``, ``type:
    object``, ``additionalProperties`` true or false, a known ``$schema``, annotations): the
    types each member of a ``type`` alone allows, by name, and the required names. Then a
    ``quick_check`` of the schema (when it makes one: every other member is of a schema it
    reads) passes any object whose every member is one of these, of its types, and that holds
    the required names. None for any other schema."""
    if not isinstance(schema, dict) or any(
            key not in _TYPES_ONLY_ROOT and key not in _ANNOTATIONS for key in schema):
        return None
    draft = schema.get("$schema")
    if draft is not None and not (isinstance(draft, str) and _KNOWN_DRAFTS.fullmatch(draft)):
        return None
    props, required = schema.get("properties", {}), schema.get("required", [])
    if schema.get("type", "object") != "object" or type(schema.get("additionalProperties", True)) is not bool \
            or not isinstance(props, dict) or _required_check(required) is None:
        return None
    exacts = {name: _type_only(sub) for name, sub in props.items()}
    return {name: exact for name, exact in exacts.items() if exact is not None}, required


def _properties_check(props: Any) -> Check | None:
    if not isinstance(props, dict):
        return None
    subs = {name: quick_check(sub, False) for name, sub in props.items()}
    if any(sub is None for sub in subs.values()):
        return None
    # (a member of a type alone is tested here: no call of a check of its own for each)
    exacts = {name: _type_only(sub) for name, sub in props.items()}
    typed = tuple((name, exact) for name, exact in exacts.items() if exact is not None)
    members = tuple((name, sub) for name, sub in subs.items() if exacts[name] is None)

    def check(instance: Any) -> bool:
        if type(instance) is not dict:
            return True
        for name, exact in typed:
            if name in instance and type(instance[name]) not in exact:
                return False
        for name, sub in members:
            if name in instance and not sub(instance[name]):  # type: ignore[misc]
                return False
        return True

    return check


def _required_check(names: Any) -> Check | None:
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return lambda instance: type(instance) is not dict or all(map(instance.__contains__, names))


def _additional_check(allowed: Any) -> Check | None:
    return (lambda instance: True) if allowed is True else None


def _closed_object(schema: dict[str, Any]) -> Check | None:
    """``additionalProperties: false`` beside ``properties``: no other keys."""
    props = schema.get("properties", {})
    if not isinstance(props, dict) or "patternProperties" in schema:
        return None
    return lambda instance: type(instance) is not dict or all(map(props.__contains__, instance))


def _items_check(items: Any) -> Check | None:
    sub = quick_check(items, False)
    if sub is None:
        return None
    return lambda instance: type(instance) is not list or all(map(sub, instance))


def _enum_check(values: Any) -> Check | None:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return None
    allowed = frozenset(values)
    return lambda instance: type(instance) is str and instance in allowed


_NUMBERS = (int, float)
_COMPARE = {"minimum": lambda v, b: v >= b, "maximum": lambda v, b: v <= b,
            "exclusiveMinimum": lambda v, b: v > b, "exclusiveMaximum": lambda v, b: v < b}
_SIZED = {"minLength": (str, lambda n, b: n >= b), "maxLength": (str, lambda n, b: n <= b),
          "minItems": (list, lambda n, b: n >= b), "maxItems": (list, lambda n, b: n <= b)}


def _bound_check(keyword: str) -> Callable[[Any], Check | None]:
    """A numeric bound (``minimum`` ...): it applies to numbers only (a boolean is not one)."""
    compare = _COMPARE[keyword]

    def make(bound: Any) -> Check | None:
        if type(bound) not in _NUMBERS:
            return None
        return lambda instance: type(instance) not in _NUMBERS or compare(instance, bound)
    return make


def _size_check(keyword: str) -> Callable[[Any], Check | None]:
    """A length bound (``minLength`` on strings, counted in code points; ``minItems`` ...)."""
    kind, compare = _SIZED[keyword]

    def make(bound: Any) -> Check | None:
        if type(bound) is not int or bound < 0:
            return None
        return lambda instance: type(instance) is not kind or compare(len(instance), bound)
    return make


_KEYWORDS: dict[str, Callable[[Any], Check | None]] = {
    "properties": _properties_check, "required": _required_check,
    "additionalProperties": _additional_check, "items": _items_check, "enum": _enum_check,
    **{k: _bound_check(k) for k in _COMPARE}, **{k: _size_check(k) for k in _SIZED},
}
