"""The Python API a model sees: tool stubs rendered from JSON Schemas (pi §5.2).

Part of ``model/`` (what the model reads): imports only the runtime's tool type and
:mod:`scriptgate.sandbox.naming`; nothing below ``model/`` imports it. Over 800 lines
because it is one renderer (JSON Schema to Python types) whose cases share helpers.

This is the Python counterpart of pi's ``renderDeclarations`` / ``schemaToType``:

- :func:`schema_to_type` maps a JSON Schema to Python typing text. Objects with
  properties become named ``TypedDict`` classes (keys sorted by name as pi;
  optional keys wrapped in ``NotRequired[...]``; keys that are not plain
  identifiers force the functional ``TypedDict("Name", {...})`` form);
  property descriptions become ``#`` comments followed by a constraint tags line
  such as ``# @minimum 1 @default 20``.
- :func:`render_stubs` renders every tool as a keyword-only ``def`` (or
  ``async def``) signature whose docstring is the tool description and whose
  return type comes from ``output_schema`` (``str`` without one, because such a
  tool resolves to its text in a script).
- :func:`render_tool_sample` is pi's ``renderToolSample`` for one tool.

Every rendering is valid Python: the definitions come before their uses, so the
text can be ``exec``-ed after ``from typing import Any, Literal, Never,
NotRequired, TypedDict``.

Mapping (pi's TypeScript → Python): ``string`` → ``str``; ``integer`` → ``int``;
``number`` → ``float``; ``boolean`` → ``bool``; ``null`` → ``None``; type arrays,
``anyOf``/``oneOf`` and ``enum`` → unions with ``|`` (literals grouped into one
``Literal[...]``; ``Any`` if any member is unknown, ``Never`` if none);
``const`` → ``Literal[...]``; arrays → ``list[T]`` (``list[Any]`` bare); tuples
(``prefixItems`` or a draft-4 ``items`` list) → ``tuple[A, B]``; objects without
properties → ``dict[str, T]`` from ``additionalProperties`` (``dict[str, Any]``
when open), an empty ``TypedDict`` when closed; ``true``/``false`` →
``Any``/``Never``. Python has no intersection type, so ``allOf`` merges object
parts into one ``TypedDict`` (a key is required if any part requires it) and
otherwise keeps the first part that says anything.

Local ``$ref`` s are expanded, at most 32 times per schema; recursive, remote,
missing and malformed references become ``Any``. A type whose text exceeds
``max_chars`` is rendered again without tags, and becomes ``Any`` if it is still
too long.
"""

from __future__ import annotations

import builtins
import json
import keyword
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeGuard
from urllib.parse import unquote

from scriptgate.sandbox.naming import bind_identifiers, to_identifier

if TYPE_CHECKING:
    from scriptgate.runtime.tool import AgentTool

__all__ = [
    "DEFAULT_SCHEMA_MAX_CHARS",
    "MAX_REF_EXPANSIONS",
    "MAX_TAG_CHARS",
    "StubStyle",
    "render_stubs",
    "render_tool_sample",
    "schema_to_type",
]

DEFAULT_SCHEMA_MAX_CHARS = 16000
"""Budget of one rendered schema, in characters (pi ``DEFAULT_INPUT_SCHEMA_MAX_CHARS``)."""

MAX_REF_EXPANSIONS = 32
"""How many ``$ref`` s one schema may expand (pi)."""

MAX_TAG_CHARS = 80
"""A constraint tag longer than this is dropped (pi)."""

StubStyle: TypeAlias = Literal["sync", "async"]
"""``"sync"`` renders ``def`` signatures, ``"async"`` renders ``async def``."""

_INDENT = "    "
_ONE_LINE_SIGNATURE_MAX = 100

