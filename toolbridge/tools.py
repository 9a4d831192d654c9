"""The offered tools: name resolution, schema-driven coercion of raw values, validation.

Built once per request from the OpenAI ``tools`` list. Name resolution tries, in order: the
exact name; the name without a ``functions.``/``function.``/``tools.`` prefix; the same with
namespace separators (``.``, ``/``, ``:``, ``__``) made equal; the same ignoring case and ``-``/``_``.
The first tier with exactly one candidate wins; a tier with several is ambiguous and stops the
search, so an ambiguous name is never turned into a call.

Coercion types a raw-text value (XML-style dialects write ``5`` for an integer and ``hello`` for
a string) by the parameter's JSON schema, following ``$ref``, unions and nesting. A value whose
schema says string is never coerced. Without a schema, a value that parses as JSON is typed and
anything else stays a string.
"""

from __future__ import annotations

import ast
import json
import marshal
import re
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

from . import freeform
from ._quickcheck import member_types, quick_check
from .errors import ConfigError
from .limits import loads, too_deep

_PREFIXES = ("functions.", "function.", "tools.", "tool.")
_SEPARATORS = re.compile(r"__|[./:]")
_LOOSE = re.compile(r"[-_]+")
_NO_SCHEMA: dict[str, Any] = {}


class Resolution(NamedTuple):
    """What a written name resolved to: ``name`` (None when unknown or ambiguous) and how."""

    name: str | None
    how: str  # "exact", "prefix", "separators", "loose", "unknown", "ambiguous"


