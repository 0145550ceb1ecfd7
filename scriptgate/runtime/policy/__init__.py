"""Permission policies: ordered allow / deny / ask rules, as a ``before_tool_call`` hook.

A :class:`Policy` holds an ordered list of :class:`Rule`\\ s and a default action.
For a call, the **first** rule whose tool pattern, annotation patterns and
argument patterns all match decides; when no rule matches, ``default`` decides.
``ask`` calls the approval callback (sync or async; it may prompt a human); with
no callback, an ``ask`` becomes a denial whose reason says approval was
unavailable. This module decides; it resolves nothing itself (path arguments
arrive resolved, :mod:`scriptgate.runtime.paths`) and touches no file.

Used as a hook (``Policy.before_tool_call``), a denial blocks the call: the model
(or the script, as ``ToolDenied``) reads ``Denied by policy: <reason>``. The same
rules run without side effects through :meth:`Policy.decide` (``scriptgate check``
previews them). :meth:`Policy.check` validates a policy against the tools it
names; :meth:`Policy.bind` does that and tells the policy the tools' annotations.

Matching rules
--------------
- **Tool patterns** are globs over tool names with :mod:`fnmatch` syntax
  (``*`` any characters, ``?`` one character, ``[abc]`` a set), case-sensitive;
  a pattern matches a tool by its wire name *or* by the identifier a script
  calls it by (``a_b`` matches the tool ``a-b``); a list matches when any does.
- **Annotation patterns** (``[rules.annotations]``) match the tool's MCP
  annotations (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
  ``openWorldHint``, ``title``) by equality. An absent hint has MCP's default
  (``readOnlyHint = false``, ``destructiveHint = true`` unless the tool is
  read-only, ``idempotentHint = false``, ``openWorldHint = true``), so a tool
  that says nothing counts as destructive: ``deny destructive`` fails closed.
  The policy knows a tool's annotations once :meth:`Policy.bind` saw it.
- **Argument patterns** (``[rules.arguments]``) are matched against the
  validated, coerced — and, for path arguments, resolved — arguments, one
  top-level argument each; all of them must match. A list of patterns matches
  when any does. A missing argument never matches (but a tool may declare what
  a missing path means: the file tools' missing ``path`` is the root, ``"."``).
  Non-string patterns (numbers, booleans) match equal values (booleans only
  equal booleans).
- **Path arguments** are the ones the tool declares
  (:class:`~scriptgate.runtime.paths.PathArguments`): the pipeline has already
  turned them into the real path the tool will open — symlinks followed,
  absolute and ``..`` spellings canonicalised, escapes refused — so
  ``/abs/root/.git/config``, ``../root/.git/config`` and a link into ``.git``
  all arrive as ``.git/config``. A relative pattern matches the root-relative
  form (``"."`` is the root), an absolute pattern (``/srv/**``) the real
  absolute path. Path globs: ``*`` any characters within one segment (not
  ``/``), ``?`` one character other than ``/``, ``[abc]`` a set, ``**`` as a
  whole segment zero or more segments (``src/**`` matches ``src`` and everything
  below; ``**/*.py`` matches ``a.py`` and ``x/y/a.py``). An array of paths is
  judged path by path and the call gets the strictest answer (deny, then ask,
  then allow). A walking tool (``find``, ``grep``, ``ls``) lists and descends
  only into entries the same rules allow for that tool — or that fall under
  the ``ask`` rule a human just approved for the call — so a denied subtree is
  neither walked nor listed.
- **Any other string argument is plain text**: no normalisation at all. A
  pattern without glob characters is an exact value (``boss@example.com`` does
  not match ``attacker@evil.example/../boss@example.com``). In text, ``*`` is a
  run of *word* characters — letters, digits and ``_ . - + = % ~`` — and ``?``
  one of them; neither crosses ``/``, ``:``, ``@``, ``,``, whitespace or shell
  punctuation, so ``*.example.com`` matches ``api.example.com`` but not
  ``evil.example:x@a.example.com``, and ``git status*`` does not admit
  ``git status; curl … | sh``. ``**`` is any text at all (separators
  included): ``https://api.example.com/**`` admits every URL that starts with
  that prefix — and, being unnormalised, not
  ``https://evil.example/../api.example.com/v1``. ``[abc]`` is one character
  of the set, ``[!abc]`` one word character outside it.

The TOML file
-------------
.. code-block:: toml

    default = "deny"          # allow | deny | ask, for calls no rule matches
    [[rules]]
    tool = "read"             # a tool name or a glob over names (or a list)
    action = "allow"
    [rules.arguments]
    path = "src/**"           # a glob (or exact value) per argument (or a list)
    [[rules]]
    tool = "*"
    action = "deny"
    reason = "no destructive tools"   # keys of the rule come before its sub-tables
    [rules.annotations]
    destructiveHint = true

A key written after ``[rules.arguments]`` belongs to the arguments table (TOML's
rule); :meth:`Policy.check` reports an argument the named tools do not have —
with a hint when it is a rule key such as ``reason``.

The package (this ``__init__`` only re-exports):

- :mod:`.matching`: tool identifiers, the path and text globs, annotation defaults;
- :mod:`.rules`: :class:`Rule` and the records (:class:`Decision`, :class:`PolicyVerdict`, …);
- :mod:`.hook`: :class:`Policy` — decisions, approval, walk filters, the hook;
- :mod:`.loading`: the TOML shape and its errors;
- :mod:`.checking`: :meth:`Policy.check`'s findings.

It imports only :mod:`scriptgate.runtime` and :mod:`scriptgate.errors` (never
``sandbox`` or ``tools``).
"""

from __future__ import annotations

from scriptgate.runtime.policy.hook import Policy
from scriptgate.runtime.policy.matching import (
    ANNOTATION_DEFAULTS,
    Action,
    match_path_glob,
    match_text_glob,
    tool_identifier,
)
from scriptgate.runtime.policy.matching import Pattern as Pattern
from scriptgate.runtime.policy.matching import effective_annotations as effective_annotations
from scriptgate.runtime.policy.rules import (
    ApprovalCallback,
    ApprovalRequest,
    Decision,
    PolicyProblem,
    PolicyVerdict,
    Rule,
)
from scriptgate.runtime.policy.rules import Paths as Paths

__all__ = [
    "ANNOTATION_DEFAULTS",
    "Action",
    "ApprovalCallback",
    "ApprovalRequest",
    "Decision",
    "Policy",
    "PolicyProblem",
    "PolicyVerdict",
    "Rule",
    "match_path_glob",
    "match_text_glob",
    "tool_identifier",
]
