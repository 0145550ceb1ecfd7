# A model-style triage script: what is in the scriptgate package, and what is left to do?
# Every call below goes through validation, the policy and the audit log, exactly
# like a tool call the model would make directly.

py_files = find(pattern="*.py", path="scriptgate")["files"]
print(f"{len(py_files)} Python files under scriptgate/")

# Count function definitions per file.
defs = grep(pattern=r"^\s*(async )?def ", path="scriptgate", glob="*.py", limit=5000)
per_file = {}
for match in defs["matches"]:
    per_file[match["path"]] = per_file.get(match["path"], 0) + 1
busiest = sorted(per_file.items(), key=lambda item: (-item[1], item[0]))[:3]
for path, count in busiest:
    print(f"  {count:4d} functions  {path}")

# Anything left to do?
todos = grep(pattern=r"\b(TODO|FIXME|XXX)\b", path="scriptgate", glob="*.py")["matches"]
print(f"{len(todos)} TODO/FIXME markers")

# What does the package say about itself?
head = read(path="scriptgate/__init__.py", limit=5)
summary = head["content"].strip().splitlines()[0].strip('"') if head["content"].strip() else ""

# Try to save a report. The example policy makes this a read-only run, so the
# call is denied and the script carries on.
report = "\n".join(f"- {path}: {count} functions" for path, count in busiest)
try:
    write(path="TRIAGE.md", content="# Triage\n\n" + report + "\n")
    report_written = True
except ToolDenied as denied:
    print(f"could not save the report: {denied}")
    report_written = False

{
    "python_files": len(py_files),
    "functions": sum(per_file.values()),
    "busiest": [path for path, _ in busiest],
    "todo_markers": len(todos),
    "summary": summary,
    "report_written": report_written,
}