# Names a generated class must never take: typing names the stubs use, builtins
# (including the keywords True/False/None) and the script-side exception names.
_RESERVED_NAMES = frozenset(dir(builtins)) | {
    "Any",
    "Literal",
    "Never",
    "NotRequired",
    "Required",
    "TypedDict",
    "ToolError",
    "ToolDenied",
    "Optional",
    "Union",
}

# A type is a union of alternatives; each is (is_literal, text). Literal
# alternatives hold the Python literal text and are grouped into one
# ``Literal[...]`` when formatted. The empty union is ``Never``.
_Alt: TypeAlias = tuple[bool, str]
_Alts: TypeAlias = tuple[_Alt, ...]

_ANY: _Alts = ((False, "Any"),)
_NEVER: _Alts = ()
_NONE: _Alts = ((False, "None"),)

_SIMPLE_TYPES: dict[str, _Alts] = {
    "string": ((False, "str"),),
    "integer": ((False, "int"),),
    "number": ((False, "float"),),
    "boolean": ((False, "bool"),),
    "null": _NONE,
}

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class _RefError(Exception):
    """A ``$ref`` that cannot be expanded (remote, missing, malformed, recursive, over budget)."""


# ----------------------------------------------------------------------------- text helpers


def _clean_text(text: str) -> str:
    """Replace lone surrogates (not encodable as UTF-8 source) with U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)
    return text


def _comment_lines(text: str) -> list[str]:
    """Text as comment line bodies: split on line breaks, control characters blanked."""
    text = _clean_text(text)
    lines: list[str] = []
    for raw in _LINE_BREAK.split(text):
        line = "".join(
            " " if ch != "\t" and unicodedata.category(ch) == "Cc" else ch for ch in raw
        ).rstrip()
        lines.append(line)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _py_str(value: str) -> str:
    """A Python string literal with exactly this value, double-quoted when possible."""
    literal = repr(value)
    if literal[0] == "'" and '"' not in value:
        literal = '"' + literal[1:-1] + '"'
    return literal


def _js_number(value: int | float) -> str:
    """A number as JavaScript prints it (``1.0`` → ``1``)."""
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        if not math.isfinite(value):
            return "null"
        return repr(value)
    return str(value)


def _normalise_json(value: Any) -> Any:
    """Integral floats → ints, so JSON text matches JavaScript's ``JSON.stringify``."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _normalise_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise_json(v) for v in value]
    return value


def _compact_json(value: Any) -> str:
    """Compact JSON as JavaScript writes it (non-JSON values as their ``str``)."""
    return json.dumps(
        _normalise_json(value), ensure_ascii=False, separators=(",", ":"), default=str
    )


def _camel(name: str) -> str:
    """``"read_file"`` → ``"ReadFile"``; the base of generated class names."""
    parts = [part for part in to_identifier(name).split("_") if part]
    camel = "".join(part[:1].upper() + part[1:] for part in parts)
    if not camel:
        return "Value"
    if camel[0].isdigit():
        camel = "T" + camel
    return camel


def _is_class_key(key: str) -> bool:
    """A key that can be a ``TypedDict`` class attribute (no mangling, no keyword)."""
    return key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("__")


def _is_kwarg_name(key: str) -> bool:
    """A key a script can pass as a keyword argument (the sandbox rejects ``_``-names)."""
    return key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("_")


def _js_sort_key(key: str) -> bytes:
    """JavaScript's default string order (UTF-16 code units)."""
    return key.encode("utf-16-be", "surrogatepass")


def _format_alts(alts: _Alts) -> str:
    """Python text of a union of alternatives."""
    if not alts:
        return "Never"
    literals = [text for is_lit, text in alts if is_lit]
    parts: list[str] = []
    literal_done = False
    for is_lit, text in alts:
        if is_lit:
            if not literal_done:
                parts.append("Literal[" + ", ".join(literals) + "]")
                literal_done = True
        else:
            parts.append(text)
    return " | ".join(parts)


