"""The coercing JSON-Schema validator (pi §2), as a small package.

:func:`compile_schema` turns a JSON Schema (draft 2020-12, draft-7 forms accepted) into a
:class:`CompiledSchema`: a tree of small node objects whose validity checks are Python
closures built once. A :class:`CompiledSchema` offers

- :meth:`CompiledSchema.coerce`: pi's three lenient coercion passes (§2.2), copy-on-write;
- :meth:`CompiledSchema.check`: the error list (§2.5–2.6) without coercion;
- :meth:`CompiledSchema.parse`: coerce, then check → :class:`ParseResult`.

The parts, each owning one seam: ``_model`` (issues, JSON helpers, the node record),
``_compile`` (schema → nodes, references), ``_keywords`` (validity closures),
``_messages`` (pi's errors and texts), ``_coerce`` (the three passes and their fused
walk), ``_fastpath`` (the generated check for input that needs nothing). This module is
the public face and the only one other code imports.

Semantics follow pi-schema 1.6.0 with pi-ai's options, with JavaScript number and string
rules (:mod:`scriptgate.runtime._jsnum`) and ECMAScript ``pattern``
(:mod:`scriptgate.runtime._ecma_regex`).

Deliberate divergences from upstream (documented, each named by a test):

- pass 1 (optional nulls) also looks through ``$ref`` targets, ``allOf`` members and
  ``anyOf``/``oneOf`` branches, so an optional ``null`` there is dropped instead of being
  fabricated into ``"null"`` or ``0`` (the ``fitchmultz/pi`` fix, §2.2);
- for a union in pass 1, a value some branch already accepts is left alone; otherwise the
  first branch whose drop-then-coerce result it accepts decides;
- an integral float under ``type: "integer"`` comes out as a Python ``int``;
- an ``int`` beyond 2^53 keeps its exact value (pi rounds it to a double), in every
  keyword (``multipleOf`` included);
- object keys keep their order (JavaScript lists integer-like keys first);
- ``$dynamicRef`` resolves against the outermost (root) resource's ``$dynamicAnchor`` of
  that name, else statically — the dynamic scope of a single compiled document.

Where the spec is silent, pi's walker is followed as inferred: a node met again with the
very same value through a cycle of in-place applicators (``A → B → anyOf[A, integer]``)
counts as not matching (the least fixed point), so such schemas resolve.

Invariants (property-tested): coercion never mutates its input; a value that already
validates comes back unchanged (the very same object) except where pi's pass 2 changes
it (a scalar wrapped under an untyped ``items`` node, an integral float made an ``int``);
parsing a coerced value again changes nothing; the fused walk equals the three passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scriptgate.errors import SchemaCompileError
from scriptgate.runtime.schema._coerce import _fused
from scriptgate.runtime.schema._compile import _Compiler
from scriptgate.runtime.schema._fastpath import _generate_fast
from scriptgate.runtime.schema._keywords import _build_valid
from scriptgate.runtime.schema._messages import _errors
from scriptgate.runtime.schema._model import (
    ParseResult,
    UnresolvedRefs,
    ValidationIssue,
    _Node,
    escape_pointer_segment,
    pointer_to_path,
)

__all__ = [
    "CompiledSchema",
    "ParseResult",
    "ValidationIssue",
    "compile_schema",
    "escape_pointer_segment",
    "pointer_to_path",
]

# ----------------------------------------------------------------------------- public


class CompiledSchema:
    """A compiled JSON Schema: validate, coerce (pi §2.2) and report errors (pi §2.5)."""

    __slots__ = ("__weakref__", "_coerce", "_fast", "_root", "_source", "_valid")

    def __init__(self, root: _Node, *, coerce: bool) -> None:
        #: Set by caches that key on the schema's identity (see ``validation``).
        self._source: Any = None
        self._root = root
        self._coerce = coerce
        self._valid = _build_valid(root, False)
        self._fast = _generate_fast(root)

    def is_valid(self, value: Any) -> bool:
        """Whether ``value`` validates as it is (no coercion)."""
        return self._valid(value)

    def coerce(self, value: Any) -> Any:
        """Apply the three coercion passes; copy-on-write, the input is never mutated.

        A value that already validates strictly is returned as is (the same object);
        pi's coercion changes a valid value only where it wraps a scalar under an
        untyped ``items`` node or makes an integral float an ``int``.
        """
        if self._fast(value):
            return value
        return _fused(self._root, value, None, True)

    def _coerce_unchecked(self, value: Any) -> Any:
        """The coerced value, for a value the fast check has already refused."""
        if not self._coerce:
            return value
        return _fused(self._root, value, None, True)

    def check(self, value: Any) -> list[ValidationIssue]:
        """The validation issues of ``value`` as it is, in pi's order (empty = valid)."""
        if self._valid(value):
            return []
        out: list[ValidationIssue] = []
        _errors(self._root, value, "", out)
        if not out:
            out.append(ValidationIssue("", "schema", "invalid"))
        return out

    def parse(self, value: Any) -> ParseResult:
        """Coerce (when enabled), then check: the coerced value or the errors.

        A schema that recurses without consuming the value (``{"anyOf": [{"$ref": "#"}]}``)
        or a value nested beyond Python's recursion limit yields the generic
        ``invalid`` error instead of an exception.
        """
        try:
            if self._fast(value):
                return ParseResult(True, value)
            coerced = self._coerce_unchecked(value)
            if self._valid(coerced):
                return ParseResult(True, coerced)
            return ParseResult(False, coerced, tuple(self.check(coerced)))
        except RecursionError:
            return ParseResult(False, value, (ValidationIssue("", "schema", "invalid"),))


def compile_schema(
    schema: Any,
    *,
    coerce: bool = True,
    formats: bool = True,
    unresolved_refs: UnresolvedRefs = "reject",
    schemas: Mapping[str, Any] | None = None,
) -> CompiledSchema:
    """Compile a JSON Schema (a mapping or a boolean) into a :class:`CompiledSchema`.

    - ``coerce``: :meth:`CompiledSchema.parse` applies pi's coercion passes first;
    - ``formats``: check the standard ``format`` names (unknown names always pass);
    - ``unresolved_refs="reject"``: a ``$ref`` naming nothing validates as the ``false``
      schema at its place (error ``unresolved reference <ref>``); ``"throw"`` raises
      :class:`~scriptgate.errors.SchemaCompileError` at compile time instead;
    - ``schemas``: documents for remote ``$ref`` URIs.

    Raises :class:`~scriptgate.errors.SchemaCompileError` for a malformed schema
    (``A schema must be an object or a boolean, got <json>``). The schema is never
    mutated and the compiled object keeps no reference to the root schema object.
    """
    if unresolved_refs not in ("reject", "throw"):
        raise SchemaCompileError(
            f"unresolved_refs must be 'reject' or 'throw', got {unresolved_refs!r}"
        )
    compiler = _Compiler(schema, formats=formats, unresolved_refs=unresolved_refs, schemas=schemas)
    try:
        root = compiler.node(schema, "")
        compiler.finish()
    except RecursionError:
        raise SchemaCompileError("schema is nested too deeply") from None
    return CompiledSchema(root, coerce=coerce)
