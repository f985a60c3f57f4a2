"""The generator's assertions stage: what a call's outcome lets a test assert, and the findings.

A value becomes an assertion only when two runs agree on it and it names nothing of this machine;
a stated contract wins over the observed value: a result that breaks its return annotation on
well-typed input, a builtin exception escaping on well-typed input (its call shortened by the
minimization stage) and a result that looks like a bug (tt_oracle) are findings, with a test
that asserts only what the contract says. Effects outside the test's tmp_path and what the
sandbox stopped are findings, never tests. Also here: which expected output of a docstring only
holds on its author's machine, and the test of an entry point's run (layer L3). Imports the
analysis, execution and minimization stages.
"""

import ast
import hashlib
import inspect
import os
import re
import sys
import time

import tt_oracle
from tt_analysis import hints_of
from tt_execution import MAX_REPR, ORIGIN, sandbox_block
from tt_minimize import Shortening

CONTRACT_ERRORS = ("IndexError", "KeyError", "ZeroDivisionError", "AttributeError", "TypeError",
                   "UnboundLocalError")
NOT_KEPT = ("InternalError", "Undescribable", "ChildCrashed", "Unpicklable", "ForkFailed", "RecursionError",
            "MemoryError", "KeyboardInterrupt")
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def private(name):
    """Whether a dotted name has a private part (`_build_meta`, `_Parser.run`): its only callers
    are the module's own code, which decides what it passes, so its annotations are no contract."""
    return any(part.startswith("_") and not part.endswith("__") for part in name.split("."))


