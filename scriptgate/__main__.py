"""``python -m scriptgate``: the same as the ``scriptgate`` command."""

from __future__ import annotations

from scriptgate.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
