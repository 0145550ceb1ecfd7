"""Bridges between scriptgate and agent frameworks, in both directions.

One module per framework, each behind its own optional extra, imported only
when used (importing this package imports no framework):

- :mod:`scriptgate.integrations.pydantic_ai` (``scriptgate[pydantic-ai]``):
  :func:`~scriptgate.integrations.pydantic_ai.to_pydantic_ai`,
  :func:`~scriptgate.integrations.pydantic_ai.to_pydantic_ai_toolset`,
  :func:`~scriptgate.integrations.pydantic_ai.from_pydantic_ai`;
- :mod:`scriptgate.integrations.openai_agents` (``scriptgate[openai-agents]``):
  :func:`~scriptgate.integrations.openai_agents.to_openai_agents`,
  :func:`~scriptgate.integrations.openai_agents.from_openai_agents`;
- :mod:`scriptgate.integrations.langchain` (``scriptgate[langchain]``):
  :func:`~scriptgate.integrations.langchain.to_langchain`,
  :func:`~scriptgate.integrations.langchain.from_langchain`.

``to_*`` hands any :class:`~scriptgate.AgentTool` (above all the code-mode tool of
:func:`~scriptgate.codemode_tool`) to the framework: each call runs through
:func:`~scriptgate.run_tool_call` (validation, hooks), and an error result reaches
the framework as that framework's error. ``from_*`` turns the framework's tools into
``AgentTool``\\ s, so a script calls them like any tool, with scriptgate's
validation, policy and audit.

This layer sits on top: it uses only the public API of :mod:`scriptgate` and
:mod:`scriptgate.sandbox`, never their private modules.
"""

from __future__ import annotations

__all__: list[str] = []
