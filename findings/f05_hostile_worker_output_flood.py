"""F05 (process mode, MEDIUM): a hostile worker grows the parent without bound through
`event` frames; the output it streamed is returned whole, past max_output_chars.

Issue 13 treats the worker as hostile (the interpreter may be broken). The parent's
`on_message` appends the text of every `{"op": "event"}` frame to `state.output` with no
total cap and whether or not the run streams; each frame is only capped at `max_frame`
(>= 16 MiB). When the run then ends by the deadline kill, `_finish` returns
`"".join(state.output)` as `ScriptResult.output`.

How the hostile worker is simulated: this file copies the `scriptgate` package to a temp dir
and patches the copy's `worker.py` so `_run` first sends 120 event frames of 8 M characters
each and then hangs (what arbitrary code in a compromised worker can do with its own socket);
the parent is pointed at the copy through `parent._PACKAGE_PARENT`. The jail is untouched.

Expected: output capped at Limits.max_output_chars (1,000 here), parent growth bounded,
or the worker killed for an unexpected stream. Actual (measured, loaded machine): result.output is
200,000,000 characters (25 frames got through before the 8 s deadline) and the parent's peak
RSS grew by 587 MB; both grow with the deadline. Run: uv run python findings/f05_hostile_worker_output_flood.py
(needs ~3 GB free memory; takes ~10-20 s)
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import scriptgate
import scriptgate.sandbox.isolation.parent as parent
from scriptgate import Limits, Sandbox

PATCH = """
        try:
            for _ in range(120):  # HOSTILE: flood the parent with output events
                self.channel.send({"op": "event", "text": "A" * 8_000_000})
            import time
            time.sleep(3600)
"""


def peak_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    return 0


root = Path(tempfile.mkdtemp(prefix="hostile-"))
shutil.copytree(Path(scriptgate.__file__).parent, root / "scriptgate")
worker = root / "scriptgate" / "sandbox" / "isolation" / "worker.py"
text = worker.read_text()
anchor = "        assert controller is not None\n        try:\n"
assert anchor in text
worker.write_text(text.replace(anchor, "        assert controller is not None\n" + PATCH, 1))
parent._PACKAGE_PARENT = str(root)

before = peak_mb()
sandbox = Sandbox([], isolation="process", limits=Limits(timeout=8.0, max_output_chars=1_000))
result = sandbox.run_sync("print('hi')")
print("ok", result.ok, "error", result.error)
print("len(result.output) =", len(result.output), "max_output_chars = 1000")
print("parent peak RSS +", peak_mb() - before, "MB")
shutil.rmtree(root)