def grouped(expr):
    """An operator expression in parentheses, so `assert (a == b) is True` keeps its meaning."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return f"({expr})"
    if isinstance(node, (ast.Compare, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.IfExp, ast.Lambda)):
        return f"({expr})"
    return expr


# ---- a call's outcome as a test, or a finding ----------------------------------------------------

class Oracle(Shortening):
    """Tests and findings from a module search's outcomes (a part of tt_search.ModuleSearch: needs
    its `spec`, `namespace`, `target`, `classes`, `inputs`, `closures`, `pending`, `pathy`,
    `timeouts`, `tests` and `findings`)."""

    def name_for(self, item, body, suffix=""):
        """test_<function>_<its arguments>[_kind]_<hash of the body>: says what it calls and with
        what, and the same test keeps its name in every round."""
        base = re.sub(r"[^0-9A-Za-z_]+", "_", item["name"].replace(".", "_")).strip("_")
        method = item["name"].split(".")[-1]
        text = "\n".join(body)
        found = re.search(re.escape(method) + r"\((.*?)\)", text)
        raw = found.group(1) if found else ""
        args = re.sub(r"[^0-9A-Za-z]+", "_", raw).strip("_").lower()[:24].strip("_")
        args = f"_{args}" if args else ("_empty" if raw.strip() else "_no_args")
        digest = hashlib.sha1(text.encode()).hexdigest()[:6]
        return f"test_{base}{args}{suffix}_{digest}"

    # -- names the tests import --

    def reference(self, module_name, qualname):
        """(name to write, imports) for a class defined in `module_name`; None when a test could
        not import it (a local class, a module that is not importable)."""
        if not module_name or not qualname or "<" in qualname:
            return None
        if module_name == "builtins":
            return qualname, set()
        top = qualname.split(".")[0]
        own = self.namespace.get(top)
        if own is not None and getattr(own, "__module__", None) == module_name:
            return qualname, {(self.spec["module"], top)}
        if own is not None and inspect.isclass(own) and getattr(own, "__qualname__", None) == top \
                and getattr(own, "__module__", None) == module_name:
            return qualname, {(self.spec["module"], top)}
        mod = sys.modules.get(module_name)
        if mod is None:
            return None
        obj = mod
        for part in qualname.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        if top in self.namespace and self.namespace[top] is not getattr(mod, top, None):
            return None  # the name means something else in the module under test
        return qualname, {(module_name, top)}

    # -- oracle --

    def assertion(self, expr, first, second):
        """(assertion lines, uses pytest, imports) for a result; lines None when nothing can be said."""
        expr = grouped(expr)
        if re.match(r"hash\(", expr) and first.get("type") == "int":
            # String hashes change from one process to the next (hash randomization).
            return [f"assert isinstance({expr}, int)"], False, set()
        if first.get("tmp_expr") and first.get("tmp_expr") == second.get("tmp_expr"):
            return [f"assert {expr} == {first['tmp_expr']}"], False, set()
        stable = first.get("repr") == second.get("repr") and not ADDRESS.search(first.get("repr", "")) \
            and not first.get("machine_bound")
        if first.get("floaty") and first.get("type") == "float":
            try:
                if abs(float(first["repr"]) - time.time()) < 10 ** 8:
                    stable = False  # looks like a timestamp
            except ValueError:
                pass
        if stable and first["plain"] and len(first["repr"]) <= MAX_REPR:
            if first["floaty"]:
                return [f"assert {expr} == pytest.approx({first['repr']})"], True, set()
            if first["repr"] in ("None", "True", "False"):
                return [f"assert {expr} is {first['repr']}"], False, set()
            return [f"assert {expr} == {first['repr']}"], False, set()
        if first.get("type") == "NoneType":
            return [f"assert {expr} is None"], False, set()
        if first.get("is_callable"):
            return ["result = " + expr, "assert callable(result)"], False, set()
        ref = self.reference(first.get("type_module"), first.get("qualname") or first.get("type"))
        if ref is None:
            return None, False, set()
        name, imports = ref
        lines = ["result = " + expr, f"assert isinstance(result, {name})"]
        uses = False
        second_attrs = {a: r for a, r, _ in second.get("attrs", [])}
        for attr, rep, floaty in first.get("attrs", []):
            if second_attrs.get(attr) != rep or ADDRESS.search(rep):
                continue
            if floaty:
                lines.append(f"assert result.{attr} == pytest.approx({rep})")
                uses = True
            else:
                lines.append(f"assert result.{attr} == {rep}")
        if first.get("len") is not None and first.get("len") == second.get("len"):
            lines.append(f"assert len(result) == {first['len']}")
        return lines, uses, imports

    def settled_expr(self, expr, outcome):
        how = outcome.get("settled")
        if how == "list":
            return f"list({expr})"
        if how == "partial":
            return f"list(itertools.islice({expr}, 50))"
        if how == "await":
            return f"asyncio.run({expr})"
        if how == "alist":
            return "asyncio.run(collect())"  # with the collecting coroutine settled_setup defines
        return expr

    def settled_setup(self, expr, outcome):
        """The statements a settled expression needs: an async generator is drained by a
        coroutine the test defines."""
        if outcome.get("settled") == "alist":
            return [f"async def collect():\n    return [item async for item in {expr}][:50]"]
        return []

    def record(self, item, statements, expr, typed, outcome):
        """Turns one run into a test (or a finding); returns True when something was kept."""
        fn = item["obj"]
        if outcome.get("setup_failed") or outcome.get("fork_failed"):
            return False
        if outcome.get("effects"):
            # It changes something outside its tmp_path: after `apply` that would be the user's
            # project or home. A finding to report, never a test to keep.
            self.side_effect(item, statements, expr, outcome["effects"])
            return False
        blocked = sandbox_block(outcome)
        if blocked:
            # Its effect depends on where it runs: a finding to report, never a test to keep.
            self.blocked(item, expr, blocked)
            return False
        ret_hint = hints_of(fn).get("return", inspect.Parameter.empty) if item["kind"] != "class" else None
        body = list(statements)
        if outcome.get("ok"):
            second = self.run_again(statements, expr)
            if not second.get("ok") or second.get("settled") != outcome.get("settled"):
                return False
            shown = self.settled_expr(expr, outcome)
            if shown is None:
                return False
            body += self.settled_setup(expr, outcome)
            # A result that breaks the return annotation is the code's fault only when the
            # arguments kept theirs: an ill-typed input's odd result is the input's.
            contradicted = self.contradicts(outcome, ret_hint) if item["kind"] in (
                "function", "method", "staticmethod", "classmethod") and not outcome.get("settled") \
                and outcome.get("typed_ok") and not private(item["name"]) else None
            if contradicted:
                self.finding(item, "annotation", expr, contradicted, outcome["type"])
                body.append(f"assert isinstance({shown}, {contradicted})")
                self.add_test(self.name_for(item, body, "_contract"), body, False, set())
                return True
            why = self.suspicious(item, typed, outcome) if not statements else None
            if why:
                # Looks like a bug, not behaviour to pin down: flagged for review, and the test
                # asserts only the result's type.
                self.finding(item, "suspicious_result", expr, "a result its name or docstring allows",
                             f"{why}")
                lines = [f"assert type({grouped(shown)}).__name__ == {outcome['type']!r}"]
                uses, imports = False, set()
                lines += self.recorded_lines(outcome, second)
            else:
                lines, uses, imports = self.observed(shown, outcome, second)
            if not lines:
                return False
            owners = self.classes.get(outcome.get("type"))
            if owners is not None and not statements and outcome.get("type_module") == self.spec["module"] \
                    and len(owners) < 8 and expr not in owners and len(expr) < 100:
                owners.append(expr)  # an object a function made: an owner and an argument too
            if outcome.get("is_callable") and not statements and len(self.closures) < 30:
                self.closures.append((list(statements), expr))
                self.pending += [self.closures[-1]] * 3  # called right away, a few times
            self.remember_made(statements, expr, outcome)
            if outcome.get("plain") and not statements and len(self.inputs.produced) < 40 \
                    and outcome.get("type") in ("str", "bytes", "list", "dict", "tuple", "int") \
                    and len(expr) < 120:
                self.inputs.produced.append(expr)
            self.add_test(self.name_for(item, body + lines), body + lines, uses, imports)
            return True
        exc = outcome.get("exc", "")
        if exc in NOT_KEPT:
            return False
        if outcome.get("in_module") and not outcome.get("explicit") and exc in CONTRACT_ERRORS \
                and outcome.get("typed_ok") and not private(item["name"]):
            # A builtin exception escaping on well-typed input: a contract finding.
            loose = any(t[1] in (list, dict, tuple, set) for t in typed)
            if not (exc == "TypeError" and loose):
                ret = ret_hint if inspect.isclass(ret_hint) and ret_hint.__module__ == "builtins" else None
                expr = self.shortest(statements, expr, typed, outcome)
                self.finding(item, "builtin_exception", expr, "no exception", f"{exc}: {outcome.get('msg')}")
                if ret is not None:
                    body.append(f"assert isinstance({expr}, {ret.__name__})")
                    self.add_test(self.name_for(item, body, "_contract"), body, False, set())
                return True
        if "not callable" in (outcome.get("msg") or ""):
            self.inputs.wants_callable.add(item["name"])
        if not outcome.get("in_module") and not self.in_project(outcome.get("inner_file", "")):
            # Raised by the standard library or an installed package: what it raised on may be
            # the call's surroundings (the files of the folder it ran in), not the code.
            return False
        body, uses, imports = self.raised_body(statements, expr, outcome)
        if body is None:
            return False
        second = self.run_again(statements, expr)
        if second.get("ok") or second.get("exc") != exc:
            return False  # not the same every time: nothing to assert
        self.add_test(self.name_for(item, body), body, uses, imports)
        return True

    # -- the bodies of the tests of what a call did (record's, and a replay's) --

    def observed(self, shown, outcome, second):
        """(assertion lines, uses pytest, imports) of a returned value, with the count of the
        calls a recording callable saw when both runs agree on it; lines None when nothing can
        be said."""
        lines, uses, imports = self.assertion(shown, outcome, second)
        if not lines:
            return None, False, set()
        return lines + self.recorded_lines(outcome, second), uses, imports

    def recorded_lines(self, outcome, second):
        if outcome.get("recorded") is not None and outcome.get("recorded") == second.get("recorded"):
            return [f"assert len(calls) == {outcome['recorded']}"]
        return []

    def returned_body(self, statements, expr, outcome, second):
        """(body, uses pytest, imports) of the test of a call that returned, written as record()
        writes a test that asserts the observed value (setup, settling, assertions); body None
        when nothing can be said."""
        lines, uses, imports = self.observed(self.settled_expr(expr, outcome), outcome, second)
        if not lines:
            return None, False, set()
        return list(statements) + self.settled_setup(expr, outcome) + lines, uses, imports

    def raised_body(self, statements, expr, outcome):
        """(body, uses pytest, imports) of the test of a call that raised: `pytest.raises` with
        the exception as a test can name it; body None when it cannot (a local class)."""
        ref = self.reference(outcome.get("exc_module"), outcome.get("exc_qualname") or outcome.get("exc", ""))
        if ref is None:
            return None, False, set()
        name, imports = ref
        shown = self.settled_expr(expr, outcome) or expr
        body = list(statements) + self.settled_setup(expr, outcome) + [f"with pytest.raises({name}):", f"    {shown}"]
        return body, True, imports

    def remember_made(self, statements, expr, outcome):
        """An object of the package's own classes, made by one call: an argument for a parameter
        annotated with its class (a parsed document for `compose(doc: Docstring)`)."""
        top = self.spec["module"].split(".")[0]
        module = outcome.get("type_module") or ""
        if statements or outcome.get("plain") or not (module == top or module.startswith(top + ".")):
            return
        made = self.inputs.made.setdefault(f"{module}.{outcome.get('qualname')}", [])
        if expr not in made and len(made) < 6 and len(expr) < 800:
            made.append(expr)

    def flag_without_test(self, item, statements, expr, typed, outcome):
        """A well-typed call that reached nothing new but returned what looks like a bug: flagged
        for review once per function (which try finds it must not depend on coverage order)."""
        if statements or not outcome.get("ok") or not outcome.get("typed_ok"):
            return
        function = f"{self.spec['module']}.{item['name']}"
        if any(f["function"] == function and f["kind"] == "suspicious_result" for f in self.findings):
            return
        why = self.suspicious(item, typed, outcome)
        if why:
            self.finding(item, "suspicious_result", expr, "a result its name or docstring allows", why)

    def suspicious(self, item, typed, outcome):
        """Why a plain result looks like a bug (tt_oracle), judged on literal values only: the
        arguments and the result are read with ast.literal_eval, never evaluated."""
        if not outcome.get("plain") or item["kind"] not in ("function", "staticmethod"):
            return None
        try:
            result = ast.literal_eval(outcome["repr"])
            kwargs = {t[2]: ast.literal_eval(t[0]) for t in typed}
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        try:
            return tt_oracle.suspicious(item["obj"], (), kwargs, result)
        except Exception:  # noqa: BLE001 - an oracle that cannot judge says nothing
            return None

    def in_project(self, path):
        """Whether a file belongs to the package of the module under test (another of its
        modules raised), and is not one of this helper's own."""
        if not path or os.path.dirname(path) == os.path.dirname(os.path.abspath(__file__)):
            return False
        top = self.spec["module"].split(".")[0]
        root = os.path.dirname(self.target)
        for _ in range(self.spec["module"].count(".")):
            root = os.path.dirname(root)
        package = os.path.join(root, top)
        return path == os.path.join(root, top + ".py") or path.startswith(package + os.sep)

    def add_test(self, name, body, uses, imports):
        self.tests.append((name, body, uses, set(imports)))

    def contradicts(self, outcome, hint):
        simple = {int: "int", float: "float", str: "str", bool: "bool", list: "list", dict: "dict",
                  tuple: "tuple", bytes: "bytes"}
        try:
            if hint not in simple:
                return None
        except TypeError:  # an unhashable annotation
            return None
        got = outcome["type"]
        if hint is float and got in ("int", "float"):
            return None
        if hint is int and got == "bool":
            return None
        return None if got == simple[hint] else simple[hint]

    def blocked(self, item, call, what):
        # Calling it again would only hit the sandbox again: the search leaves it alone.
        self.timeouts[item["name"]] = 2
        function = f"{self.spec['module']}.{item['name']}"
        if any(f["function"] == function and f["actual"] == what for f in self.findings):
            return
        self.finding(item, "sandbox_denied", call, "no effect outside the sandbox", what)

    def side_effect(self, item, statements, call, effects):
        """One finding per function, with the first call that showed it; its string arguments
        look like paths from now on (observed use), so later calls get a tmp_path to work in."""
        self.pathy.add(item["name"])
        function = f"{self.spec['module']}.{item['name']}"
        if any(f["function"] == function and f["kind"] == "side_effect" for f in self.findings):
            return
        what = "; ".join(e["effect"] for e in effects[:3])
        shown = "; ".join(list(statements) + [call])
        self.finding(item, "side_effect", shown, "no effect outside its tmp_path", what)

    def finding(self, item, kind, call, expected, actual):
        self.findings.append({"module": self.spec["module"], "function": f"{self.spec['module']}.{item['name']}",
                              "kind": kind, "call": call, "expected": str(expected), "actual": str(actual),
                              "test": None})


