"""F04 (both modes, LOW today / boundary violation): `__exit__` hands the script a traceback
object and raw exception classes that the allow-list refuses everywhere else.

Mechanism: the compiled `with` statement calls the script's own `__exit__(self, t, e, tb)`
from C (`WITH_EXCEPT_START`); those arguments never pass `check_value`. `type(tb)` is refused
("the class 'traceback' is not available"), yet the script holds `tb` itself, can store it,
pass it to any host function, re-attach it (`exc.with_traceback(tb)`), and holds classes such
as `json.decoder.JSONDecodeError`'s real class object and any host exception class raised by
host code inside the block. Attribute reads on `tb` are still refused, so no frame was reached
in this session: a near miss that rests on one layer (the attribute guard) only.
Expected (issue 13): a traceback is refused whatever path produced it. Actual: held.
Run: uv run python findings/f04_exit_receives_traceback.py [process]
"""

from __future__ import annotations

import sys

from scriptgate import Sandbox

SCRIPT = """
import json
held = []
class Catch:
    def __enter__(self):
        return self
    def __exit__(self, t, e, tb):
        held.append((t, e, tb))
        return True
with Catch():
    json.loads("{bad")
t, e, tb = held[0]
try:
    type(tb)
    refused = "no"
except TypeError as err:
    refused = str(err)
[repr(tb), repr(t), refused, repr(e.with_traceback(tb))]
"""

iso = sys.argv[1] if len(sys.argv) > 1 else "in_process"
result = Sandbox([], isolation=iso).run_sync(SCRIPT)
print(result.ok, result.error)
for line in result.value or []:
    print(" ", line)
