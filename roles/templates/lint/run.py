#!/usr/bin/env python3
"""Lint role: static analysis of the files in the session's scope.

Python: ruff, else pyflakes, else flake8, else a syntax check with compile().
Rust: cargo clippy on a scratch copy of the crate. Node: eslint, else `node --check`.
Findings are the result, not a failure: the task fails only when no tool could run.

Protocol: task JSON on stdin, TT_* variables in the environment, cwd = the session.
Progress lines are JSON with "type": "progress"; the last stdout line is the outcome.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Folders that never hold the project's own sources.
SKIP_DIRS = {".git", ".workflow", "node_modules", ".venv", "venv", "__pycache__", "target",
             ".tox", ".nox", ".mypy_cache", ".ruff_cache", ".pytest_cache", "dist", "build"}
EXTENSIONS = {"python": (".py",), "rust": (".rs",), "node": (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx")}
TOOL_TIMEOUT_S = 300   # one linter run over all files
CLIPPY_TIMEOUT_S = 540  # clippy compiles the crate first
FINDINGS_IN_MD = 200   # the markdown table stays readable


# ---------------------------------------------------------------- protocol

def progress(phase, pct, detail=""):
    print(json.dumps({"type": "progress", "phase": phase, "progress_pct": pct, "detail": detail}),
          flush=True)


def finish(status, summary, data=None, artifacts=None):
    # Exit 0 even on failure: a non-zero exit would make the runtime drop this summary.
    print(json.dumps({"status": status, "summary": summary, "data": data or {},
                      "artifacts": artifacts or []}), flush=True)
    sys.exit(0)


def run(argv, cwd, timeout, env=None):
    """Runs argv (never through a shell) in its own process group, killed whole on timeout.
    Returns (returncode, stdout, stderr); returncode None means it timed out."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err


def tail(text, lines=8):
    return "\n".join(text.strip().splitlines()[-lines:])


# ---------------------------------------------------------------- scope