def _union(members: Iterable[_Alts]) -> _Alts:
    """A union: ``Any`` absorbs everything, ``Never`` disappears, duplicates merge."""
    out: list[_Alt] = []
    for alts in members:
        for alt in alts:
            if alt == (False, "Any"):
                return _ANY
            if alt not in out:
                out.append(alt)
    return tuple(out)


def _literal_alts(value: Any) -> _Alts:
    """The type of one JSON value (``const`` / an ``enum`` member)."""
    if value is None:
        return _NONE
    if isinstance(value, bool):
        return ((True, "True" if value else "False"),)
    if isinstance(value, int):
        return ((True, str(value)),)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return ((True, str(int(value))),)
        return ((False, "float"),)
    if isinstance(value, str):
        return ((True, _py_str(value)),)
    if isinstance(value, list):
        return ((False, "list[Any]"),)
    if isinstance(value, dict):
        return ((False, "dict[str, Any]"),)
    return _ANY


# ----------------------------------------------------------------------------- tags


def _tag_source(schema: Any, root: Any) -> Mapping[str, Any] | None:
    """The schema whose tags describe a property: itself, the single non-null branch
    of a nullable union, or the target of a local ``$ref``."""
    seen = 0
    while isinstance(schema, Mapping) and seen < 4:
        seen += 1
        ref = schema.get("$ref")
        if isinstance(ref, str):
            try:
                schema = _resolve_pointer(root, ref)
            except _RefError:
                return None
            continue
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list):
                non_null = [b for b in branches if not _is_null_schema(b)]
                if len(non_null) == 1 and len(branches) > 1:
                    schema = non_null[0]
                    break
        else:
            return schema
    return schema if isinstance(schema, Mapping) else None


def _is_null_schema(schema: Any) -> bool:
    return isinstance(schema, Mapping) and (
        schema.get("type") == "null" or ("const" in schema and schema["const"] is None)
    )


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _tags(schema: Mapping[str, Any]) -> list[str]:
    """Constraint tags of one schema, in pi's order; tags over 80 characters dropped."""
    tags: list[str] = []
    minimum = schema.get("minimum")
    maximum = schema.get("maximum")
    ex_min = schema.get("exclusiveMinimum")
    ex_max = schema.get("exclusiveMaximum")
    if _is_number(minimum):
        name = "exclusiveMinimum" if ex_min is True else "minimum"
        tags.append(f"@{name} {_js_number(minimum)}")
    if _is_number(maximum):
        name = "exclusiveMaximum" if ex_max is True else "maximum"
        tags.append(f"@{name} {_js_number(maximum)}")
    if _is_number(ex_min):
        tags.append(f"@exclusiveMinimum {_js_number(ex_min)}")
    if _is_number(ex_max):
        tags.append(f"@exclusiveMaximum {_js_number(ex_max)}")
    for key in ("multipleOf", "minLength", "maxLength"):
        if _is_number(schema.get(key)):
            tags.append(f"@{key} {_js_number(schema[key])}")
    for key in ("pattern", "format"):
        if isinstance(schema.get(key), str):
            tags.append(f"@{key} {_one_line(schema[key])}")
    for key in ("minItems", "maxItems"):
        if _is_number(schema.get(key)):
            tags.append(f"@{key} {_js_number(schema[key])}")
    if schema.get("uniqueItems") is True:
        tags.append("@uniqueItems")
    if "default" in schema:
        tags.append(f"@default {_one_line(_compact_json(schema['default']))}")
    if schema.get("deprecated") is True:
        tags.append("@deprecated")
    return [tag for tag in tags if len(tag) <= MAX_TAG_CHARS]


def _one_line(text: str) -> str:
    return _LINE_BREAK.sub(lambda m: m.group(0).encode("unicode_escape").decode(), text)


# ----------------------------------------------------------------------------- $ref


