"""The README's short example (tests/test_readme.py runs it)."""

from typing_extensions import TypedDict

from scriptgate import Policy, Rule, Sandbox, tool


class Weather(TypedDict):
    city: str
    celsius: float


@tool
def weather(city: str) -> Weather:
    """Current temperature of a city."""
    return {"city": city, "celsius": 21.5 if city == "Paris" else 9.0}


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return "sent"


policy = Policy(
    rules=[Rule(tool="send_email", action="deny", reason="no emails in this run")],
    default="allow",
)
sandbox = Sandbox([weather, send_email], before_tool_call=policy.before_tool_call)

result = sandbox.run_sync("""
temps = {c: weather(city=c)["celsius"] for c in ["Paris", "Oslo"]}
try:
    send_email(to="boss@example.com", body=str(temps))
except ToolDenied as denied:
    print("not sent:", denied)
max(temps, key=temps.get)
""")
print(result.value)  # Paris
print(result.output)  # not sent: Denied by policy: no emails in this run
print([(c.tool, c.status) for c in result.calls])
# [('weather', 'ok'), ('weather', 'ok'), ('send_email', 'blocked')]
