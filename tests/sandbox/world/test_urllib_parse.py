"""The ``urllib.parse`` stand-in: the real functions on exact, bounded text, in both modes."""

from __future__ import annotations

import pytest
from sandbox_support import refused, value

from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world import modules

SANDBOX_TIMEOUT = 10


def test_urllib_parse_common_idioms_match_cpython(sandbox: Sandbox) -> None:
    got = value(
        sandbox,
        "from urllib.parse import urlparse, urlencode, quote, unquote, parse_qs, urljoin\n"
        "import urllib.parse\n"
        "u = urlparse('https://user:pw@Example.com:8080/a/b;p?q=1&r=x+y#frag')\n"
        "[list(u), u.scheme, u.netloc, u.hostname, u.port, u.username, u.password, u.path,"
        " u.params, u.query, u.fragment, u.geturl(), urllib.parse.urlunparse(u),"
        " urllib.parse.urlsplit('http://x/y?z').query,"
        " urlencode({'a': 1, 'b': 'x y', 'c': [1, 2]}, doseq=True), urlencode([('k', 'v&')]),"
        " urlencode({'s': 'a b'}, quote_via=urllib.parse.quote), quote('a b/c'),"
        " urllib.parse.quote_plus('a b/c'), unquote('a%20b%C3%A9'), parse_qs('a=1&a=2&b=3'),"
        " urllib.parse.parse_qsl('a=1&b=', keep_blank_values=True), urljoin('http://h/a/b', '../c'),"
        " repr(urllib.parse.urlsplit('http://h/p'))]",
    )
    assert got == [
        ["https", "user:pw@Example.com:8080", "/a/b", "p", "q=1&r=x+y", "frag"],
        "https", "user:pw@Example.com:8080", "example.com", 8080, "user", "pw", "/a/b", "p",
        "q=1&r=x+y", "frag", "https://user:pw@Example.com:8080/a/b;p?q=1&r=x+y#frag",
        "https://user:pw@Example.com:8080/a/b;p?q=1&r=x+y#frag", "z",
        "a=1&b=x+y&c=1&c=2", "k=v%26", "s=a%20b", "a%20b/c", "a+b%2Fc", "a bé",
        {"a": ["1", "2"], "b": ["3"]}, [["a", "1"], ["b", ""]], "http://h/c",
        "SplitResult(scheme='http', netloc='h', path='/p', query='', fragment='')",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("from urllib.parse import quote\nquote('x' * 2000000)", "more than 1000000 characters"),
        (
            "from urllib.parse import parse_qs\nparse_qs('a&' * 20000, keep_blank_values=True)",
            "Max number of fields exceeded",
        ),
        (
            "from urllib.parse import urlencode\nurlencode({str(i): i for i in range(20000)})",
            "more than 10000 fields",
        ),
        (
            "from urllib.parse import urlencode\nclass S:\n    def __str__(self):\n"
            "        return 'x'\nurlencode({'a': S()})",
            "write str(value) first",
        ),
        (
            "from urllib.parse import urlencode\nurlencode({'a': 1}, quote_via=lambda s, *a: s)",
            "takes urllib.parse.quote or quote_plus",
        ),
        ("from urllib.parse import quote\nquote(1)", "takes a str or bytes"),
        (
            "from urllib.parse import urlparse\nurlparse('http://h/').scheme = 'x'",
            "cannot be modified",
        ),
        ("from urllib.parse import urlparse\nurlparse('http://x:bad/').port", "Port could not"),
        ("import urllib.request", "No module named 'urllib.request'"),
        ("import urllib\nurllib.request", "the sandbox has no network"),
    ],
)
def test_urllib_parse_refusals(sandbox: Sandbox, source: str, words: str) -> None:
    refused(sandbox, source, words)


def test_urllib_parse_is_listed() -> None:
    assert "urlparse" in modules.MODULE_NAMES["urllib.parse"]
    assert modules.MODULE_NAMES["urllib"] == ("parse",)