class Toolset:
    """The tools a request offered, indexed for resolution and typing."""

    def __init__(self, tools: list[dict[str, Any]],
                 freeforms: dict[str, freeform.Format] | None = None) -> None:
        """``freeforms``: the tools among ``tools`` that are freeform (``custom``), by name, with
        their input format: their calls are read as one raw-text string (``freeform``)."""
        if not isinstance(tools, list):
            raise ConfigError("tools must be a list of OpenAI tool objects")
        self.schemas: dict[str, dict[str, Any]] = dict(map(_tool_entry, tools, range(len(tools))))
        self.freeforms = {k: v for k, v in freeforms.items() if k in self.schemas} if freeforms else {}
        for name in self.freeforms:
            self.schemas[name] = freeform.READ_AS
        self._validators: dict[str, Any] = {}
        self._quick: dict[str, Any] = {}
        self._settled: dict[str, dict[str, Any] | None] = {}
        self._types_only: dict[str, Any] = {}
        self._keys: dict[str, bytes | str] = {}  # each tool's ``_schema_key``, worked out once
        self._typing: dict[str, Any] = {}

    _tiers: list[Any] | None = None  # made at the first name that is not exact

    def resolve(self, written: str) -> Resolution:
        """Match a name the model wrote to an offered name."""
        if written in self.schemas:
            return Resolution(written, "exact")
        bare = _strip_prefix(written)
        if bare in self.schemas:
            return Resolution(bare, "prefix")
        if self._tiers is None:
            self._tiers = [_index(self.schemas, _separators), _index(self.schemas, _loose)]
        for how, (key, table) in zip(("separators", "loose"), self._tiers):
            found = table.get(key(bare), ())
            if len(found) == 1:
                return Resolution(found[0], how)
            if len(found) > 1:
                return Resolution(None, "ambiguous")
        return Resolution(None, "unknown")

    def param_schema(self, tool: str, key: str) -> dict[str, Any] | None:
        """The resolved schema of one parameter, or None when the tool does not declare it."""
        if tool in self.freeforms:
            return freeform.STRING  # whatever the model named it: raw text, never typed
        root = self.schemas.get(tool, _NO_SCHEMA)
        props = root.get("properties")
        if not isinstance(props, dict) or key not in props:
            return None
        return deref(props[key], root)

    def root_schema(self, tool: str) -> dict[str, Any]:
        return self.schemas.get(tool, _NO_SCHEMA)

    def settled_members(self, tool: str) -> dict[str, Any] | None:
        """``settled_members`` of the tool's schema, made once per tool."""
        found = self._settled.get(tool, _UNSET)
        if found is _UNSET:
            found = self._settled[tool] = settled_members(self.root_schema(tool))
        return found  # type: ignore[no-any-return]

    def types_only(self, tool: str) -> tuple[dict[str, type], frozenset[str]] | None:
        """For a tool whose schema only states its members' types (``_quickcheck.member_types``),
        made once per tool: the members whose value needs no typing when it is of the one type
        declared (``settled_members``) and that ``validate`` then finds valid, with that Python
        type, by key; and the required names. Arguments whose every member
        is one of these, of that type, holding the required names, need no typing and are valid
        (``argtyper.typed_and_valid``). None for any other tool (freeform, no such member)."""
        found = self._types_only.get(tool, _UNSET)
        if found is _UNSET:
            found = self._types_only[tool] = self._made_types_only(tool)
        return found  # type: ignore[no-any-return]

    def _made_types_only(self, tool: str) -> tuple[dict[str, type], frozenset[str]] | None:
        if tool in self.freeforms:
            return None
        settled = self.settled_members(tool)
        shape = _member_shape(self.root_schema(tool), self._key_of(tool)) if settled is not None else None
        if shape is None:
            return None
        allowed, required = shape
        types = {key: need for key, need in settled.items()
                 if key in allowed and type(need) is type and need in allowed[key]}
        return (types, frozenset(required)) if types else None

    def member_typing(self, tool: str) -> tuple[Callable[[str], dict[str, Any] | None],
                                                 Callable[[str, str, dict[str, Any] | None], Any]]:
        """How a call's whole raw values are typed by the tool's schema (not freeform), as
        ``param_schema`` and ``coerce`` type them once the call has begun: the schema of a key
        (None: not declared) and the typing of a raw value by it, as
        ``syntax.rawvalue.typed_object`` takes them; made once per tool."""
        found = self._typing.get(tool)
        if found is None:
            found = self._typing[tool] = _member_typing(self.root_schema(tool))
        return found  # type: ignore[no-any-return]

    def _key_of(self, tool: str) -> bytes | str:
        key = self._keys.get(tool)
        if key is None:
            key = self._keys[tool] = _schema_key(self.root_schema(tool))
        return key

    def validate(self, tool: str, arguments: Any) -> tuple[str, ...]:
        """Schema errors of a call's arguments (empty when valid)."""
        fmt = self.freeforms.get(tool)
        if fmt is not None:
            return freeform.check_call(fmt, arguments)
        quick = self._quick.get(tool, _UNSET)
        if quick is _UNSET:
            quick = self._quick[tool] = _quick_check(self.root_schema(tool), self._key_of(tool))
        if quick is not None and quick(arguments):
            return ()  # the common case, answered without jsonschema
        validator = self._validators.get(tool)
        if validator is None:
            validator = self._validators[tool] = _validator(self.root_schema(tool))
        from referencing.exceptions import Unresolvable  # jsonschema's; loaded with it

        try:
            return tuple(
                f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
                for e in validator.iter_errors(arguments)
            )
        except (Unresolvable, RecursionError):
            # A schema that passes the meta-schema but cannot be applied (a $ref to nowhere, or
            # one that only refers to itself): like an invalid schema, nothing is checked.
            self._validators[tool] = _forget_validator(self.root_schema(tool))
            return ()


def _member_typing(root: dict[str, Any]) -> tuple[Callable[[str], dict[str, Any] | None],
                                                   Callable[[str, str, dict[str, Any] | None], Any]]:
    """``Toolset.member_typing`` of a tool of schema ``root``."""
    props = root.get("properties")
    props = props if isinstance(props, dict) else {}

    def schema_of(key: str) -> dict[str, Any] | None:
        member = props.get(key, _UNSET)
        if type(member) is dict and "$ref" not in member:
            return member  # (what deref gives back for it)
        return None if member is _UNSET else deref(member, root)

    return schema_of, lambda key, raw, schema: coerce(raw, schema, root)


