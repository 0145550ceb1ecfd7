"""The spelling a file system stores for a path, for rules that compare names exactly.

On a case-insensitive (macOS APFS/HFS+ by default, Windows NTFS, vfat/exFAT/SMB, ext4
``casefold`` directories) or normalisation-insensitive (APFS) file system, ``.VENV/x``
opens ``.venv/x``; the policy's globs compare text. :func:`stored_spelling` rewrites each
component that does not appear verbatim in its directory's listing, but exists, to the
listing entry that is the same file (``os.path.samefile``), so the policy judges the name
as stored. Pure path work on the host's file system; it knows nothing of tools or policy.
"""

from __future__ import annotations

import os
from collections.abc import Callable

__all__ = ["stored_spelling"]


def stored_spelling(
    base: str,
    rest: str,
    *,
    listdir: Callable[[str], list[str]] = os.listdir,
    samefile: Callable[[str, str], bool] = os.path.samefile,
    lexists: Callable[[str], bool] = os.path.lexists,
) -> str:
    """``os.path.join(base, rest)`` with each component of ``rest`` spelled as stored.

    ``base`` is taken as spelled. A component that does not exist (a file about to be
    written) and everything after it are kept as given; so is one whose directory cannot
    be listed. ``listdir``, ``samefile`` and ``lexists`` are the file system's.
    """
    current = base
    parts = [p for p in rest.split(os.sep) if p]
    for i, part in enumerate(parts):
        candidate = os.path.join(current, part)
        try:
            entries = listdir(current)
        except OSError:
            return os.path.join(current, *parts[i:])
        if part in entries:
            current = candidate
            continue
        if not lexists(candidate):
            return os.path.join(current, *parts[i:])
        lowered = part.casefold()
        # likely spellings first (same letters up to case), then every entry
        ordered = sorted(entries, key=lambda e: e.casefold() != lowered)
        for entry in ordered:
            try:
                if samefile(os.path.join(current, entry), candidate):
                    current = os.path.join(current, entry)
                    break
            except OSError:
                continue
        else:
            current = candidate
    return current