def _resolve_pointer(root: Any, ref: str) -> Any:
    """Resolve a local ``#/a/b`` reference against ``root`` (raises :class:`_RefError`)."""
    if not ref.startswith("#"):
        raise _RefError("remote")
    fragment = unquote(ref[1:])
    if fragment == "":
        return root
    if not fragment.startswith("/"):
        raise _RefError("not a JSON pointer")
    node = root
    for raw in fragment[1:].split("/"):
        if re.search(r"~(?![01])", raw):
            raise _RefError("malformed escape")
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise _RefError("missing")
    return node


# ----------------------------------------------------------------------------- rendering


@dataclass(slots=True)
class _Field:
    key: str
    alts: _Alts
    required: bool
    comments: list[str]


class _Namespace:
    """Class names and definitions shared by every schema of one rendering."""

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self.used: set[str] = set(_RESERVED_NAMES) | set(reserved)
        self.by_body: dict[tuple[str, str], str] = {}
        self.definitions: list[str] = []

    def snapshot(self) -> tuple[set[str], dict[tuple[str, str], str], int]:
        return set(self.used), dict(self.by_body), len(self.definitions)

    def restore(self, state: tuple[set[str], dict[tuple[str, str], str], int]) -> None:
        used, by_body, count = state
        self.used = used
        self.by_body = by_body
        del self.definitions[count:]

    def allocate(self, hint: str) -> str:
        name = hint
        n = 2
        while name in self.used or keyword.iskeyword(name):
            name = f"{hint}{n}"
            n += 1
        self.used.add(name)
        return name


