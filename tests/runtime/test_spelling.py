"""stored_spelling: the policy judges a path as the file system stores it."""

from __future__ import annotations

import os
from pathlib import Path

from scriptgate.runtime.spelling import stored_spelling

# a case-insensitive file system, as its listing and lookups behave
TREE = {"/r": [".venv", ".git", "Notes.md"], "/r/.venv": ["lib"], "/r/.venv/lib": ["secret.txt"]}


def _key(path: str) -> str:
    return path.casefold()


def _listdir(path: str) -> list[str]:
    for name, entries in TREE.items():
        if _key(name) == _key(path):
            return entries
    raise FileNotFoundError(path)


def _lexists(path: str) -> bool:
    parent, name = os.path.split(path)
    try:
        return _key(name) in {_key(e) for e in _listdir(parent)}
    except FileNotFoundError:
        return False


def _samefile(a: str, b: str) -> bool:
    return _lexists(a) and _key(a) == _key(b)


def _spell(rest: str) -> str:
    return stored_spelling("/r", rest, listdir=_listdir, samefile=_samefile, lexists=_lexists)


def test_policy_case_insensitive_fs_stored_spelling_is_used() -> None:
    assert _spell(".VENV/lib/secret.txt") == "/r/.venv/lib/secret.txt"
    assert _spell(".Git") == "/r/.git"
    assert _spell("notes.MD") == "/r/Notes.md"
    # what does not exist is kept as given (a file about to be written)
    assert _spell(".VENV/LIB/new.txt") == "/r/.venv/lib/new.txt"
    assert _spell("Missing/x") == "/r/Missing/x"


def test_policy_case_insensitive_fs_real_fs_unchanged(tmp_path: Path) -> None:
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "b.txt").write_text("x")
    assert stored_spelling(str(tmp_path), "A/b.txt") == str(tmp_path / "A" / "b.txt")
    assert stored_spelling(str(tmp_path), "A/new") == str(tmp_path / "A" / "new")
