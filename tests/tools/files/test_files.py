"""The file-system toolset: confinement to the root, read windows, pi's edit semantics, the queue."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import TaskStatus

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortController, AbortSignal
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, ImageContent, ToolCall
from scriptgate.tools.files import FileToolError, file_tools, resolve_inside

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)

OUTSIDE_MSG = "outside the root directory"


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n", encoding="utf-8")
    (root / "a.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("import os\nprint('hi')\n", encoding="utf-8")
    (root / "src" / "util.py").write_text("def helper():\n    return 42\n", encoding="utf-8")
    (root / "link_out.txt").symlink_to(outside / "secret.txt")
    (root / "dir_out").symlink_to(outside, target_is_directory=True)
    (root / "dangling_out").symlink_to(outside / "new.txt")
    (root / "link_in.txt").symlink_to(root / "a.txt")
    return {"root": root, "outside": outside}


def tools_for(root: Path, **options: Any) -> dict[str, AgentTool]:
    return {tool.name: tool for tool in file_tools(root, **options)}


async def call(
    tools: dict[str, AgentTool], name: str, args: dict[str, Any], signal: AbortSignal | None = None
) -> AgentToolResult:
    tool = tools[name]
    if tool.prepare_arguments is not None:
        args = tool.prepare_arguments(args)
    result = tool.execute("call-1", args, signal, None)
    assert not isinstance(result, AgentToolResult)  # every file tool is async
    return await result


# ----------------------------------------------------------------------------- resolve_inside


def test_resolve_inside_accepts_relative_absolute_and_inner_dotdot(layout: dict[str, Path]) -> None:
    root = layout["root"]
    real = root.resolve()
    assert resolve_inside(root, "a.txt") == real / "a.txt"
    assert resolve_inside(root, str(real / "src" / "main.py")) == real / "src" / "main.py"
    assert resolve_inside(root, "src/../a.txt") == real / "a.txt"
    assert resolve_inside(root, "") == real
    assert resolve_inside(root, "new/dir/file.txt") == real / "new" / "dir" / "file.txt"


@pytest.mark.parametrize("path", ["..", "../outside/secret.txt", "src/../../outside", "a/../../x"])
def test_resolve_inside_rejects_dotdot_escape(layout: dict[str, Path], path: str) -> None:
    with pytest.raises(FileToolError, match=OUTSIDE_MSG):
        resolve_inside(layout["root"], path)


def test_resolve_inside_rejects_absolute_outside(layout: dict[str, Path]) -> None:
    with pytest.raises(FileToolError, match=OUTSIDE_MSG):
        resolve_inside(layout["root"], "/etc/passwd")
    with pytest.raises(FileToolError, match=OUTSIDE_MSG):
        resolve_inside(layout["root"], str(layout["outside"] / "secret.txt"))


@pytest.mark.parametrize(
    "path", ["link_out.txt", "dir_out/secret.txt", "dir_out/new.txt", "dir_out", "dangling_out"]
)
def test_resolve_inside_rejects_symlinks_leaving_the_root(
    layout: dict[str, Path], path: str
) -> None:
    with pytest.raises(FileToolError, match="symbolic link"):
        resolve_inside(layout["root"], path)


def test_resolve_inside_accepts_absolute_paths_through_a_symlinked_root(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real, target_is_directory=True)
    assert resolve_inside(alias, str(alias / "f.txt")) == real.resolve() / "f.txt"
    with pytest.raises(FileToolError, match=OUTSIDE_MSG):
        resolve_inside(alias, str(alias / ".." / "x"))


def test_resolve_inside_follows_links_that_stay_inside(layout: dict[str, Path]) -> None:
    assert resolve_inside(layout["root"], "link_in.txt") == layout["root"].resolve() / "a.txt"


def test_resolve_inside_rejects_nul_and_non_strings(layout: dict[str, Path]) -> None:
    with pytest.raises(FileToolError, match="NUL"):
        resolve_inside(layout["root"], "a\x00b")
    with pytest.raises(FileToolError, match="must be a string"):
        resolve_inside(layout["root"], 5)  # type: ignore[arg-type]


def test_file_tools_root_must_be_an_existing_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        file_tools(tmp_path / "missing")
    (tmp_path / "f").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not a directory"):
        file_tools(tmp_path / "f")
    with pytest.raises(ConfigurationError, match="max_read_lines"):
        file_tools(tmp_path, max_read_lines=0)


def test_file_tools_names_schemas_and_read_only(layout: dict[str, Path]) -> None:
    tools = file_tools(layout["root"])
    assert [t.name for t in tools] == ["read", "write", "edit", "ls", "find", "grep"]
    assert all(t.output_schema is not None and t.description for t in tools)
    edit = next(t for t in tools if t.name == "edit")
    assert edit.parameters_schema["required"] == ["path", "edits"]
    assert [t.name for t in file_tools(layout["root"], read_only=True)] == [
        "read",
        "ls",
        "find",
        "grep",
    ]


# ----------------------------------------------------------------------------- escapes, every tool

ESCAPES = [
    "../outside/secret.txt",
    "/etc/passwd",
    "link_out.txt",
    "dir_out/secret.txt",
    "dangling_out",
]


def _args_for(name: str, path: str) -> dict[str, Any]:
    return {
        "read": {"path": path},
        "write": {"path": path, "content": "pwned"},
        "edit": {"path": path, "edits": [{"oldText": "top", "newText": "pwned"}]},
        "ls": {"path": path},
        "find": {"pattern": "*", "path": path},
        "grep": {"pattern": "secret", "path": path},
    }[name]


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["read", "write", "edit", "ls", "find", "grep"])
@pytest.mark.parametrize("path", ESCAPES)
async def test_files_every_tool_refuses_every_escape(
    layout: dict[str, Path], name: str, path: str
) -> None:
    tools = tools_for(layout["root"])
    with pytest.raises(FileToolError, match=OUTSIDE_MSG):
        await call(tools, name, _args_for(name, path))
    assert (layout["outside"] / "secret.txt").read_text(encoding="utf-8") == "top secret\n"
    assert not (layout["outside"] / "new.txt").exists()


@pytest.mark.anyio
async def test_files_write_through_dangling_symlink_out_creates_nothing(
    layout: dict[str, Path],
) -> None:
    tools = tools_for(layout["root"])
    with pytest.raises(FileToolError, match="symbolic link"):
        await call(tools, "write", {"path": "dangling_out", "content": "x"})
    with pytest.raises(FileToolError, match="symbolic link"):
        await call(tools, "write", {"path": "dir_out/sub/new.txt", "content": "x"})
    assert sorted(p.name for p in layout["outside"].iterdir()) == ["secret.txt"]


# ----------------------------------------------------------------------------- read


@pytest.mark.anyio
async def test_read_whole_file_with_structured_content(layout: dict[str, Path]) -> None:
    result = await call(tools_for(layout["root"]), "read", {"path": "a.txt"})
    assert result.text_content() == "alpha\nbeta\ngamma"
    assert result.structured_content == {
        "path": "a.txt",
        "content": "alpha\nbeta\ngamma",
        "offset": 1,
        "lines": 3,
        "total_lines": 3,
        "truncated": False,
        "next_offset": None,
    }


@pytest.mark.anyio
async def test_read_offset_and_limit_say_how_to_continue(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    result = await call(tools, "read", {"path": "a.txt", "offset": 2, "limit": 1})
    assert result.text_content() == "beta\n\n[1 more lines in file. Use offset=3 to continue.]"
    assert result.structured_content["next_offset"] == 3
    assert result.structured_content["truncated"] is False
    last = await call(tools, "read", {"path": "a.txt", "offset": 3})
    assert last.text_content() == "gamma"


@pytest.mark.anyio
async def test_read_offset_beyond_end_is_an_error(layout: dict[str, Path]) -> None:
    with pytest.raises(FileToolError, match=r"^Offset 9 is beyond end of file \(3 lines total\)$"):
        await call(tools_for(layout["root"]), "read", {"path": "a.txt", "offset": 9})


@pytest.mark.anyio
async def test_read_line_budget_truncates_with_pi_note(layout: dict[str, Path]) -> None:
    (layout["root"] / "many.txt").write_text(
        "".join(f"line {i}\n" for i in range(1, 11)), encoding="utf-8"
    )
    tools = tools_for(layout["root"], max_read_lines=4)
    result = await call(tools, "read", {"path": "many.txt"})
    assert result.text_content() == (
        "line 1\nline 2\nline 3\nline 4\n\n[Showing lines 1-4 of 10. Use offset=5 to continue.]"
    )
    assert result.structured_content["truncated"] is True
    assert result.structured_content["next_offset"] == 5


@pytest.mark.anyio
async def test_read_byte_budget_truncates_with_pi_note(layout: dict[str, Path]) -> None:
    (layout["root"] / "wide.txt").write_text("x" * 40 + "\n" + "y" * 40 + "\n", encoding="utf-8")
    result = await call(tools_for(layout["root"], max_read_bytes=60), "read", {"path": "wide.txt"})
    assert result.text_content() == (
        "x" * 40 + "\n\n[Showing lines 1-1 of 2 (60B limit). Use offset=2 to continue.]"
    )


@pytest.mark.anyio
async def test_read_huge_first_line_shows_its_beginning(layout: dict[str, Path]) -> None:
    (layout["root"] / "oneline.txt").write_text("é" * 100_000 + "\nnext\n", encoding="utf-8")
    result = await call(
        tools_for(layout["root"], max_read_bytes=1001), "read", {"path": "oneline.txt"}
    )
    data = result.structured_content
    assert data["content"] == "é" * 500  # cut on a character boundary
    assert data["truncated"] is True
    assert data["next_offset"] == 2
    assert "[Line 1 is 195.3KB, exceeds the 1001B limit" in result.text_content()
    assert result.text_content().endswith("Use offset=2 to continue.]")


@pytest.mark.anyio
async def test_read_large_file_in_windows(layout: dict[str, Path]) -> None:
    lines = 200_000
    big = "".join(f"entry {i:06d} " + "z" * 20 + "\n" for i in range(1, lines + 1))
    (layout["root"] / "big.log").write_text(big, encoding="utf-8")
    tools = tools_for(layout["root"])
    result = await call(tools, "read", {"path": "big.log", "offset": 150_001, "limit": 3})
    data = result.structured_content
    assert data["total_lines"] == lines
    assert data["content"].splitlines()[0].startswith("entry 150001 ")
    assert data["lines"] == 3
    assert data["next_offset"] == 150_004
    default = await call(tools, "read", {"path": "big.log"})
    assert default.structured_content["lines"] < 2000  # the 50KB budget cut first
    assert len(default.text_content().encode()) < 51 * 1024


@pytest.mark.anyio
async def test_read_empty_file_and_crlf(layout: dict[str, Path]) -> None:
    (layout["root"] / "empty.txt").write_bytes(b"")
    (layout["root"] / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    tools = tools_for(layout["root"])
    empty = await call(tools, "read", {"path": "empty.txt"})
    assert empty.text_content() == ""
    assert empty.structured_content["total_lines"] == 0
    dos = await call(tools, "read", {"path": "dos.txt"})
    assert dos.text_content() == "one\ntwo"


@pytest.mark.anyio
async def test_read_binary_and_undecodable_files_are_clear_errors(layout: dict[str, Path]) -> None:
    (layout["root"] / "blob.bin").write_bytes(b"\x00\x01\x02" * 1000)
    (layout["root"] / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    tools = tools_for(layout["root"])
    with pytest.raises(FileToolError, match=r"^Cannot read blob\.bin: it is a binary file"):
        await call(tools, "read", {"path": "blob.bin"})
    with pytest.raises(FileToolError, match="not UTF-8 text"):
        await call(tools, "read", {"path": "latin1.txt"})


@pytest.mark.anyio
async def test_read_image_returns_an_image_block(layout: dict[str, Path]) -> None:
    (layout["root"] / "pixel.png").write_bytes(PNG)
    tools = tools_for(layout["root"])
    result = await call(tools, "read", {"path": "pixel.png"})
    image = result.content[1]
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG
    assert result.structured_content["mime_type"] == "image/png"
    with pytest.raises(FileToolError, match="image limit"):
        await call(tools_for(layout["root"], max_image_bytes=10), "read", {"path": "pixel.png"})


@pytest.mark.anyio
async def test_read_missing_file_and_directory(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    with pytest.raises(FileToolError, match=r"^File not found: nope\.txt$"):
        await call(tools, "read", {"path": "nope.txt"})
    with pytest.raises(FileToolError, match=r"^Path is a directory: src"):
        await call(tools, "read", {"path": "src"})


@pytest.mark.anyio
async def test_read_symlink_loop_is_a_clear_error(layout: dict[str, Path]) -> None:
    (layout["root"] / "loop").symlink_to(layout["root"] / "loop")
    with pytest.raises(FileToolError, match=r"^Could not read loop: "):
        await call(tools_for(layout["root"]), "read", {"path": "loop"})


# ----------------------------------------------------------------------------- write


@pytest.mark.anyio
async def test_write_creates_parents_and_overwrites(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    result = await call(tools, "write", {"path": "new/deep/f.txt", "content": "héllo\n"})
    assert result.text_content() == "Successfully wrote 7 bytes to new/deep/f.txt"
    assert result.structured_content == {"path": "new/deep/f.txt", "bytes": 7}
    target = layout["root"] / "new" / "deep" / "f.txt"
    assert target.read_text(encoding="utf-8") == "héllo\n"
    await call(tools, "write", {"path": "new/deep/f.txt", "content": "v2"})
    assert target.read_text(encoding="utf-8") == "v2"


@pytest.mark.anyio
async def test_write_to_a_directory_is_an_error(layout: dict[str, Path]) -> None:
    with pytest.raises(FileToolError, match=r"^Path is a directory: src$"):
        await call(tools_for(layout["root"]), "write", {"path": "src", "content": "x"})


@pytest.mark.anyio
async def test_write_honours_an_aborted_signal(layout: dict[str, Path]) -> None:
    signal = AbortController.aborted_signal()
    with pytest.raises(FileToolError, match=r"^Operation aborted$"):
        await call(tools_for(layout["root"]), "write", {"path": "w.txt", "content": "x"}, signal)
    assert not (layout["root"] / "w.txt").exists()


# ----------------------------------------------------------------------------- edit


@pytest.mark.anyio
async def test_edit_single_replacement(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    result = await call(
        tools, "edit", {"path": "a.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]}
    )
    assert result.text_content() == "Successfully replaced 1 block(s) in a.txt."
    assert (layout["root"] / "a.txt").read_text(encoding="utf-8") == "alpha\nBETA\ngamma\n"
    assert result.structured_content["first_changed_line"] == 2
    assert result.details["firstChangedLine"] == 2
    assert "-beta\n+BETA" in result.details["diff"]


@pytest.mark.anyio
async def test_edit_multiple_snippets_match_the_original(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    edits = [
        {"oldText": "gamma", "newText": "alpha"},  # the new text would match edit 2 afterwards
        {"oldText": "alpha", "newText": "first"},
    ]
    result = await call(tools, "edit", {"path": "a.txt", "edits": edits})
    assert result.text_content() == "Successfully replaced 2 block(s) in a.txt."
    assert (layout["root"] / "a.txt").read_text(encoding="utf-8") == "first\nbeta\nalpha\n"


@pytest.mark.anyio
async def test_edit_missing_snippet_texts(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    with pytest.raises(FileToolError) as single:
        await call(tools, "edit", {"path": "a.txt", "edits": [{"oldText": "zeta", "newText": ""}]})
    assert str(single.value) == (
        "Could not find the exact text in a.txt. The old text must match exactly including all "
        "whitespace and newlines."
    )
    with pytest.raises(FileToolError) as multi:
        await call(
            tools,
            "edit",
            {
                "path": "a.txt",
                "edits": [{"oldText": "alpha", "newText": "A"}, {"oldText": "zeta", "newText": ""}],
            },
        )
    assert str(multi.value) == (
        "Could not find edits[1] in a.txt. The oldText must match exactly including all "
        "whitespace and newlines."
    )
    assert (layout["root"] / "a.txt").read_text(encoding="utf-8") == "alpha\nbeta\ngamma\n"


@pytest.mark.anyio
async def test_edit_not_unique_snippet_texts(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    with pytest.raises(FileToolError) as single:
        await call(tools, "edit", {"path": "a.txt", "edits": [{"oldText": "a\n", "newText": "A"}]})
    assert str(single.value) == (
        "Found 3 occurrences of the text in a.txt. The text must be unique. Please provide more "
        "context to make it unique."
    )
    with pytest.raises(FileToolError) as multi:
        await call(
            tools,
            "edit",
            {
                "path": "a.txt",
                "edits": [{"oldText": "beta", "newText": "B"}, {"oldText": "a\n", "newText": "T"}],
            },
        )
    assert str(multi.value) == (
        "Found 3 occurrences of edits[1] in a.txt. Each oldText must be unique. Please provide "
        "more context to make it unique."
    )


@pytest.mark.anyio
async def test_edit_overlap_empty_and_no_change(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    with pytest.raises(FileToolError) as overlap:
        await call(
            tools,
            "edit",
            {
                "path": "a.txt",
                "edits": [
                    {"oldText": "alpha\nbeta", "newText": "x"},
                    {"oldText": "beta\ngamma", "newText": "y"},
                ],
            },
        )
    assert str(overlap.value) == (
        "edits[0] and edits[1] overlap in a.txt. Merge them into one edit or target disjoint "
        "regions."
    )
    with pytest.raises(FileToolError, match=r"^oldText must not be empty in a\.txt\.$"):
        await call(tools, "edit", {"path": "a.txt", "edits": [{"oldText": "", "newText": "x"}]})
    with pytest.raises(
        FileToolError, match=r"^No changes made to a\.txt\. The replacement produced"
    ):
        await call(
            tools, "edit", {"path": "a.txt", "edits": [{"oldText": "beta", "newText": "beta"}]}
        )


@pytest.mark.anyio
async def test_edit_accepts_legacy_and_stringified_arguments(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    shim = tools["edit"].prepare_arguments
    assert shim is not None
    same = {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}]}
    assert shim(same) is same
    assert shim({"path": "a.txt", "oldText": "before", "newText": "after"}) == {
        "path": "a.txt",
        "edits": [{"oldText": "before", "newText": "after"}],
    }
    assert shim(
        {
            "path": "a.txt",
            "edits": [{"oldText": "a", "newText": "b"}],
            "oldText": "c",
            "newText": "d",
        }
    ) == {
        "path": "a.txt",
        "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}],
    }
    half = {"path": "a.txt", "oldText": "only old"}
    assert shim(half) is half  # left for validation to report
    await call(tools, "edit", {"path": "a.txt", "oldText": "alpha", "newText": "ALPHA"})
    await call(tools, "edit", {"path": "a.txt", "edits": '[{"oldText": "beta", "newText": "B"}]'})
    await call(tools, "edit", {"path": "a.txt", "edits": {"oldText": "gamma", "newText": "G"}})
    assert (layout["root"] / "a.txt").read_text(encoding="utf-8") == "ALPHA\nB\nG\n"


@pytest.mark.anyio
async def test_edit_falls_back_to_pi_fuzzy_matching(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    quotes = layout["root"] / "quotes.py"
    quotes.write_text("greet = \u201chello\u201d   \nkeep = 1\u20132\n", encoding="utf-8")
    await call(
        tools,
        "edit",
        {"path": "quotes.py", "edits": [{"oldText": 'greet = "hello"', "newText": "greet = 'hi'"}]},
    )
    # As in pi, a fuzzy match rewrites the file in normalised form.
    assert quotes.read_text(encoding="utf-8") == "greet = 'hi'\nkeep = 1-2\n"
    twice = layout["root"] / "twice.txt"
    twice.write_text("\u2018x\u2019 and 'x'\n", encoding="utf-8")
    with pytest.raises(FileToolError, match=r"^Found 2 occurrences of the text in twice\.txt\."):
        await call(
            tools, "edit", {"path": "twice.txt", "edits": [{"oldText": "'x'", "newText": "y"}]}
        )
    assert twice.read_text(encoding="utf-8") == "\u2018x\u2019 and 'x'\n"


@pytest.mark.anyio
async def test_edit_keeps_crlf_and_bom(layout: dict[str, Path]) -> None:
    path = layout["root"] / "win.txt"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    await call(
        tools_for(layout["root"]),
        "edit",
        {"path": "win.txt", "edits": [{"oldText": "one\ntwo", "newText": "1\n2"}]},
    )
    assert path.read_bytes() == b"\xef\xbb\xbf1\r\n2\r\nthree\r\n"


@pytest.mark.anyio
async def test_edit_binary_large_and_missing_files(layout: dict[str, Path]) -> None:
    (layout["root"] / "blob.bin").write_bytes(b"ab\x00cd")
    (layout["root"] / "big.txt").write_text("x" * 2000, encoding="utf-8")
    tools = tools_for(layout["root"], max_edit_bytes=1000)
    edit = {"edits": [{"oldText": "ab", "newText": "x"}]}
    with pytest.raises(FileToolError, match="binary file"):
        await call(tools, "edit", {"path": "blob.bin", **edit})
    with pytest.raises(FileToolError, match="exceeds the 1000B edit limit"):
        await call(tools, "edit", {"path": "big.txt", **edit})
    with pytest.raises(FileToolError, match=r"^File not found: nope\.txt$"):
        await call(tools, "edit", {"path": "nope.txt", **edit})


@pytest.mark.anyio
async def test_edit_through_a_symlink_inside_edits_the_target(layout: dict[str, Path]) -> None:
    await call(
        tools_for(layout["root"]),
        "edit",
        {"path": "link_in.txt", "edits": [{"oldText": "beta", "newText": "via link"}]},
    )
    assert (layout["root"] / "a.txt").read_text(encoding="utf-8") == "alpha\nvia link\ngamma\n"
    assert (layout["root"] / "link_in.txt").is_symlink()


@pytest.mark.anyio
async def test_edit_parallel_edits_see_each_others_result(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    path = layout["root"] / "counter.txt"
    path.write_text("v1\n", encoding="utf-8")
    results: dict[str, str] = {}

    async def edit(
        key: str, old: str, new: str, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        pending = call(tools, "edit", {"path": "counter.txt", "oldText": old, "newText": new})
        task_status.started()
        results[key] = (await pending).text_content()

    async with anyio.create_task_group() as tg:
        # start() returns once each call is running; calls enter the queue in this order,
        # and the second one's oldText exists only after the first has written.
        await tg.start(edit, "first", "v1", "v2")
        await tg.start(edit, "second", "v2", "v3")
        await tg.start(edit, "third", "v3", "v4")
    assert path.read_text(encoding="utf-8") == "v4\n"
    assert results == {k: "Successfully replaced 1 block(s) in counter.txt." for k in results}
    assert len(results) == 3


@pytest.mark.anyio
async def test_edit_concurrent_disjoint_edits_lose_nothing(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    path = layout["root"] / "many.txt"
    path.write_text("".join(f"<slot {i}>\n" for i in range(12)), encoding="utf-8")

    async def edit(i: int) -> None:
        await call(
            tools,
            "edit",
            {"path": "many.txt", "edits": [{"oldText": f"<slot {i}>", "newText": f"done {i}"}]},
        )

    async with anyio.create_task_group() as tg:
        for i in range(12):
            tg.start_soon(edit, i)
    assert path.read_text(encoding="utf-8") == "".join(f"done {i}\n" for i in range(12))


# ----------------------------------------------------------------------------- ls


@pytest.mark.anyio
async def test_ls_lists_sorted_with_directory_slashes(layout: dict[str, Path]) -> None:
    (layout["root"] / "B.md").write_text("b", encoding="utf-8")
    tools = tools_for(layout["root"])
    result = await call(tools, "ls", {})
    assert result.text_content().splitlines() == [
        "a.txt",
        "B.md",
        "dangling_out",
        "dir_out",
        "link_in.txt",
        "link_out.txt",
        "src/",
    ]
    entries = {e["name"]: e["type"] for e in result.structured_content["entries"]}
    assert entries["src"] == "dir"
    assert entries["dir_out"] == "symlink"
    assert entries["a.txt"] == "file"
    sub = await call(tools, "ls", {"path": "src"})
    assert sub.text_content() == "main.py\nutil.py"


@pytest.mark.anyio
async def test_ls_limit_empty_and_errors(layout: dict[str, Path]) -> None:
    (layout["root"] / "empty").mkdir()
    tools = tools_for(layout["root"])
    limited = await call(tools, "ls", {"limit": 2})
    assert limited.text_content() == (
        "a.txt\ndangling_out\n\n[2 entries limit reached. Use limit=4 for more]"
    )
    assert limited.structured_content["truncated"] is True
    assert (await call(tools, "ls", {"path": "empty"})).text_content() == "(empty directory)"
    with pytest.raises(FileToolError, match=r"^Not a directory: a\.txt$"):
        await call(tools, "ls", {"path": "a.txt"})
    with pytest.raises(FileToolError, match=r"^Path not found: nowhere$"):
        await call(tools, "ls", {"path": "nowhere"})


# ----------------------------------------------------------------------------- find


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", ".", ["src/main.py", "src/util.py"]),
        ("**/*.py", ".", ["src/main.py", "src/util.py"]),
        ("src/m*.py", ".", ["src/main.py"]),
        ("{a,b}.txt", ".", ["a.txt"]),
        ("[mu]*.py", "src", ["src/main.py", "src/util.py"]),
        ("*.nothing", ".", []),
    ],
)
async def test_find_glob_patterns(
    layout: dict[str, Path], pattern: str, path: str, expected: list[str]
) -> None:
    result = await call(tools_for(layout["root"]), "find", {"pattern": pattern, "path": path})
    assert sorted(result.structured_content["files"]) == expected
    if not expected:
        assert result.text_content() == "No files found matching pattern"


@pytest.mark.anyio
async def test_find_skips_git_does_not_follow_links_and_limits(layout: dict[str, Path]) -> None:
    (layout["root"] / ".git").mkdir()
    (layout["root"] / ".git" / "config.txt").write_text("x", encoding="utf-8")
    tools = tools_for(layout["root"])
    everything = await call(tools, "find", {"pattern": "**"})
    files = everything.structured_content["files"]
    assert not any(f.startswith(".git/") or f.startswith("dir_out/") for f in files)
    limited = await call(tools, "find", {"pattern": "*", "limit": 1})
    assert limited.structured_content["truncated"] is True
    assert limited.text_content().endswith(
        "[1 results limit reached. Use limit=2 for more, or refine pattern]"
    )


# ----------------------------------------------------------------------------- grep


@pytest.mark.anyio
async def test_grep_matches_context_and_structured(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    result = await call(tools, "grep", {"pattern": r"^b\w+", "context": 1})
    assert result.text_content() == "a.txt-1- alpha\na.txt:2: beta\na.txt-3- gamma"
    assert result.structured_content == {
        "matches": [{"path": "a.txt", "line": 2, "text": "beta"}],
        "truncated": False,
    }


@pytest.mark.anyio
async def test_grep_options_and_limits(layout: dict[str, Path]) -> None:
    tools = tools_for(layout["root"])
    assert (await call(tools, "grep", {"pattern": "PRINT", "ignoreCase": True})).text_content() == (
        "src/main.py:2: print('hi')"
    )
    literal = await call(tools, "grep", {"pattern": "print('hi')", "literal": True})
    assert literal.structured_content["matches"][0]["line"] == 2
    globbed = await call(tools, "grep", {"pattern": "a", "glob": "*.py"})
    assert {m["path"] for m in globbed.structured_content["matches"]} <= {
        "src/main.py",
        "src/util.py",
    }
    single = await call(tools, "grep", {"pattern": "return", "path": "src/util.py"})
    assert single.text_content() == "src/util.py:2:     return 42"
    limited = await call(tools, "grep", {"pattern": "a", "limit": 1})
    assert limited.structured_content["truncated"] is True
    assert limited.text_content().endswith(
        "[1 matches limit reached. Use limit=2 for more, or refine pattern]"
    )
    assert (await call(tools, "grep", {"pattern": "zzz"})).text_content() == "No matches found"
    with pytest.raises(FileToolError, match=r"^Invalid regular expression"):
        await call(tools, "grep", {"pattern": "("})


@pytest.mark.anyio
async def test_grep_skips_binary_and_links_out_and_clips_long_lines(
    layout: dict[str, Path],
) -> None:
    (layout["root"] / "blob.bin").write_bytes(b"secret\x00secret")
    (layout["root"] / "long.txt").write_text("secret" + "x" * 1000 + "\n", encoding="utf-8")
    result = await call(tools_for(layout["root"]), "grep", {"pattern": "secret"})
    paths = [m["path"] for m in result.structured_content["matches"]]
    assert paths == ["long.txt"]  # not blob.bin, not link_out.txt, not dir_out/secret.txt
    assert result.text_content().endswith("... [truncated]")
    assert (
        result.structured_content["matches"][0]["text"] == "secret" + "x" * 494 + "... [truncated]"
    )
    assert len(result.text_content()) < 600


# ----------------------------------------------------------------------------- through the pipeline


@pytest.mark.anyio
async def test_files_through_run_tool_call_coerce_and_report_errors(
    layout: dict[str, Path],
) -> None:
    from scriptgate.runtime.pipeline import run_tool_call

    tools = file_tools(layout["root"])
    ok = await run_tool_call(
        ToolCall("c1", "read", {"path": "a.txt", "offset": "2", "limit": "1"}), tools=tools
    )
    assert not ok.is_error
    assert ok.result.structured_content["content"] == "beta"
    legacy = await run_tool_call(
        ToolCall("c2", "edit", {"path": "a.txt", "oldText": "gamma", "newText": "G"}), tools=tools
    )
    assert not legacy.is_error, legacy.result.text_content()
    escape = await run_tool_call(
        ToolCall("c3", "read", {"path": "../outside/secret.txt"}), tools=tools
    )
    assert escape.is_error
    assert escape.result.text_content() == (
        'Path "../outside/secret.txt" is outside the root directory; only paths inside it are '
        "allowed"
    )
    missing = await run_tool_call(
        ToolCall("c4", "edit", {"path": "a.txt", "edits": [{"oldText": "zeta", "newText": ""}]}),
        tools=tools,
    )
    assert missing.is_error
    assert "Could not find the exact text in a.txt" in missing.result.text_content()


@pytest.mark.anyio
async def test_files_structured_content_matches_each_output_schema(
    layout: dict[str, Path],
) -> None:
    from scriptgate.runtime.schema import compile_schema

    (layout["root"] / "pixel.png").write_bytes(PNG)
    tools = tools_for(layout["root"], max_read_lines=1)
    samples: list[tuple[str, dict[str, Any]]] = [
        ("read", {"path": "a.txt"}),
        ("read", {"path": "a.txt", "offset": 3}),
        ("read", {"path": "pixel.png"}),
        ("write", {"path": "w.txt", "content": "w\n"}),
        ("edit", {"path": "w.txt", "edits": [{"oldText": "w", "newText": "x"}]}),
        ("ls", {"limit": 1}),
        ("find", {"pattern": "*.py"}),
        ("grep", {"pattern": "a", "context": 1}),
    ]
    for name, args in samples:
        result = await call(tools, name, args)
        schema = tools[name].output_schema
        assert schema is not None
        assert compile_schema(schema, coerce=False).check(result.structured_content) == [], name


@pytest.mark.anyio
async def test_edit_aborted_while_queued_changes_nothing(layout: dict[str, Path]) -> None:
    from scriptgate.runtime.file_queue import with_file_mutation_queue

    tools = tools_for(layout["root"])
    target = layout["root"] / "a.txt"
    held, release = anyio.Event(), anyio.Event()
    controller = AbortController()
    errors: list[str] = []

    async def holder() -> None:
        async def hold() -> None:
            held.set()
            await release.wait()

        await with_file_mutation_queue(target, hold)

    async def queued_edit(*, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        pending = call(
            tools,
            "edit",
            {"path": "a.txt", "edits": [{"oldText": "beta", "newText": "B"}]},
            controller.signal,
        )
        task_status.started()
        try:
            await pending
        except FileToolError as exc:
            errors.append(str(exc))

    async with anyio.create_task_group() as tg:
        tg.start_soon(holder)
        await held.wait()
        await tg.start(queued_edit)  # now waiting behind the holder
        controller.abort()
        release.set()
    assert errors == ["Operation aborted"]
    assert target.read_text(encoding="utf-8") == "alpha\nbeta\ngamma\n"


@pytest.mark.anyio
async def test_files_in_a_script_return_structured_data_and_catchable_errors(
    layout: dict[str, Path],
) -> None:
    from scriptgate.sandbox.sandbox import Sandbox

    code = """
data = read(path="a.txt")
edit(path="a.txt", oldText="beta", newText="BETA")
hits = grep(pattern="BETA")
try:
    read(path="../outside/secret.txt")
except Exception as exc:
    print("refused:", exc)
[data["total_lines"], hits["matches"]]
"""
    result = await Sandbox(file_tools(layout["root"])).run(code)
    assert result.ok, result.error
    assert result.value == [3, [{"path": "a.txt", "line": 2, "text": "BETA"}]]
    assert result.output == (
        'refused: Path "../outside/secret.txt" is outside the root directory; only paths '
        "inside it are allowed\n"
    )
    assert [call.status for call in result.calls] == ["ok", "ok", "ok", "error"]
