#!/usr/bin/env python3
"""Security-scan role: risky patterns in the files of the session's scope.

Python: bandit when installed, else a built-in AST scan (tool "builtin-patterns").
Rust: a built-in scan for `unsafe` and shell command lines (cargo-audit needs the network).
Node: a built-in scan for eval, new Function, child_process and disabled TLS checks.
Findings are the result, not a failure. Every finding: severity (high/medium/low), file, line,
rule, message.

Protocol: task JSON on stdin, TT_* variables in the environment, cwd = the session.
Progress lines are JSON with "type": "progress"; the last stdout line is the outcome.
"""

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

SKIP_DIRS = {".git", ".workflow", "node_modules", ".venv", "venv", "__pycache__", "target",
             ".tox", ".nox", ".mypy_cache", ".ruff_cache", ".pytest_cache", "dist", "build"}
EXTENSIONS = {"python": (".py",), "rust": (".rs",), "node": (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx")}
SEVERITIES = ("high", "medium", "low")
TOOL_TIMEOUT_S = 300


# ---------------------------------------------------------------- protocol

def progress(phase, pct, detail=""):
    print(json.dumps({"type": "progress", "phase": phase, "progress_pct": pct, "detail": detail}),
          flush=True)


def finish(status, summary, data=None, artifacts=None):
    # Exit 0 even on failure: a non-zero exit would make the runtime drop this summary.
    print(json.dumps({"status": status, "summary": summary, "data": data or {},
                      "artifacts": artifacts or []}), flush=True)
    sys.exit(0)


def run(argv, cwd, timeout):
    """Runs argv (never through a shell) in its own process group, killed whole on timeout.
    Returns (returncode, stdout, stderr); returncode None means it timed out."""
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err


# ---------------------------------------------------------------- scope

def project_kind(repo):
    if any((repo / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
        return "python"
    if (repo / "Cargo.toml").is_file():
        return "rust"
    if (repo / "package.json").is_file():
        return "node"
    return "python" if all_sources(repo, (".py",)) else None


def all_sources(repo, exts):
    found = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        found += [(Path(root) / n).relative_to(repo).as_posix() for n in sorted(files) if n.endswith(exts)]
    return found


def scope_files(session, repo, exts):
    """The scope's existing files with these extensions (repo-relative); every source file of the
    project when the scope lists no file at all."""
    try:
        listed = json.loads((session / "task-analysis.json").read_text())["scope"].get("files") or []
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        listed = []
    root = repo.resolve()
    files = []
    for entry in listed:
        path = entry.get("path", "") if isinstance(entry, dict) else str(entry)
        if (isinstance(entry, dict) and entry.get("kind") == "deleted") or not path.endswith(exts):
            continue
        full = (repo / path).resolve()
        if full.is_file() and root in full.parents:  # never outside the repository
            files.append(full.relative_to(root).as_posix())
    return sorted(set(files)) if listed else all_sources(repo, exts)


def is_test_file(path):
    p = Path(path)
    return (p.name.startswith("test_") or p.name.endswith("_test.py") or p.name == "conftest.py"
            or any(part in ("tests", "test", "testing") for part in p.parts[:-1]))


def finding(severity, file, line, rule, message):
    return {"severity": severity, "file": file, "line": int(line or 0), "rule": rule, "message": message}


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


# ---------------------------------------------------------------- python: bandit

def scan_bandit(repo, files):
    code, out, err = run(["bandit", "-f", "json", "-q", "--", *files], repo, TOOL_TIMEOUT_S)
    if code not in (0, 1):
        raise RuntimeError(f"bandit exited with {code}: {(err or out).strip()[-500:]}")
    report = json.loads(out)
    findings = [finding(r["issue_severity"].lower(), rel(r["filename"], repo), r["line_number"],
                        f"{r['test_id']} {r['test_name']}", r["issue_text"]) for r in report.get("results", [])]
    notes = [f"{e.get('filename')}: {e.get('reason')}" for e in report.get("errors", [])]
    return findings, notes


def rel(path, repo):
    p = Path(path)
    if p.is_absolute():
        try:
            return p.resolve().relative_to(repo.resolve()).as_posix()
        except ValueError:
            return p.as_posix()
    return p.as_posix()


# ---------------------------------------------------------------- python: built-in patterns

SECRET_NAME = re.compile(r"pass(word|wd)|secret|token|api_?key|apikey|private_?key|access_?key", re.I)
# Names that mention a secret but hold something else (a URL, a header name, a file path).
NOT_SECRET = re.compile(r"(_url|_uri|_path|_file|_dir|_env|_var|_name|_type|_header|_field|_key_name"
                        r"|_pattern|_regex|_re|_prefix|_suffix|_len|_length|_format|_id)$", re.I)
SHELL_CALLS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
               "asyncio.create_subprocess_shell"}
EVAL_CALLS = {"eval", "exec", "builtins.eval", "builtins.exec"}
DESERIALIZE_CALLS = {f"{m}.{f}" for m in ("pickle", "cPickle", "_pickle", "dill", "marshal")
                     for f in ("load", "loads")} | {"pickle.Unpickler", "shelve.open"}
WEAK_HASHES = {"md5", "sha1"}


def literal(node):
    """A plain constant (a fixed command line is less dangerous than one built from input)."""
    return isinstance(node, ast.Constant)


class Scanner(ast.NodeVisitor):
    def __init__(self, file, is_test):
        self.file, self.is_test = file, is_test
        self.aliases = {}  # local name -> the dotted name it was imported as
        self.findings = []

    def report(self, node, severity, rule, message):
        self.findings.append(finding(severity, self.file, node.lineno, rule, message))

    def visit_Import(self, node):
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name

    def visit_ImportFrom(self, node):
        for a in node.names:
            if node.module and a.name != "*":
                self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def dotted(self, node):
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def visit_Call(self, node):
        name = self.dotted(node.func) or ""
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        first = node.args[0] if node.args else kw.get("args") or kw.get("cmd")
        dynamic = first is not None and not literal(first)
        if name in EVAL_CALLS:
            self.report(node, "high" if dynamic else "medium", "eval-exec",
                        f"{name}() runs Python code given as data")
        if isinstance(kw.get("shell"), ast.Constant) and kw["shell"].value is True:
            self.report(node, "high" if dynamic else "medium", "shell-true",
                        f"{name or 'call'}(shell=True) runs a shell command line: injection risk")
        if name in SHELL_CALLS:
            self.report(node, "high" if dynamic else "medium", "os-shell",
                        f"{name}() runs its argument through the shell")
        if name in DESERIALIZE_CALLS:
            self.report(node, "medium", "unsafe-deserialization",
                        f"{name}() can run arbitrary code on untrusted data")
        self.check_yaml(node, name, kw)
        if name == "tempfile.mktemp":
            self.report(node, "medium", "mktemp", "tempfile.mktemp() is racy: use mkstemp() or NamedTemporaryFile()")
        self.check_hash(node, name, kw)
        if isinstance(kw.get("verify"), ast.Constant) and kw["verify"].value is False:
            self.report(node, "high", "tls-verify-off", f"{name or 'call'}(verify=False) turns off TLS certificate checks")
        if name.endswith("_create_unverified_context"):
            self.report(node, "medium", "tls-verify-off", "an SSL context without certificate checks")
        for k in node.keywords:
            if k.arg:
                self.check_secret(node, k.arg, k.value)
        self.generic_visit(node)

    def check_yaml(self, node, name, kw):
        if name in ("yaml.load", "yaml.load_all"):
            loader = kw.get("Loader") or (node.args[1] if len(node.args) > 1 else None)
            loader_name = (self.dotted(loader) or "") if loader is not None else ""
            if loader is None or loader_name.endswith(("UnsafeLoader", "yaml.Loader")):
                self.report(node, "medium", "yaml-load",
                            f"{name}() without a safe Loader can build arbitrary objects: use yaml.safe_load()")
        elif name in ("yaml.unsafe_load", "yaml.unsafe_load_all"):
            self.report(node, "medium", "yaml-load", f"{name}() can build arbitrary objects")

    def check_hash(self, node, name, kw):
        algo = name.rpartition(".")[2] if name.startswith("hashlib.") else None
        if name == "hashlib.new" and node.args and literal(node.args[0]):
            algo = str(node.args[0].value).lower()
        relaxed = isinstance(kw.get("usedforsecurity"), ast.Constant) and kw["usedforsecurity"].value is False
        if algo in WEAK_HASHES and not relaxed:
            self.report(node, "low", "weak-hash",
                        f"{algo} is broken for security use (pass usedforsecurity=False if it is only a checksum)")

    def check_secret(self, node, name, value):
        if (SECRET_NAME.search(name) and not NOT_SECRET.search(name) and isinstance(value, ast.Constant)
                and isinstance(value.value, str) and value.value.strip()):
            self.report(node, "low" if self.is_test else "medium", "hardcoded-secret",
                        f"'{name}' is assigned a hard-coded string: read secrets from the environment or a vault")

    def visit_Assign(self, node):
        for target in node.targets:
            self.check_target(node, target, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.check_target(node, node.target, node.value)
        self.generic_visit(node)

    def check_target(self, node, target, value):
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
        if name:
            self.check_secret(node, name, value)

    def visit_Dict(self, node):
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                self.check_secret(key, key.value, value)
        self.generic_visit(node)

    def visit_Assert(self, node):
        if not self.is_test:
            self.report(node, "low", "assert", "assert is removed under python -O: do not use it for checks that must hold")
        self.generic_visit(node)


def scan_python_builtin(repo, files):
    findings, notes = [], []
    for f in files:
        try:
            tree = ast.parse((repo / f).read_text(encoding="utf-8"), filename=f)
        except (SyntaxError, ValueError, OSError) as e:
            notes.append(f"{f}: not scanned, cannot parse ({e})")
            continue
        scanner = Scanner(f, is_test_file(f))
        scanner.visit(tree)
        findings += scanner.findings
    return findings, notes


# ---------------------------------------------------------------- rust: built-in patterns

def blank_rust(text, strings):
    """The text with comments (and string contents when `strings`) turned into spaces, newlines
    kept, so a regex neither matches prose nor loses line numbers."""
    out, i, n = list(text), 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c, nxt = text[i], text[i + 1: i + 2]
        if c == "/" and nxt == "/":
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif c == "/" and nxt == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                depth += {"/*": 1, "*/": -1}.get(text[j: j + 2], 0)
                j += 2 if text[j: j + 2] in ("/*", "*/") else 1
            blank(i, j)
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            start = i + len(hashes) + 2
            end = text.find('"' + hashes, start)
            end = n if end < 0 else end
            if strings:
                blank(start, end)
            i = end + len(hashes) + 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if strings:
                blank(i + 1, min(j, n))
            i = j + 1
        elif c == "'":
            # 'x' and '\n' are characters; 'a alone is a lifetime.
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            i += len(m.group(0)) if m else 1
        else:
            i += 1
    return "".join(out)


SHELL_PROGRAM = re.compile(r'Command::new\(\s*"(?:(?:/usr)?/bin/)?(sh|bash|zsh|dash|ksh|cmd|cmd\.exe)"\s*\)')


def scan_rust(repo, files):
    findings, notes = [], []
    for f in files:
        try:
            text = (repo / f).read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            notes.append(f"{f}: not scanned ({e})")
            continue
        code = blank_rust(text, strings=True)
        for m in re.finditer(r"\bunsafe\s*\{", code):
            findings.append(finding("medium", f, line_of(code, m.start()), "unsafe-block",
                                    "unsafe block: memory safety rests on a manual proof"))
        for m in re.finditer(r"\bunsafe\s+(fn|impl|trait|extern)\b", code):
            findings.append(finding("low", f, line_of(code, m.start()), f"unsafe-{m.group(1)}",
                                    f"unsafe {m.group(1)}: callers must uphold its safety contract"))
        with_strings = blank_rust(text, strings=False)
        for m in SHELL_PROGRAM.finditer(with_strings):
            statement = with_strings[m.end(): m.end() + 400].split(";")[0]
            if re.search(r'"(-c|/C|/c)"', statement):
                findings.append(finding("high", f, line_of(text, m.start()), "shell-command",
                                        f"std::process::Command runs `{m.group(1)} -c`: a shell command line, "
                                        "injection risk if any part comes from input"))
            else:
                findings.append(finding("medium", f, line_of(text, m.start()), "shell-spawn",
                                        f"std::process::Command starts a shell ({m.group(1)})"))
    return findings, notes


# ---------------------------------------------------------------- node: built-in patterns

NODE_RULES = [
    (re.compile(r"\beval\s*\("), "high", "eval", "eval() runs JavaScript given as data"),
    (re.compile(r"\bnew\s+Function\s*\("), "high", "new-function", "new Function() compiles code given as data"),
    (re.compile(r"\bexec(Sync)?\s*\(\s*`"), "high", "shell-exec", "exec() of a template string: shell injection risk"),
    (re.compile(r"shell\s*:\s*true"), "medium", "shell-true", "spawn with shell: true runs a shell command line"),
    (re.compile(r"rejectUnauthorized\s*:\s*false|NODE_TLS_REJECT_UNAUTHORIZED"), "high", "tls-verify-off",
     "TLS certificate checks turned off"),
    (re.compile(r"(?i)\b\w*(password|secret|token|api_?key)\w*\s*[:=]\s*['\"][^'\"\s]+['\"]"), "medium",
     "hardcoded-secret", "a secret-looking name is assigned a hard-coded string"),
]


def scan_node(repo, files):
    findings, notes = [], []
    for f in files:
        try:
            lines = (repo / f).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as e:
            notes.append(f"{f}: not scanned ({e})")
            continue
        for number, line in enumerate(lines, 1):
            if line.lstrip().startswith(("//", "*", "/*")):
                continue
            for pattern, severity, rule, message in NODE_RULES:
                if pattern.search(line):
                    findings.append(finding(severity, f, number, rule, message))
    return findings, notes


# ---------------------------------------------------------------- reports

def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def counts_of(findings):
    return {s: sum(f["severity"] == s for f in findings) for s in SEVERITIES}


def write_reports(session, task_id, report):
    results, analysis = session / "results", session / "analysis"
    results.mkdir(parents=True, exist_ok=True)
    analysis.mkdir(parents=True, exist_ok=True)
    json_path, md_path = results / f"security-{task_id}.json", analysis / f"security-{task_id}.md"
    json_path.write_text(json.dumps(report, indent=2) + "\n")
    c = report["counts"]
    lines = [f"# Security scan ({task_id})", "",
             f"- Tool: `{report['tool']}`",
             f"- Files scanned ({len(report['files'])}): " + ", ".join(f"`{f}`" for f in report["files"]),
             f"- Findings: {len(report['findings'])} ({c['high']} high, {c['medium']} medium, {c['low']} low)", ""]
    lines += [f"> {n}" for n in report["notes"]] + ([""] if report["notes"] else [])
    if report["findings"]:
        lines += ["| Severity | Where | Rule | Message |", "|---|---|---|---|"]
        lines += [f"| {f['severity']} | `{md_cell(f['file'])}:{f['line']}` | {md_cell(f['rule'])} | "
                  f"{md_cell(f['message'])} |" for f in report["findings"]]
        lines += ["", "Patterns are a prompt to look, not a verdict: check each finding in context."]
    else:
        lines.append("No findings.")
    md_path.write_text("\n".join(lines) + "\n")
    return [f"results/{json_path.name}", f"analysis/{md_path.name}"]


def plural(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


# ---------------------------------------------------------------- main

def scan(kind, repo, files):
    """(tool, findings, notes) for the project kind."""
    if kind == "python" and shutil.which("bandit"):
        try:
            return ("bandit", *scan_bandit(repo, files))
        except (RuntimeError, ValueError, KeyError) as e:
            findings, notes = scan_python_builtin(repo, files)
            return "builtin-patterns", findings, [f"bandit failed, built-in patterns used: {e}"] + notes
    if kind == "python":
        findings, notes = scan_python_builtin(repo, files)
        return "builtin-patterns", findings, ["bandit is not installed: built-in patterns used"] + notes
    if kind == "rust":
        findings, notes = scan_rust(repo, files)
        return "builtin-patterns", findings, ["cargo-audit needs the network: source patterns only"] + notes
    return ("builtin-patterns", *scan_node(repo, files))


def main():
    try:
        json.load(sys.stdin)  # the task; the scope comes from task-analysis.json
    except ValueError:
        pass
    session = Path(os.environ.get("TT_SESSION_DIR") or os.getcwd())
    repo = Path(os.environ.get("TT_REPO") or ".")
    task_id = re.sub(r"[^A-Za-z0-9._-]", "_", os.environ.get("TT_TASK_ID") or "SECSCAN")
    kind = project_kind(repo)
    if kind is None:
        finish("failed", f"no Python, Rust or Node project found in {repo}", {"blocker": True})
    files = scope_files(session, repo, EXTENSIONS[kind])
    progress("scanning", 20, f"{kind}: {plural(len(files), 'file')}")
    tool, findings, notes = scan(kind, repo, files)
    findings.sort(key=lambda f: (SEVERITIES.index(f["severity"]) if f["severity"] in SEVERITIES else 3,
                                 f["file"], f["line"]))
    counts = counts_of(findings)
    by_rule = {}
    for f in findings:
        by_rule[f["rule"]] = by_rule.get(f["rule"], 0) + 1
    report = {"task_id": task_id, "kind": kind, "tool": tool, "files": files, "counts": counts,
              "findings": findings, "notes": notes}
    artifacts = write_reports(session, task_id, report)
    summary = (f"{plural(len(findings), 'finding')} ({counts['high']} high, {counts['medium']} medium, "
               f"{counts['low']} low)")
    finish("completed", summary, {"tool": tool, "files": len(files), "findings": len(findings), **counts,
                                  "by_rule": by_rule}, artifacts)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a crash still ends with an outcome line the runtime can read
        import traceback
        traceback.print_exc()
        finish("failed", f"security scan crashed: {type(e).__name__}: {e}")