def project_kind(repo):
    if any((repo / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
        return "python"
    if (repo / "Cargo.toml").is_file():
        return "rust"
    if (repo / "package.json").is_file():
        return "node"
    if all_sources(repo, EXTENSIONS["python"]):
        return "python"
    return None


def all_sources(repo, exts):
    found = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(exts):
                found.append((Path(root) / name).relative_to(repo).as_posix())
    return found


def scope_files(session, repo, exts):
    """The scope's existing files with these extensions (repo-relative); every source file of the
    project when the scope lists no file at all."""
    try:
        scope = json.loads((session / "task-analysis.json").read_text())["scope"]
        listed = scope.get("files") or []
    except (OSError, ValueError, KeyError, TypeError):
        listed = []
    root = repo.resolve()
    files = []
    for entry in listed:
        path = entry.get("path", "") if isinstance(entry, dict) else str(entry)
        if (isinstance(entry, dict) and entry.get("kind") == "deleted") or not path.endswith(exts):
            continue
        full = (repo / path).resolve()
        # A path that leaves the repository is not ours to read.
        if full.is_file() and root in full.parents:
            files.append(full.relative_to(root).as_posix())
    return sorted(set(files)) if listed else all_sources(repo, exts)


def finding(file, line, col, code, message):
    return {"file": file, "line": int(line or 0), "col": int(col or 0), "code": code or "",
            "message": " ".join(str(message).split())}


def rel(path, repo):
    """A tool's path, repository-relative when it lies inside the repository."""
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    try:
        return p.resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


class ToolMissing(Exception):
    """The tool is not installed: try the next one."""


# ---------------------------------------------------------------- python

def python_has(module):
    code, _, _ = run([sys.executable, "-c", f"import {module}"], None, 60)
    return code == 0


def lint_ruff(repo, files):
    if not shutil.which("ruff"):
        raise ToolMissing("ruff")
    # --no-cache: the repository is read-only.
    code, out, err = run(["ruff", "check", "--no-cache", "--output-format", "json", "--", *files],
                         repo, TOOL_TIMEOUT_S)
    if code not in (0, 1):
        raise RuntimeError(f"ruff exited with {code}: {tail(err or out)}")
    return [finding(rel(f["filename"], repo), f["location"]["row"], f["location"]["column"],
                    f.get("code") or "syntax", f["message"]) for f in json.loads(out or "[]")]


# pyflakes prints no codes; these are flake8's names for its messages.
PYFLAKES_CODES = [
    (r"imported but unused", "F401"), (r"import \*", "F403"), (r"may be undefined, or defined from star", "F405"),
    (r"redefinition of unused", "F811"), (r"undefined name", "F821"),
    (r"local variable .* assigned to but never used", "F841"), (r"f-string is missing placeholders", "F541"),
    (r"is not defined", "F821"), (r"syntax|invalid|unexpected|expected", "E999"),
]
PYFLAKES_LINE = re.compile(r"^(.+?):(\d+):(?:(\d+):?)? (.*)$")


def pyflakes_code(message):
    return next((code for pattern, code in PYFLAKES_CODES if re.search(pattern, message)), "pyflakes")


def lint_pyflakes(repo, files):
    if not python_has("pyflakes"):
        raise ToolMissing("pyflakes")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    code, out, err = run([sys.executable, "-m", "pyflakes", *files], repo, TOOL_TIMEOUT_S, env)
    if code not in (0, 1):
        raise RuntimeError(f"pyflakes exited with {code}: {tail(err or out)}")
    found = []
    # Syntax errors come on stderr, followed by the source line and a caret: only the first counts.
    for line in (out + "\n" + err).splitlines():
        m = PYFLAKES_LINE.match(line)
        if m and Path(repo, m.group(1)).is_file():
            found.append(finding(rel(m.group(1), repo), m.group(2), m.group(3), pyflakes_code(m.group(4)),
                                 m.group(4)))
    return found


def lint_flake8(repo, files):
    if shutil.which("flake8"):
        argv = ["flake8"]
    elif python_has("flake8"):
        argv = [sys.executable, "-m", "flake8"]
    else:
        raise ToolMissing("flake8")
    argv += ["--format=%(path)s:%(row)d:%(col)d:%(code)s:%(text)s", "--", *files]
    code, out, err = run(argv, repo, TOOL_TIMEOUT_S, dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    if code not in (0, 1):
        raise RuntimeError(f"flake8 exited with {code}: {tail(err or out)}")
    pattern = re.compile(r"^(.+?):(\d+):(\d+):([A-Z]+\d+):(.*)$")
    return [finding(rel(m.group(1), repo), m.group(2), m.group(3), m.group(4), m.group(5))
            for m in map(pattern.match, out.splitlines()) if m]


def lint_builtin_syntax(repo, files):
    """Last resort: compile() each file in-process; finds syntax errors only."""
    found = []
    for f in files:
        try:
            source = (repo / f).read_bytes()
            compile(source, f, "exec", dont_inherit=True)
        except SyntaxError as e:
            found.append(finding(f, e.lineno, e.offset, "E999", f"SyntaxError: {e.msg}"))
        except ValueError as e:  # null bytes
            found.append(finding(f, 0, 0, "E902", str(e)))
    return found


def lint_python(repo, files):
    notes = []
    for tool, fn in (("ruff", lint_ruff), ("pyflakes", lint_pyflakes), ("flake8", lint_flake8),
                     ("builtin-syntax", lint_builtin_syntax)):
        try:
            return tool, fn(repo, files), notes
        except ToolMissing:
            notes.append(f"{tool} is not installed")
        except (RuntimeError, ValueError, KeyError, OSError) as e:
            # A tool that crashed leaves the job to the next one, and the report says why.
            notes.append(f"{tool} failed: {e}")
    raise RuntimeError("; ".join(notes))


# ---------------------------------------------------------------- rust

# What the executor's mirror of the project leaves out (plus the root target/).
COPY_SKIP = {".git", ".workflow", "node_modules", ".venv", "__pycache__"}


def copy_tree(src, dst):
    def ignore(folder, names):
        root = Path(folder) == Path(src)
        return [n for n in names if n in COPY_SKIP or (root and n == "target")]
    shutil.copytree(src, dst, symlinks=True, ignore=ignore)


def lint_rust(repo, files):
    code, _, err = run(["cargo", "clippy", "--version"], repo, 60) if shutil.which("cargo") else (1, "", "")
    if code != 0:
        raise ToolMissing("cargo clippy is not installed (rustup component add clippy)")
    scratch = Path(tempfile.mkdtemp(prefix="lint-rust-"))
    try:
        # cargo writes Cargo.lock next to the manifest, and the repository is read-only: lint a copy.
        crate = scratch / "crate"
        copy_tree(repo, crate)
        env = dict(os.environ, CARGO_TARGET_DIR=str(scratch / "target"), CARGO_TERM_COLOR="never")
        code, out, err = run(["cargo", "clippy", "--message-format=json", "--offline"],
                             crate, CLIPPY_TIMEOUT_S, env)
        if code is None:
            raise RuntimeError(f"cargo clippy timed out after {CLIPPY_TIMEOUT_S}s")
        found = clippy_findings(out, crate)
        if code != 0 and not found:
            raise RuntimeError(f"cargo clippy exited with {code}: {tail(err)}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    wanted = set(files)
    return "clippy", [f for f in found if f["file"] in wanted], []


def clippy_findings(out, crate):
    found = []
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        m = msg.get("message") if msg.get("reason") == "compiler-message" else None
        if not m or m.get("level") not in ("warning", "error"):
            continue
        span = next((s for s in m.get("spans", []) if s.get("is_primary")), None)
        if span is None:  # "aborting due to ..." summaries
            continue
        code = (m.get("code") or {}).get("code") or m["level"]
        found.append(finding(rel(crate / span["file_name"], crate), span["line_start"],
                             span["column_start"], code, m["message"]))
    return found


# ---------------------------------------------------------------- node

def lint_eslint(repo, files):
    if not shutil.which("eslint"):
        raise ToolMissing("eslint")
    code, out, err = run(["eslint", "-f", "json", "--", *files], repo, TOOL_TIMEOUT_S)
    if code not in (0, 1):
        # Typically no eslint config in the project: node --check takes over.
        raise RuntimeError(f"eslint exited with {code}: {tail(err or out, 3)}")
    return [finding(rel(r["filePath"], repo), m.get("line"), m.get("column"), m.get("ruleId") or "eslint",
                    m.get("message", "")) for r in json.loads(out or "[]") for m in r.get("messages", [])]


def lint_node_check(repo, files):
    if not shutil.which("node"):
        raise ToolMissing("neither eslint nor node is installed (install Node.js)")
    found = []
    # node --check only parses plain JavaScript.
    for f in [f for f in files if f.endswith((".js", ".mjs", ".cjs"))]:
        code, out, err = run(["node", "--check", f], repo, 60)
        if code == 0:
            continue
        lines = err.splitlines()
        where = next((re.match(r"^(.*):(\d+)$", l) for l in lines if re.match(r"^.*:\d+$", l)), None)
        caret = next((l.index("^") + 1 for l in lines if l.strip().startswith("^")), 0)
        message = next((l for l in lines if re.match(r"^\w*Error\b", l)), tail(err, 1))
        found.append(finding(f, where.group(2) if where else 0, caret, "syntax", message))
    return found


def lint_node(repo, files):
    notes = []
    try:
        return "eslint", lint_eslint(repo, files), notes
    except ToolMissing:
        notes.append("eslint is not installed")
    except (RuntimeError, ValueError) as e:
        notes.append(f"eslint failed: {e}")
    return "node --check", lint_node_check(repo, files), notes


# ---------------------------------------------------------------- reports

def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_reports(session, task_id, report):
    results, analysis = session / "results", session / "analysis"
    results.mkdir(parents=True, exist_ok=True)
    analysis.mkdir(parents=True, exist_ok=True)
    json_path, md_path = results / f"lint-{task_id}.json", analysis / f"lint-{task_id}.md"
    json_path.write_text(json.dumps(report, indent=2) + "\n")
    findings = report["findings"]
    lines = [f"# Lint ({task_id})", "",
             f"- Tool: `{report['tool']}`",
             f"- Files linted ({len(report['files'])}): " + ", ".join(f"`{f}`" for f in report["files"]),
             f"- Findings: {len(findings)}", ""]
    lines += [f"> {n}" for n in report["notes"]] + ([""] if report["notes"] else [])
    if findings:
        lines += ["| File | Line | Col | Code | Message |", "|---|---:|---:|---|---|"]
        lines += [f"| `{md_cell(f['file'])}` | {f['line']} | {f['col']} | {md_cell(f['code'])} | "
                  f"{md_cell(f['message'])} |" for f in findings[:FINDINGS_IN_MD]]
        if len(findings) > FINDINGS_IN_MD:
            lines.append(f"\n… {len(findings) - FINDINGS_IN_MD} more in `results/{json_path.name}`.")
    else:
        lines.append("No findings.")
    md_path.write_text("\n".join(lines) + "\n")
    return [f"results/{json_path.name}", f"analysis/{md_path.name}"]


def plural(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


# ---------------------------------------------------------------- main

def main():
    try:
        json.load(sys.stdin)  # the task; nothing in it changes what lint does
    except ValueError:
        pass
    session = Path(os.environ.get("TT_SESSION_DIR") or os.getcwd())
    repo = Path(os.environ.get("TT_REPO") or ".")
    task_id = re.sub(r"[^A-Za-z0-9._-]", "_", os.environ.get("TT_TASK_ID") or "LINT")
    started = time.monotonic()

    kind = project_kind(repo)
    if kind is None:
        finish("failed", f"no Python, Rust or Node project found in {repo}", {"blocker": True})
    files = scope_files(session, repo, EXTENSIONS[kind])
    if not files:
        finish("completed", f"no {kind} files to lint", {"tool": None, "files": 0, "findings": 0,
                                                          "by_file": {}})
    progress("linting", 20, f"{kind}: {plural(len(files), 'file')}")
    try:
        if kind == "python":
            tool, findings, notes = lint_python(repo, files)
        elif kind == "rust":
            tool, findings, notes = lint_rust(repo, files)
        else:
            tool, findings, notes = lint_node(repo, files)
    except ToolMissing as e:
        finish("failed", str(e), {"blocker": True, "kind": kind})
    except (RuntimeError, OSError) as e:
        finish("failed", f"no lint tool could run: {e}", {"kind": kind})
    progress("reporting", 90, plural(len(findings), "finding"))

    findings.sort(key=lambda f: (f["file"], f["line"], f["col"]))
    by_file = {}
    for f in findings:
        by_file[f["file"]] = by_file.get(f["file"], 0) + 1
    report = {"task_id": task_id, "kind": kind, "tool": tool, "files": files, "findings": findings,
              "notes": notes, "duration_s": round(time.monotonic() - started, 2)}
    artifacts = write_reports(session, task_id, report)
    summary = f"{tool}: {plural(len(findings), 'finding')} in {plural(len(by_file), 'file')}"
    if not findings:
        summary = f"{tool}: no findings in {plural(len(files), 'file')}"
    finish("completed", summary, {"tool": tool, "files": len(files), "findings": len(findings),
                                  "by_file": by_file}, artifacts)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a crash still ends with an outcome line the runtime can read
        import traceback
        traceback.print_exc()
        finish("failed", f"lint crashed: {type(e).__name__}: {e}")