class _Renderer:
    """Renders one schema (``root`` resolves its ``$ref`` s) into a namespace."""

    def __init__(self, root: Any, namespace: _Namespace, *, tags: bool) -> None:
        self.root = root
        self.ns = namespace
        self.with_tags = tags
        self.expansions = 0
        self.stack: list[str] = []

    # -- entry points -----------------------------------------------------------

    def type_text(self, schema: Any, hint: str) -> str:
        return _format_alts(self.alts(schema, hint))

    def alts(self, schema: Any, hint: str) -> _Alts:
        if schema is True:
            return _ANY
        if schema is False:
            return _NEVER
        if not isinstance(schema, Mapping):
            return _ANY
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._ref(ref, hint)
        if "const" in schema:
            return _literal_alts(schema["const"])
        enum = schema.get("enum")
        if isinstance(enum, list):
            return _union(_literal_alts(v) for v in enum)
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list):
                return _union(self.alts(b, hint) for b in branches)
        all_of = schema.get("allOf")
        if isinstance(all_of, list):
            return self._all_of(all_of, hint)
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union(self._typed(schema, t, hint) for t in kind if isinstance(t, str))
        if isinstance(kind, str):
            return self._typed(schema, kind, hint)
        if any(k in schema for k in ("properties", "additionalProperties", "required")):
            return self._object(schema, hint)
        if any(k in schema for k in ("items", "prefixItems")):
            return self._array(schema, hint)
        return _ANY

    # -- pieces -----------------------------------------------------------------

    def _deref(self, ref: str) -> Any:
        if ref in self.stack:
            raise _RefError("recursive")
        if self.expansions >= MAX_REF_EXPANSIONS:
            raise _RefError("too many expansions")
        target = _resolve_pointer(self.root, ref)
        self.expansions += 1
        return target

    def _ref(self, ref: str, hint: str) -> _Alts:
        try:
            target = self._deref(ref)
        except _RefError:
            return _ANY
        last = ref.rstrip("/").rsplit("/", 1)[-1]
        last = unquote(last).replace("~1", "/").replace("~0", "~")
        if last and not last.isdigit() and last != "#":
            hint = _camel(last)
        self.stack.append(ref)
        try:
            return self.alts(target, hint)
        finally:
            self.stack.pop()

    def _typed(self, schema: Mapping[str, Any], kind: str, hint: str) -> _Alts:
        simple = _SIMPLE_TYPES.get(kind)
        if simple is not None:
            return simple
        if kind == "array":
            return self._array(schema, hint)
        if kind == "object":
            return self._object(schema, hint)
        return _ANY

    def _array(self, schema: Mapping[str, Any], hint: str) -> _Alts:
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if not isinstance(prefix, list) and isinstance(items, list):
            prefix = items  # draft-4 tuple form
        if isinstance(prefix, list):
            if not prefix:
                return ((False, "tuple[()]"),)
            parts = [self.type_text(p, f"{hint}Item") for p in prefix]
            return ((False, "tuple[" + ", ".join(parts) + "]"),)
        if isinstance(items, Mapping | bool):
            return ((False, f"list[{self.type_text(items, f'{hint}Item')}]"),)
        return ((False, "list[Any]"),)

    def _peek(self, schema: Any) -> Any:
        """Follow ``$ref`` s without counting them (``True`` when they cannot be followed)."""
        depth = 0
        while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            depth += 1
            if depth > 8 or ref in self.stack:
                return True
            try:
                schema = _resolve_pointer(self.root, ref)
            except _RefError:
                return True
        return schema

    def _all_of(self, parts: list[Any], hint: str) -> _Alts:
        peeked = [(part, self._peek(part)) for part in parts]
        meaningful = [(part, seen) for part, seen in peeked if self.alts_is_meaningful(seen)]
        if not meaningful:
            return _ANY
        if len(meaningful) > 1 and all(_is_object_schema(seen) for _, seen in meaningful):
            merged: list[Any] = []
            for part, seen in meaningful:
                if isinstance(part, Mapping) and isinstance(part.get("$ref"), str):
                    try:
                        self._deref(part["$ref"])  # counts towards the expansion budget
                    except _RefError:
                        continue
                merged.append(seen)
            return self._object(_merge_objects(merged), hint)
        # A single part (or parts Python cannot intersect): render the first as written,
        # so a ``$ref`` keeps its definition's name.
        return self.alts(meaningful[0][0], hint)

    def alts_is_meaningful(self, schema: Any) -> bool:
        """Whether a part of an ``allOf`` constrains the type at all (pi skips unknowns)."""
        if schema is True:
            return False
        if not isinstance(schema, Mapping):
            return schema is False
        return any(
            k in schema
            for k in (
                "$ref",
                "const",
                "enum",
                "anyOf",
                "oneOf",
                "allOf",
                "type",
                "properties",
                "additionalProperties",
                "required",
                "items",
                "prefixItems",
            )
        )

    def fields(
        self, schema: Mapping[str, Any], hint: str, *, ordered: bool = False
    ) -> list[_Field]:
        """The properties of an object schema, sorted by name (``ordered``: in schema order), rendered."""
        props = schema.get("properties")
        if not isinstance(props, Mapping):
            return []
        required_raw = schema.get("required")
        required = set(required_raw) if isinstance(required_raw, list) else set()
        out: list[_Field] = []
        keys = [k for k in props if isinstance(k, str)]
        for key in keys if ordered else sorted(keys, key=_js_sort_key):
            prop = props[key]
            alts = self.alts(prop, hint + _camel(key))
            out.append(_Field(key, alts, key in required, self.comments(prop)))
        return out

    def comments(self, prop: Any) -> list[str]:
        """Comment lines for a property: its description, then a tags line."""
        lines: list[str] = []
        source = _tag_source(prop, self.root)
        description = prop.get("description") if isinstance(prop, Mapping) else None
        if not isinstance(description, str) and source is not None:
            description = source.get("description")
        if isinstance(description, str):
            lines.extend(_comment_lines(description))
        if self.with_tags and source is not None:
            tags = _tags(source)
            if tags:
                lines.append(" ".join(tags))
        return lines

    def _object(self, schema: Mapping[str, Any], hint: str) -> _Alts:
        additional = schema.get("additionalProperties")
        fields = self.fields(schema, hint)
        if not fields:
            if additional is False:
                return self._typeddict(hint, [], None)
            if isinstance(additional, Mapping):
                return ((False, f"dict[str, {self.type_text(additional, f'{hint}Value')}]"),)
            return ((False, "dict[str, Any]"),)
        extra: str | None = None
        if additional is True:
            extra = "Any"
        elif isinstance(additional, Mapping):
            extra = self.type_text(additional, f"{hint}Value")
        return self._typeddict(hint, fields, extra)

    def _typeddict(self, hint: str, fields: list[_Field], extra: str | None) -> _Alts:
        class_form = all(_is_class_key(f.key) for f in fields)
        lines: list[str] = []
        for f in fields:
            text = _format_alts(f.alts)
            if not f.required:
                text = f"NotRequired[{text}]"
            for comment in f.comments:
                lines.append(f"# {comment}".rstrip())
            key = f.key if class_form else _py_str(f.key)
            lines.append(f"{key}: {text}" if class_form else f"{key}: {text},")
        if extra is not None:
            lines.append(f"# Any other key: {extra}")
        body = "\n".join(lines)
        cache_key = (hint, ("class\n" if class_form else "functional\n") + body)
        name = self.ns.by_body.get(cache_key)
        if name is None:
            name = self.ns.allocate(hint)
            self.ns.by_body[cache_key] = name
            if class_form:
                inner = [_INDENT + line for line in lines] or [_INDENT + "pass"]
                if all(line.lstrip().startswith("#") for line in inner):
                    inner.append(_INDENT + "pass")
                definition = f"class {name}(TypedDict):\n" + "\n".join(inner)
            elif not lines:
                definition = f"{name} = TypedDict({_py_str(name)}, {{}})"
            else:
                inner = [_INDENT * 2 + line for line in lines]
                definition = (
                    f"{name} = TypedDict(\n{_INDENT}{_py_str(name)},\n{_INDENT}{{\n"
                    + "\n".join(inner)
                    + f"\n{_INDENT}}},\n)"
                )
            self.ns.definitions.append(definition)
        return ((False, name),)


