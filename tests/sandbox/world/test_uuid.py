"""The ``uuid`` stand-in in both modes: uuid3/4/5 and UUID."""

from __future__ import annotations

from sandbox_support import refused, value

from scriptgate.sandbox.sandbox import Sandbox


def test_uuid_members_match_cpython(sandbox: Sandbox) -> None:
    import uuid

    src = (
        "import uuid\nu = uuid.uuid4()\n"
        "[str(uuid.uuid5(uuid.NAMESPACE_DNS, 'python.org')), str(uuid.uuid3(uuid.NAMESPACE_URL, 'x')),"
        " u.version, len(u.hex), uuid.UUID(str(u)) == u, uuid.UUID(int=5).hex]"
    )
    assert value(sandbox, src) == [
        str(uuid.uuid5(uuid.NAMESPACE_DNS, "python.org")),
        str(uuid.uuid3(uuid.NAMESPACE_URL, "x")),
        4,
        32,
        True,
        uuid.UUID(int=5).hex,
    ]


def test_uuid_host_mac_is_out_of_reach(sandbox: Sandbox) -> None:
    refused(sandbox, "import uuid\nuuid.uuid1()", "uuid1")
    refused(sandbox, "from uuid import getnode", "getnode")