def _tool_entry(tool: Any, i: int) -> tuple[str, dict[str, Any]]:
    if not isinstance(tool, dict):
        raise ConfigError(f"tools[{i}] is not an object")
    fn = tool.get("function", tool)  # accept the flat shape too
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
        raise ConfigError(f"tools[{i}] has no function name")
    schema = fn.get("parameters") or {}
    if not isinstance(schema, dict):
        raise ConfigError(f"tools[{i}] ({fn['name']}): parameters must be a JSON Schema object")
    return fn["name"], schema


def _strip_prefix(name: str) -> str:
    for prefix in _PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :]
    return name


def _separators(name: str) -> str:
    return _SEPARATORS.sub(".", name)


def _loose(name: str) -> str:
    return _LOOSE.sub("_", _separators(name).replace(".", "_")).lower()


def _index(schemas: dict[str, Any], key: Any) -> tuple[Any, dict[str, tuple[str, ...]]]:
    table: dict[str, tuple[str, ...]] = {}
    for name in schemas:
        k = key(_strip_prefix(name))
        table[k] = table.get(k, ()) + (name,)
    return key, table


class _NoValidator:
    """Stands in for a schema that is not valid JSON Schema: nothing can be checked against it."""

    def iter_errors(self, instance: Any) -> list[Any]:
        return []


class SharedCache:
    """A bounded map shared between requests and threads (the oldest entry goes first)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: dict[Any, Any] = {}
        self._lock = threading.Lock()

    def get(self, key: Any, default: Any = None) -> Any:
        return self._items.get(key, default)

    def put(self, key: Any, value: Any) -> Any:
        with self._lock:
            if key not in self._items and len(self._items) >= self._size:
                del self._items[next(iter(self._items))]
            self._items[key] = value
        return value

    def made(self, key: Any, make: Callable[..., Any], *args: Any) -> Any:
        """The value kept under ``key``, or ``make(*args)`` kept there (None is kept too)."""
        found = self._items.get(key, _UNSET)
        return self.put(key, make(*args)) if found is _UNSET else found


_VALIDATORS = SharedCache(1024)
_QUICK = SharedCache(1024)
_SHAPES = SharedCache(1024)


_KEY_TEXT = json.JSONEncoder(sort_keys=True, default=str)  # made once: json.dumps makes one a call


def _schema_key(schema: dict[str, Any]) -> bytes | str:
    """What a schema's shared checks are kept under: its marshal bytes (format 2, without
    references, so equal schemas written in the same order give the same bytes; a sixth of the
    cost of its JSON text, paid once per request and tool), or for a schema holding values
    marshal cannot write, its JSON text, keys sorted. Equal keys mean equal schemas."""
    try:
        return marshal.dumps(schema, 2)
    except ValueError:
        return _KEY_TEXT.encode(schema)


def _quick_check(schema: dict[str, Any], key: bytes | str) -> Any:
    """The quick check of ``schema`` (``_quickcheck``; ``key``: its ``_schema_key``), shared
    like the validators."""
    return _QUICK.made(key, lambda: quick_check(_standard_types(schema)))


def _member_shape(schema: dict[str, Any], key: bytes | str) -> Any:
    """``_quickcheck.member_types`` of ``schema`` as the quick check reads it (None, too, when
    the schema makes no quick check; ``key``: its ``_schema_key``), shared like the quick checks:
    a parser given a list of tools makes its Toolset anew, and what it works out of a schema is
    not worked out again for each."""
    return _SHAPES.made(key, lambda: member_types(_standard_types(schema))
                        if _quick_check(schema, key) is not None else None)


def _validator(schema: dict[str, Any]) -> Any:
    """A validator for ``schema``, shared between requests offering the same tool.

    Checking a schema costs milliseconds, far more than parsing a typical answer; clients send
    the same tools with every request, so validators are kept, keyed by the schema's text.
    """
    return _VALIDATORS.made(_schema_key(schema), _make_validator, schema)


def _forget_validator(schema: dict[str, Any]) -> _NoValidator:
    """Mark ``schema`` as one nothing can be checked against, for every request offering it."""
    none = _NoValidator()
    return _VALIDATORS.put(_schema_key(schema), none)


def _make_validator(schema: dict[str, Any]) -> Any:
    cls, schema = _validator_class(schema)
    return _NoValidator() if _schema_problem(cls, schema) else cls(schema)


def _validator_class(schema: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The validator class for ``schema`` (its ``$schema``'s draft, else 2020-12) and the schema
    as it is applied (``_standard_types``)."""
    import jsonschema  # type: ignore[import-untyped]  # validation: outside the stdlib-only core

    schema = _standard_types(schema)
    if not isinstance(schema.get("$schema", ""), str):
        del schema["$schema"]  # not a meta-schema's URI: the default draft applies
    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator), schema