# ---- examples that only hold on their author's machine ---------------------------------------------

HOME_PATTERN = re.compile(r"(/Users/|/home/|/root/|[A-Za-z]:\\\\Users|~/)")
ABSOLUTE = re.compile(r"""(?:(?<=['"(])|^)(/[A-Za-z0-9._-]+)[^'"\s)]*""")
DATE_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}:\d{2}\b|datetime\.(?:datetime|date|time)\(")
MACHINE_ROOTS = {"/Users", "/home", "/root", "/tmp", "/var", "/private", "/opt", "/usr", "/etc", "/mnt",
                 "/Volumes", "/srv", "/run", "/proc", "/nix", "/media"}


def _machine_names():
    names = []
    try:
        import getpass
        names.append(getpass.getuser())
    except Exception:  # noqa: BLE001
        pass
    try:
        import socket
        names.append(socket.gethostname())
    except Exception:  # noqa: BLE001
        pass
    # "root" is a common word as well as a user name: no evidence on its own.
    return [n for n in names if n and len(n) >= 3 and n != "root"]


def machine_specific(source, want):
    """What makes a doctest's expected output hold only where it was written (a home folder, an
    absolute path of that machine, the user or host name, a date or time, an object address), or
    None. What the example's own input already says does not count."""
    if ADDRESS.search(want):
        return "an object address"
    home = HOME_PATTERN.search(want)
    if home and home.group(1) not in source:
        return f"a home folder ({home.group(0)}...)"
    for found in ABSOLUTE.finditer(want):
        if found.group(1) in MACHINE_ROOTS and found.group(1) not in source:
            return f"a path of another machine ({found.group(0)[:60]})"
    for name in _machine_names():
        if re.search(r"\b" + re.escape(name) + r"\b", want) and name not in source:
            return "the user or host name"
    if DATE_TIME.search(want) and not DATE_TIME.search(source):
        return "a date or time"
    return None


# ---- L3: the test of an entry point's run -------------------------------------------------------

def cli_test(module, argv, first, second):
    """(name, body) of the test of one run of an entry point: it asserts the exit code and, when
    the two runs agree and the output is short and names nothing of this machine, the output."""
    code, out, _ = first
    body = ["result = subprocess.run(",
            f"    [sys.executable, '-m', {module!r}] + {argv!r},",
            "    capture_output=True, text=True, timeout=60, cwd=tmp_path,",
            "    env={**os.environ, 'PYTHONPATH': os.pathsep.join(p for p in sys.path if p)},",
            ")",
            f"assert result.returncode == {code}"]
    stable = second is not None and second[:2] == first[:2]
    if stable and len(out) <= 400 and not ADDRESS.search(out) \
            and not any(p in out for p in _machine_paths_of_run()):
        body.append(f"assert result.stdout == {out!r}")
    digest = hashlib.sha1("\n".join(body).encode()).hexdigest()[:8]
    return f"test_{module.replace('.', '_')}_cli_{digest}", body


def _machine_paths_of_run():
    """The folders of this machine an entry point's output must not be asserted with."""
    cwd = ORIGIN["cwd"]
    found = [cwd, cwd.split(os.sep + "workspace" + os.sep)[0], ORIGIN["home"], ORIGIN["tmp"]]
    return [p for p in found if p and len(p) > 4]