def _is_object_schema(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind == "object":
        return True
    return kind is None and "properties" in schema


def _merge_objects(parts: list[Any]) -> dict[str, Any]:
    """``allOf`` of object schemas as one object schema."""
    props: dict[str, Any] = {}
    required: list[str] = []
    merged: dict[str, Any] = {"type": "object"}
    for part in parts:
        properties = part.get("properties")
        if isinstance(properties, Mapping):
            for key, value in properties.items():
                props[key] = {"allOf": [props[key], value]} if key in props else value
        names = part.get("required")
        for key in names if isinstance(names, list) else ():
            if isinstance(key, str) and key not in required:
                required.append(key)
        if "additionalProperties" in part and "additionalProperties" not in merged:
            merged["additionalProperties"] = part["additionalProperties"]
    merged["properties"] = props
    merged["required"] = required
    return merged


# ----------------------------------------------------------------------------- public


def _render_budgeted(
    schema: Any, hint: str, namespace: _Namespace, max_chars: int
) -> tuple[str, list[str]]:
    """Render ``schema``; returns the type text and the definitions it added."""
    for tags in (True, False):
        state = namespace.snapshot()
        start = len(namespace.definitions)
        renderer = _Renderer(schema, namespace, tags=tags)
        text = renderer.type_text(schema, hint)
        added = namespace.definitions[start:]
        size = len(text) + sum(len(d) + 2 for d in added)
        if size <= max_chars:
            return text, list(added)
        namespace.restore(state)
    return "Any", []


def schema_to_type(
    schema: Any, *, name: str = "Value", max_chars: int = DEFAULT_SCHEMA_MAX_CHARS
) -> str:
    """The Python typing text for a JSON Schema (pi ``schemaToType``).

    The result is the ``TypedDict`` definitions the type needs (blank-line
    separated, in dependency order), then the type expression itself on the last
    line: ``{"type": "array", "items": {"type": "string"}}`` → ``list[str]``, while
    an object with properties gives ``class Value(TypedDict): ...`` followed by
    ``Value``. ``name`` is the base name of the top-level ``TypedDict``.
    """
    namespace = _Namespace()
    text, definitions = _render_budgeted(schema, _camel(name), namespace, max_chars)
    return "\n\n".join([*definitions, text])


def _docstring(description: str, indent: str) -> str:
    """A docstring literal whose value is exactly ``description`` (after cleandoc)."""
    text = _clean_text(description.strip())
    escaped: list[str] = []
    for ch in text:
        if ch == "\\":
            escaped.append("\\\\")
        elif ch == "\n":
            escaped.append("\n")
        elif ch != "\t" and unicodedata.category(ch) == "Cc":
            escaped.append(f"\\x{ord(ch):02x}")
        else:
            escaped.append(ch)
    body = "".join(escaped).replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    lines = body.split("\n")
    if len(lines) == 1:
        return f'{indent}"""{body}"""'
    rest = [f"{indent}{line}" if line.strip() else "" for line in lines[1:]]
    return f'{indent}"""{lines[0]}\n' + "\n".join(rest) + f'\n{indent}"""'


def _input_params(
    tool: AgentTool, namespace: _Namespace, hint: str, max_chars: int
) -> list[tuple[list[str], str]]:
    schema: Any = tool.parameters_schema
    for tags in (True, False):
        state = namespace.snapshot()
        start = len(namespace.definitions)
        renderer = _Renderer(schema, namespace, tags=tags)
        params = _params_from(renderer, schema, hint)
        added = namespace.definitions[start:]
        size = sum(len(text) + sum(len(c) + 3 for c in comments) for comments, text in params)
        size += sum(len(d) + 2 for d in added)
        if size <= max_chars:
            return params
        namespace.restore(state)
    return [([], "**kwargs: Any")]


def _default_literal(prop: Any) -> str | None:
    """The Python literal of a property's scalar, non-null JSON ``default`` (else ``None``)."""
    if not isinstance(prop, Mapping) or "default" not in prop:
        return None
    value = prop["default"]
    if type(value) in (bool, int, str) or (type(value) is float and math.isfinite(value)):
        text = repr(value)
        return text if len(text) <= 60 else None
    return None


def _params_from(renderer: _Renderer, schema: Any, hint: str) -> list[tuple[list[str], str]]:
    top = schema
    depth = 0
    while isinstance(top, Mapping) and isinstance(top.get("$ref"), str) and depth < 8:
        depth += 1
        try:
            top = renderer._deref(top["$ref"])
        except _RefError:
            top = True
    combinators = isinstance(top, Mapping) and any(
        k in top for k in ("anyOf", "oneOf", "allOf", "enum", "const")
    )
    if _is_object_schema(top) or (
        isinstance(top, Mapping) and top.get("type") == "object" and not combinators
    ):
        assert isinstance(top, Mapping)
        props = top.get("properties")
        keys = [k for k in props if isinstance(k, str)] if isinstance(props, Mapping) else []
        if not combinators and all(_is_kwarg_name(k) for k in keys):
            params: list[tuple[list[str], str]] = []
            # a function's parameters keep the schema's order (the function's own)
            fields = renderer.fields(top, hint, ordered=True)
            if fields:
                params.append(([], "*"))
            for f in fields:
                default = _default_literal(props.get(f.key) if isinstance(props, Mapping) else None)
                if f.required:
                    text = f"{f.key}: {_format_alts(f.alts)}"
                elif default is not None:
                    text = f"{f.key}: {_format_alts(f.alts)} = {default}"
                elif f.alts == _ANY:
                    text = f"{f.key}: Any = None"
                else:
                    text = f"{f.key}: {_format_alts(_union([f.alts, _NONE]))} = None"
                params.append((f.comments, text))
            additional = top.get("additionalProperties")
            if isinstance(additional, Mapping):
                extra = renderer.type_text(additional, f"{hint}Value")
                params.append(([], f"**kwargs: {extra}"))
            elif additional is True or (additional is None and not fields):
                params.append(([], "**kwargs: Any"))
            return params
    return [([], f"args: {renderer.type_text(schema, hint)}"), ([], "/")]


def _render_signature(
    ident: str, params: list[tuple[list[str], str]], returns: str, style: StubStyle
) -> str:
    prefix = "async def" if style == "async" else "def"
    has_comments = any(comments for comments, _ in params)
    one_line = f"{prefix} {ident}(" + ", ".join(text for _, text in params) + f") -> {returns}:"
    if not has_comments and len(one_line) <= _ONE_LINE_SIGNATURE_MAX:
        return one_line
    lines = [f"{prefix} {ident}("]
    for comments, text in params:
        for comment in comments:
            lines.append(f"{_INDENT}# {comment}".rstrip())
        lines.append(f"{_INDENT}{text},")
    lines.append(f") -> {returns}:")
    return "\n".join(lines)


def _render_tool(
    tool: AgentTool, ident: str, namespace: _Namespace, style: StubStyle, max_chars: int
) -> str:
    base = _camel(ident)
    start = len(namespace.definitions)
    params = _input_params(tool, namespace, f"{base}Args", max_chars)
    if tool.output_schema is not None:
        returns, _ = _render_budgeted(tool.output_schema, f"{base}Result", namespace, max_chars)
    else:
        returns = "str"
    definitions = namespace.definitions[start:]
    signature = _render_signature(ident, params, returns, style)
    description = tool.description if isinstance(tool.description, str) else ""
    body = _docstring(description, _INDENT) if description.strip() else f"{_INDENT}..."
    return "\n\n".join([*definitions, f"{signature}\n{body}"])


def render_stubs(
    tools: Iterable[AgentTool],
    *,
    style: StubStyle = "sync",
    max_chars: int = DEFAULT_SCHEMA_MAX_CHARS,
) -> str:
    """The Python API of ``tools`` as the model sees it (pi ``renderDeclarations``).

    One keyword-only signature per tool, e.g.
    ``def read(*, path: str, offset: int | None = None) -> ReadResult:``, preceded
    by the ``TypedDict`` s it uses and followed by a docstring from the tool's
    description. Parameters with a description or constraints put the signature
    on several lines with ``#`` comments. When an argument name cannot be a
    keyword argument (not an identifier, a keyword, or starting with ``_``) or
    the input is not a plain object, the signature takes one positional
    dictionary instead: ``def t(args: TArgs, /) -> str``. The return type comes
    from ``output_schema``, else ``str``. Tool names become identifiers exactly as in
    the sandbox (:func:`~scriptgate.sandbox.naming.assign_identifiers`). ``max_chars`` is the budget
    of each input and output schema.
    """
    if style not in ("sync", "async"):
        raise ValueError(f"style must be 'sync' or 'async', got {style!r}")
    ordered = bind_identifiers((item.name, item) for item in tools)
    namespace = _Namespace(reserved=ordered)
    blocks = [
        _render_tool(item, ident, namespace, style, max_chars) for ident, item in ordered.items()
    ]
    return "\n\n".join(blocks)


def render_tool_sample(tool: AgentTool, *, style: StubStyle = "sync") -> str:
    """pi ``renderToolSample``: the description, a blank line, then the declaration."""
    stub = render_stubs([tool], style=style)
    sample = f"codemode tool declaration:\n```python\n{stub}\n```"
    description = tool.description.strip() if isinstance(tool.description, str) else ""
    return f"{description}\n\n{sample}" if description else sample