def _schema_problem(cls: Any, schema: dict[str, Any]) -> str | None:
    import jsonschema

    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return f"{'/'.join(map(str, exc.absolute_path)) or '(root)'}: {exc.message}"[:500]
    except RecursionError:
        return "it nests too deep to be checked"
    return None


def schema_error(schema: Any) -> str | None:
    """Why a tool's ``schema`` cannot check arguments (it fails its draft's meta-schema, as
    jsonschema's ``check_schema`` tells: the first error, with its path in the schema), or None
    for a valid JSON Schema. Type names tool authors write by mistake (``str``, ``int`` ...)
    count as what they mean, as they do when arguments are checked. Shared between requests
    offering the same schema, as the validators are."""
    if not isinstance(schema, dict):
        return "(root): a schema must be an object"
    key = _schema_key(schema)
    found = _SCHEMA_ERRORS.get(key, _UNSET)
    if found is _UNSET:
        found = _SCHEMA_ERRORS.put(key, _schema_problem(*_validator_class(schema)))
    return found  # type: ignore[no-any-return]


_SCHEMA_ERRORS = SharedCache(1024)


_UNSET = object()


def _standard_types(schema: Any) -> Any:
    """A copy of ``schema`` with Python type names (``float``, ``str``...) made JSON Schema's."""
    if isinstance(schema, list):
        return [_standard_types(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _standard_types(v) for k, v in schema.items()}
    declared = schema.get("type")
    if isinstance(declared, str):
        out["type"] = _TYPE_NAMES.get(declared, declared)
    elif isinstance(declared, list):
        out["type"] = [_TYPE_NAMES.get(t, t) if isinstance(t, str) else t for t in declared]
    return out


# Type names that tool authors write by mistake, and what they mean.
_TYPE_NAMES = {
    "str": "string", "int": "integer", "float": "number", "double": "number", "bool": "boolean",
    "dict": "object", "list": "array", "none": "null", "NoneType": "null",
}


# ---------------------------------------------------------------- schema-driven coercion


def deref(schema: Any, root: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """Follow a local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) to the schema it names."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < 32:
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return {}
        target: Any = root
        for part in filter(None, ref[1:].split("/")):
            target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(
                target, dict
            ) else {}
        schema, depth = target, depth + 1
    return schema if isinstance(schema, dict) else {}


# The exact Python type of a decoded value of these JSON types.
PYTHON_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool}


def settled_members(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The members of arguments under ``schema`` whose decoded value needs no typing when it is
    of the one type the member declares (no ``$ref``): by key, that Python type
    (``PYTHON_TYPES``), or for a string with an ``enum``, the enum, whose values are the
    strings that need none. Other members may need typing (``repair_value`` tells). None when
    the schema declares no properties: then no argument is typed."""
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return None
    settled: dict[str, Any] = {}
    for key, member in props.items():
        declared = member.get("type") if isinstance(member, dict) and "$ref" not in member else None
        if isinstance(declared, str) and declared in PYTHON_TYPES:
            enum = member.get("enum") if declared == "string" else None
            settled[key] = enum if isinstance(enum, list) else PYTHON_TYPES[declared]
    return settled


def settles(need: Any, value: Any) -> bool:
    """Whether a decoded member ``value`` needs no typing by what ``settled_members`` gives for
    its key (``need``; None: it may need some)."""
    return need is type(value) or (type(need) is list and type(value) is str and value in need)


def is_plain_string(schema: dict[str, Any] | None) -> bool:
    """True when the schema admits only strings, so a raw value can stream as a string."""
    if not schema:
        return False
    return _types(schema, schema) == {"string"}


def _types(schema: dict[str, Any], root: dict[str, Any],
           _unions: dict[int, set[str] | None] | None = None) -> set[str]:
    """The JSON types a schema admits (empty set: anything).

    ``_unions`` holds the unions met so far (None while one is being expanded), so a union that
    refers to itself adds nothing to itself and each union is expanded once, however often the
    schema's ``$ref``s lead to it.
    """
    schema = deref(schema, root)
    declared = schema.get("type")
    if isinstance(declared, str):
        return {_TYPE_NAMES.get(declared, declared)}
    if isinstance(declared, list):
        return {_TYPE_NAMES.get(t, t) for t in declared if isinstance(t, str)}
    if "enum" in schema and isinstance(schema["enum"], list):
        return {_json_type(v) for v in schema["enum"]}
    if "const" in schema:
        return {_json_type(schema["const"])}
    options = [o for key in ("anyOf", "oneOf") if isinstance(schema.get(key), list) for o in schema[key]]
    if not options:
        return set()
    unions = {} if _unions is None else _unions
    unions[id(schema)] = None
    union: set[str] = set()
    for option in options:
        target = deref(option, root)
        sub = unions[id(target)] if id(target) in unions else _types(target, root, unions)
        if sub is None:
            continue  # the union itself, or one being expanded around it
        if not sub:
            union = set()
            break
        union |= sub
    unions[id(schema)] = union
    return union


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def coerce(raw: str, schema: dict[str, Any] | None, root: dict[str, Any] | None = None) -> Any:
    """Type a raw-text value by its schema (see the module docstring)."""
    if schema is None:
        return _parse_loose(raw)
    root = root if root is not None else schema
    types = _types(schema, root)
    if not types:
        return _parse_loose(raw)
    if types == {"string"}:
        return raw
    value = _parse_typed(raw, types)
    if value is _FAIL:
        return raw  # keep what the model wrote; validation reports the mismatch
    return conform(value, deref(schema, root), root)


_FAIL = object()


def _parse_typed(raw: str, types: set[str]) -> Any:
    text = raw.strip()
    value = _parse_json(text)
    if value is _FAIL and types & {"array", "object"}:
        value = _parse_escaped_json(text)
    if value is _FAIL and types & {"array", "object"}:
        value = _parse_python(text)
    if value is _FAIL:
        value = _WORDS.get(text.lower(), _FAIL) if types & {"boolean", "null"} else _FAIL
    if value is not _FAIL and _fits(value, types):
        return value
    if value is not _FAIL and "number" in types and _json_type(value) == "integer":
        return value
    if "integer" in types and isinstance(value, float) and value.is_integer():
        return int(value)
    return raw if "string" in types else _FAIL


_WORDS = {"true": True, "false": False, "null": None, "none": None}


def _fits(value: Any, types: set[str]) -> bool:
    kind = _json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def _parse_json(text: str) -> Any:
    try:
        return loads(text)
    except ValueError:
        return _FAIL


def _parse_escaped_json(text: str) -> Any:
    """JSON written with its quotes escaped (``[{\\"id\\": 1}]``), as some models do."""
    if '\\"' not in text:
        return _FAIL
    inner = _parse_json('"' + text + '"')
    return _parse_json(inner) if isinstance(inner, str) else _FAIL


def _parse_python(text: str) -> Any:
    if too_deep(text):
        return _FAIL
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _FAIL
    if isinstance(value, tuple):
        value = list(value)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return _FAIL
    return value


def _parse_loose(raw: str) -> Any:
    value = _parse_json(raw.strip()) if raw.strip() else _FAIL
    return raw if value is _FAIL else value


def conform(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """Coerce strings nested in an already-typed value where the schema wants another type."""
    schema = deref(schema, root)
    if isinstance(value, str):
        types = _types(schema, root)
        return value if not types or "string" in types else coerce(value, schema, root)
    if isinstance(value, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            return {k: conform(v, props[k], root) if k in props else v for k, v in value.items()}
        return value
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [conform(v, items, root) for v in value]
    return value


# ---------------------------------------------------------------- schema repair of typed values

_EMPTY = object()  # an empty value for a non-string type: left out where it is optional


def repair_value(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str,
                 required: bool = False) -> tuple[Any, list[tuple[str, str]], bool]:
    """Type an argument's value by its schema, losing nothing (see ``parsing.argtyper``).

    Returns the typed value, the repairs made as (path, what), and whether the member is to be
    left out (an empty value for a non-string type where the member is optional).
    """
    repairs: list[tuple[str, str]] = []
    typed = _repair(value, schema, root, path, repairs)
    if typed is _EMPTY:
        if not required:
            return value, [(path, "empty value for a non-string type left out")], True
        return value, [], False  # required: stays, and validation says it is invalid
    return typed, repairs, False


def _repair(value: Any, schema: Any, root: dict[str, Any], path: str, repairs: list[tuple[str, str]]) -> Any:
    schema = deref(schema, root)
    if not schema:
        return value
    types = _types(schema, root)
    if _array_only(types) and not isinstance(value, list):
        if value == "":
            return _EMPTY
        return _one_item(value, schema, types, root, path, repairs)
    if isinstance(value, str):
        return _repair_string(value, schema, types, root, path, repairs)
    if isinstance(value, (int, float)) and types == {"string"}:
        text = json.dumps(value)
        repairs.append((path, f"{text} read as the string {json.dumps(text)}"))
        return text
    if isinstance(value, dict):
        return _repair_members(value, schema, root, path, repairs)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        out = [_repair(v, schema["items"], root, f"{path}[{i}]", repairs) for i, v in enumerate(value)]
        return [v if o is _EMPTY else o for v, o in zip(value, out)]
    return value


def _one_item(value: Any, schema: dict[str, Any], types: set[str], root: dict[str, Any], path: str,
              repairs: list[tuple[str, str]]) -> Any:
    """A lone value where the schema says an array of it: the one-item array (a string that
    may be an array written as text is typed first; anything the items do not admit stays)."""
    if isinstance(value, str):
        typed = _repair_string(value, schema, types, root, path, repairs)
        if isinstance(typed, list) or value.lstrip().startswith("["):
            return typed  # an array written as text: typed, or (broken) left to validation
    items = deref(schema.get("items"), root)
    kinds = _types(items, root) if items else set()
    item = _repair(value, items, root, path + "[0]", []) if kinds else value
    if not kinds or item is _EMPTY or not _fits(item, kinds):
        return value  # not an array of it: validation reports it
    repairs.append((path, "a lone value made a one-item array"))
    return [item]


def _array_only(types: set[str]) -> bool:
    return types == {"array"} or types == {"array", "null"}


def _repair_string(value: str, schema: dict[str, Any], types: set[str], root: dict[str, Any], path: str,
                   repairs: list[tuple[str, str]]) -> Any:
    if not types or "string" in types:
        enum = schema.get("enum")
        if isinstance(enum, list) and value not in enum:
            same = [e for e in enum if isinstance(e, str) and e.lower() == value.lower()]
            if len(same) == 1:
                repairs.append((path, f"{json.dumps(value)} matched the enum value {json.dumps(same[0])}"))
                return same[0]
        return value
    if not value.strip():
        return _EMPTY
    typed = coerce(value, schema, root)
    if isinstance(typed, str):
        return value  # nothing lossless fits: validation reports it
    repairs.append((path, f"the string {_show(value)} read as {_json_type(typed)} {_show(typed)}"))
    return typed


def _repair_members(value: dict[str, Any], schema: dict[str, Any], root: dict[str, Any], path: str,
                    repairs: list[tuple[str, str]]) -> dict[str, Any]:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return value
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    out: dict[str, Any] = {}
    for key, member in value.items():
        typed = _repair(member, props[key], root, f"{path}.{key}", repairs) if key in props else member
        if typed is _EMPTY:
            if key in required:
                out[key] = member
                continue
            repairs.append((f"{path}.{key}", "empty value for a non-string type left out"))
            continue
        out[key] = typed
    return out


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."
