"""team-testing's built-in test generator: a feedback-directed search for Python (Randoop/Pynguin style).

Reads one JSON request on stdin, writes one JSON result on stdout (logs go to stderr). Every call of
the code under test runs in a forked child with a timeout and a fresh temporary working directory;
a call is kept only when it reaches lines no earlier call reached. Observed values become assertions
only when they are stable across two runs; stated contracts (doctest examples, return annotations,
no builtin exception escaping on well-typed input) win over observed values. All random choices come
from one seeded generator. The search stops on counts when it can (every callable tried, the lines
all reached, nothing new for a while), so the same seed gives byte-identical files on a module the
search finishes; on a module it does not finish, the budget ends it, and what it wrote depends on
how many candidates the machine ran by then.

The result (one JSON object) leaves on a descriptor of its own; what the code under test prints goes
to stderr. Errors of the generator itself are caught per module, phase and candidate and reported
as `generator_error` findings with their traceback.
"""

import ast
import importlib
import inspect
import hashlib
import json
import os
import pickle
import random
import re
import sys
import time
import traceback

import tt_doctest
import tt_oracle
from tt_analysis import (argparse_options, discover, entry_points, executable_lines, harvest_constants,
                         harvest_patterns, hints_of, parser_grammar)
from tt_execution import (MAX_REPR, ORIGIN, CallPlace, Execution, _describe_error, audited_entry, log,
                          run_call, run_entry, sandbox_block)
from tt_inputs import CallBuilding, Inputs, entry_argvs

CONTRACT_ERRORS = ("IndexError", "KeyError", "ZeroDivisionError", "AttributeError", "TypeError",
                   "UnboundLocalError")
MAX_CANDIDATES = 6000     # per module: a bound on counts (time is the other)
STAGNATION = 400          # candidates in a row that add nothing, above the target: the module is done
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


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


# ---- the search -----------------------------------------------------------------------------------

MIN_TRIES = 10            # every callable gets at least this many candidates before aiming starts
NOT_KEPT = ("InternalError", "ChildCrashed", "Unpicklable", "ForkFailed", "RecursionError", "MemoryError",
            "KeyboardInterrupt")
CALLABLE_TYPES = ("function", "builtin_function_or_method", "partial", "method", "curry")


class ModuleSearch(CallBuilding, Execution):
    def __init__(self, spec, module, source, rng, req, deadline):
        self.spec, self.module, self.rng, self.req, self.deadline = spec, module, rng, req, deadline
        self.source = source
        self.target = os.path.abspath(module.__file__)
        self.namespace = dict(vars(module))
        for name, std in (("copy", __import__("copy")), ("pickle", pickle), ("itertools", __import__("itertools"))):
            self.namespace.setdefault(name, std)  # what the operator forms of dunders use
        self.items = discover(module)
        self.classes = {i["name"]: [] for i in self.items if i["kind"] == "class"}
        self.inputs = Inputs(rng, harvest_constants(source), self.classes, harvest_patterns(source, module))
        self.inputs.grammar = parser_grammar(source, module)
        self.lines_total = executable_lines(source, self.target)
        self.covered = set()
        self.arcs = set()
        self.missing = set(req.get("missing", {}).get(spec["file"], []))
        self.tests = []            # (name, body lines, uses pytest, imports {(module, name)})
        self.findings = []
        self.timeouts = {}
        self.tried = 0
        self.tries = {}            # item name -> candidates tried
        self.errors = 0
        self.closures = []         # (statements, expression) of results that are callables
        self.bad_owners = {}       # owner expression -> setups it failed
        self.pending = []          # closures just found, to call next
        self.attributes = {}       # class name -> public attributes its instances carry
        self.pathy = set()         # functions seen touching paths named by their arguments
        self.inputs.pathy = self.pathy

    # -- helpers --

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
            second = self.run(statements, expr)
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
                and outcome.get("typed_ok") else None
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
            else:
                lines, uses, imports = self.assertion(shown, outcome, second)
            if not lines:
                return False
            if outcome.get("recorded") is not None and outcome.get("recorded") == second.get("recorded"):
                lines.append(f"assert len(calls) == {outcome['recorded']}")
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
                and outcome.get("typed_ok"):
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
        ref = self.reference(outcome.get("exc_module"), outcome.get("exc_qualname") or exc)
        if ref is None:
            return False
        second = self.run(statements, expr)
        if second.get("ok") or second.get("exc") != exc:
            return False  # not the same every time: nothing to assert
        name, imports = ref
        shown = self.settled_expr(expr, outcome) or expr
        body += self.settled_setup(expr, outcome)
        body.append(f"with pytest.raises({name}):")
        body.append(f"    {shown}")
        self.add_test(self.name_for(item, body), body, True, imports)
        return True

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

    def shortest(self, statements, expr, typed, outcome):
        """The shortest call that raises the same exception on the same line: each literal
        argument tried as its type's smallest value ('' , 0, [], ...), kept when it still does."""
        head = expr.split("(", 1)[0]
        args = [t[0] for t in typed]
        if expr != f"{head}({', '.join(args)})":
            return expr  # keywords or *args: left as found
        smallest = {str: "''", int: "0", float: "0.0", list: "[]", dict: "{}", tuple: "()", bytes: "b''"}
        for i, t in enumerate(typed):
            small = smallest.get(t[1]) if isinstance(t[1], type) else None
            if small is None or args[i] == small:
                continue
            trial = args[:i] + [small] + args[i + 1:]
            candidate = f"{head}({', '.join(trial)})"
            again = self.run(statements, candidate, [(small,) + tuple(t[1:])])
            if not again.get("ok") and again.get("exc") == outcome.get("exc") \
                    and again.get("inner_line") == outcome.get("inner_line") and again.get("typed_ok"):
                args = trial
        return f"{head}({', '.join(args)})"

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

    def candidate_failed(self, item, exc):
        """A problem of the generator on one candidate: reported (a few per module), never fatal."""
        self.errors += 1
        if self.errors <= 3:
            self.findings.append(generator_error(self.spec["module"], item["name"] if item else "", exc))

    # -- phases --

    def doctests(self):
        """Docstring examples are stated contracts, and doctest says what they mean (tt_doctest):
        each docstring the module's source gives an object of its own runs as one doctest, and
        becomes one test that runs it the same way. An example whose output only holds on its
        author's machine is skipped with a note; a docstring doctest cannot read is left out."""
        docs = tt_doctest.own_docstrings(self.source)
        tt_doctest.prepare()
        for item in self.items:
            try:
                doc = tt_doctest.own_doc(item, docs)
                examples = tt_doctest.examples_of(doc) if doc else None
                if examples:
                    self.docstring(item, examples)
            except Exception as exc:  # noqa: BLE001
                self.candidate_failed(item, exc)

    def run_docstring(self, item, text, examples):
        """Runs the doctest text in a forked call, as doctest does; (outcome, per-example records)."""
        namespace = dict(self.namespace, __tt_doctest__=lambda t, n: tt_doctest.run_examples(
            t, n, self.module, lambda exc: _describe_error(exc, self.target)))
        call = f"__tt_doctest__({text!r}, {self.spec['module'] + '.' + item['name']!r})"
        timeout = self.req["call_timeout_s"] * max(2, min(len(examples), 10))
        outcome = run_call(namespace, [], call, self.target, timeout)
        return outcome, outcome.get("raw") if outcome.get("ok") else None

    def docstring(self, item, examples, skipped=None):
        """One docstring's examples: a test when doctest passes them here (and again); a test and
        a `doctest` finding when an example fails as doctest judges it; a note when what fails is
        where it ran (the sandbox, a missing file or module) or the example itself (not Python),
        with a test of the examples before it when they compare an output."""
        if skipped is None:
            skipped = {}
            for i, ex in enumerate(examples):
                local = machine_specific(ex.source, ex.want)
                if local:
                    skipped[i] = f"the expected output names {local}"
                    self.note(item, ex, skipped[i])
        if not tt_doctest.checks_something(examples, skipped):
            return  # every example with an output is skipped: the test would compare nothing
        text = tt_doctest.render(examples, skipped)
        if text is None:
            return self.note(item, examples[0], "doctest reads its examples differently once written out")
        plain = "".join(line for _, line in text)
        outcome, results = self.run_docstring(item, plain, examples)
        if outcome.get("effects"):
            return self.side_effect(item, [], examples[0].source.strip(), outcome["effects"])
        if results is None:
            why = "they did not finish in time" if outcome.get("timeout") else \
                f"they stopped the run ({outcome.get('exc')})"
            return self.note(item, examples[0], why)
        again = self.run_docstring(item, plain, examples)[1]
        if again is None or [r["status"] for r in again] != [r["status"] for r in results]:
            return self.note(item, examples[0], "they give other results from one run to the next")
        failed = tt_doctest.first_failure(results)
        if failed is not None:
            earlier = [i for i in skipped if i < failed]
            why = tt_doctest.not_the_code(results[failed], self.spec["module"].split(".")[0],
                                          sandbox_block(results[failed].get("error", {"ok": True})))
            if earlier or why:
                self.note(item, examples[failed], why or "it may need the skipped example before it")
                prefix = {i: w for i, w in skipped.items() if i < failed}
                return self.docstring(item, examples[:failed], prefix)
        self.keep(outcome)
        body = tt_doctest.test_body(text, self.spec["module"], item["name"])
        base = re.sub(r"[^0-9A-Za-z_]+", "_", item["name"].replace(".", "_")).strip("_")
        name = f"test_{base}_doctest_{hashlib.sha1(chr(10).join(body).encode()).hexdigest()[:6]}"
        self.add_test(name, body, False, set())
        if failed is not None:
            self.doctest_finding(item, examples, results, failed, name)

    def doctest_finding(self, item, examples, results, failed, test):
        """The code breaks its docstring as doctest itself judges it: the first failing example,
        what it showed and what it printed (or raised)."""
        later = sum(1 for r in results[failed + 1:] if r["status"] in ("failed", "raised"))
        got = results[failed].get("got", "").strip() or "nothing printed"
        if later:
            got += f" (and {later} later example(s) of the docstring fail too)"
        self.finding(item, "doctest", examples[failed].source.strip(), examples[failed].want.strip(), got)
        self.findings[-1]["test"] = test

    def note(self, item, example, why):
        """A documented example left out, and why (a `skipped_example` finding, never a defect)."""
        self.finding(item, "skipped_example", example.source.strip(), example.want.strip(), f"skipped: {why}")

    def constructors(self):
        """Instances to call methods on: every class built from a few argument draws; a
        construction that reaches new lines is a test of its own."""
        for item in self.items:
            if item["kind"] != "class" or time.monotonic() > self.deadline:
                continue
            for attempt in range(8):
                try:
                    self.inputs.mode = {0: "required", 1: "boundary"}.get(attempt, "normal")
                    _, expr, typed = self.call_expr(item)
                    if expr is None:
                        break
                    if self.inputs.take_setup():
                        continue  # an owner must stand alone: it is reused in other tests
                    outcome = self.run([], expr, typed)
                    if outcome.get("effects"):
                        self.side_effect(item, [], expr, outcome["effects"])
                        continue
                    if outcome.get("ok") and expr not in self.classes[item["name"]] and \
                            len(self.classes[item["name"]]) < 4:
                        self.classes[item["name"]].append(expr)
                        attrs = [a for a, _, _ in outcome.get("attrs", [])]
                        self.attributes[item["name"]] = sorted(set(self.attributes.get(item["name"], []) + attrs))
                    if self.adds(outcome) and self.record(item, [], expr, typed, outcome):
                        self.keep(outcome)
                except Exception as exc:  # noqa: BLE001
                    self.candidate_failed(item, exc)
            self.inputs.mode = "normal"

    def pick(self, callables):
        """The next callable: each gets MIN_TRIES candidates in turn, then the search aims at the
        uncovered lines (the previous round's missing ones count more) most of the time."""
        if self.tried < len(callables) * MIN_TRIES:
            return callables[self.tried % len(callables)]
        if self.rng.random() < 0.75:
            uncovered = self.lines_total - self.covered
            weights = [len(i["lines"] & uncovered) + 2 * len(i["lines"] & uncovered & self.missing)
                       for i in callables]
            if sum(weights) > 0:
                return self.rng.choices(callables, weights=weights)[0]
        return self.rng.choice(callables)

    def done(self, callables, stale):
        if time.monotonic() > self.deadline or self.tried >= MAX_CANDIDATES:
            return True
        if self.tried < len(callables) * MIN_TRIES:
            return False
        target = float(self.req.get("target_percent", 100) or 100)
        if self.percent() >= 100.0 and stale >= STAGNATION // 4:
            return True
        # The target is a floor: below it the search goes on to the budget's end.
        return self.percent() >= target and stale >= STAGNATION

    def candidate(self, item):
        """(item, statements, expression, typed) of one candidate for `item`."""
        tries = self.tries.get(item["name"], 0)
        self.tries[item["name"]] = tries + 1
        roll = self.rng.random()
        self.inputs.mode = "boundary" if tries == 0 or roll < 0.08 else ("wrong" if roll < 0.18 else "normal")
        if self.pending or (self.closures and self.rng.random() < 0.08):
            setup, made = self.pending.pop() if self.pending else self.rng.choice(self.closures)
            n = self.rng.randint(0, 2)
            args = ", ".join(self.rng.choice([self.inputs.any_, self.inputs.callable_])() for _ in range(n))
            return item, setup + [f"fn = {made}"], f"fn({args})", []
        cls = item.get("cls")
        if cls and item["kind"] in ("method", "property", "dunder") and self.classes.get(cls) \
                and self.rng.random() < 0.35:
            # An object put in some state first, then observed.
            statements = [f"obj = {self.owner(cls)}"] + self.state_changes(cls)
            pre, expr, typed = self.call_expr(item, owner="obj")
            if expr is None:
                return item, None, None, []
            return item, statements + [p for p in pre if p != "obj = obj"], expr, typed
        pre, expr, typed = self.call_expr(item)
        return item, pre, expr, typed

    def l1(self):
        callables = [i for i in self.items if i["kind"] != "class" or i["obj"].__init__ is not object.__init__]
        callables = [i for i in callables if not (i["kind"] == "class" and issubclass(i["obj"], BaseException))] \
            or callables
        stale = 0
        while callables and not self.done(callables, stale):
            item = self.pick(callables)
            self.tried += 1
            if self.timeouts.get(item["name"], 0) >= 2:
                stale += 1
                continue
            try:
                kept = self.try_candidate(*self.candidate(item))
            except Exception as exc:  # noqa: BLE001 - one candidate never loses the others
                self.inputs.take_setup()
                self.candidate_failed(item, exc)
                kept = False
            stale = 0 if kept else stale + 1
        self.inputs.mode = "normal"

    def try_candidate(self, item, pre, expr, typed):
        setup = self.inputs.take_setup()
        if expr is None:
            return False
        statements = setup + list(pre or [])
        outcome = self.run(statements, expr, typed)
        if outcome.get("timeout"):
            self.timeouts[item["name"]] = self.timeouts.get(item["name"], 0) + 1
            return False
        if outcome.get("effects"):
            self.side_effect(item, statements, expr, outcome["effects"])
            return False
        if outcome.get("setup_failed"):
            self.setup_failed(statements, outcome)
            return False
        if outcome.get("ok") and outcome.get("is_callable") and not statements and len(self.closures) < 30 \
                and not self.adds(outcome) and ([], expr) not in self.closures:
            # A function made by a call that added nothing itself: what it does when called may.
            self.closures.append(([], expr))
            self.pending += [([], expr)] * 2
        if not self.adds(outcome):
            if "not callable" in (outcome.get("msg") or ""):
                self.inputs.wants_callable.add(item["name"])
            self.flag_without_test(item, statements, expr, typed, outcome)
            return False
        if self.record(item, statements, expr, typed, outcome):
            self.keep(outcome)
            return True
        return False

    def l2(self):
        """Sequences: an object built, mutated by methods, observed; or functions feeding each other."""
        functions = [i for i in self.items if i["kind"] == "function"]
        owners = sorted({i["cls"] for i in self.items if i.get("cls") and i["kind"] != "class"})
        stale = 0
        limit = max(40, MAX_CANDIDATES // 3)
        start = self.tried
        while self.tried - start < limit and stale < STAGNATION // 2 and time.monotonic() < self.deadline:
            self.tried += 1
            try:
                ready = [c for c in owners if self.classes.get(c)]
                if ready and (not functions or self.rng.random() < 0.7):
                    cls = self.rng.choice(ready)
                    steps = [i for i in self.items if i.get("cls") == cls and i["kind"] != "class"]
                    item = self.rng.choice(steps)
                    statements = [f"obj = {self.owner(cls)}"] + self.state_changes(cls)
                    pre, expr, typed = self.call_expr(item, owner="obj")
                    statements += pre or []
                elif functions:
                    inner, outer = self.rng.choice(functions), self.rng.choice(functions)
                    _, inner_expr, _ = self.call_expr(inner)
                    try:
                        params = [p for p in inspect.signature(outer["obj"]).parameters.values()
                                  if p.default is inspect.Parameter.empty]
                    except (TypeError, ValueError):
                        params = []
                    if not inner_expr or len(params) != 1:
                        self.inputs.take_setup()
                        stale += 1
                        continue
                    statements, expr, typed, item = [f"value = {inner_expr}"], f"{outer['name']}(value)", [], outer
                else:
                    break
                statements = self.inputs.take_setup() + statements
                if not expr:
                    stale += 1
                    continue
                outcome = self.run(statements, expr)
                if outcome.get("effects") or outcome.get("timeout") or not self.adds(outcome):
                    # Any step may have done it: never a test; the single calls (l1) name the culprit.
                    stale += 1
                    continue
                if self.record(item, statements, expr, typed, outcome):
                    self.keep(outcome)
                    stale = 0
                else:
                    stale += 1
            except Exception as exc:  # noqa: BLE001
                self.inputs.take_setup()
                self.candidate_failed(None, exc)
                stale += 1

    def render(self, layer, seed):
        avoid = set(self.req.get("avoid", []))
        tests, seen = [], set()
        for t in self.tests:
            if t[0] not in avoid and t[0] not in seen:  # the same body twice is one test
                seen.add(t[0])
                tests.append(t)
        tests = [t for t in tests if self.loads(t)]
        source, names = self.render_file(tests, layer, seed)
        bad = collect_errors(source, self.spec["module"])
        if bad is None:
            return source, names
        if bad:
            # Some tests do not load as pytest sees them: leave them out, and keep the rest.
            tests = [t for t in tests if t[0] not in bad]
            source, names = self.render_file(tests, layer, seed)
            if collect_errors(source, self.spec["module"]) in (None, set()):
                return source, names
        self.findings.append({"module": self.spec["module"], "function": self.spec["module"],
                              "kind": "generator_error", "call": "pytest --collect-only",
                              "expected": "the written tests load", "actual": "the file did not load; no tests",
                              "test": None})
        return "", []

    def header_names(self, tests):
        used = set()
        text = "\n".join(line for t in tests for line in t[1])
        for i in self.items:
            top = i["name"].split(".")[0]
            if re.search(r"\b" + re.escape(top) + r"\b", text):
                used.add(top)
        return used, text

    def render_file(self, tests, layer, seed):
        used, text = self.header_names(tests)
        extra = {}
        for t in tests:
            for module, name in t[3]:
                if module == self.spec["module"]:
                    used.add(name)
                else:
                    extra.setdefault(module, set()).add(name)
        out = [f'"""Tests for {self.spec["module"]} ({self.spec["file"]}), generated by team-testing\'s '
               f'built-in generator (layer {layer}, seed {seed})."""']
        std = ["tempfile"] + [m for m in ("asyncio", "copy", "itertools", "pickle") if re.search(r"\b" + m + r"\.", text)]
        out += [f"import {m}" for m in sorted(std)] + ["", "import pytest", ""]
        if used:
            out.append(f"from {self.spec['module']} import {', '.join(sorted(used))}")
        for module in sorted(extra):
            out.append(f"from {module} import {', '.join(sorted(extra[module]))}")
        out += ["", "", isolation_fixture()]
        for name, body, _, _ in tests:
            out += ["", "", f"def {name}({test_params(body)}):"]
            for line in body:
                out.extend("    " + part for part in line.split("\n"))
        return "\n".join(out) + "\n", [t[0] for t in tests]

    def loads(self, test):
        """Whether one test compiles and names nothing undefined (a builtin that is not a name,
        an exception not imported): checked before it is written."""
        name, body, _, imports = test
        lines = [f"def {name}({test_params(body)}):"]
        for line in body:
            lines.extend("    " + part for part in line.split("\n"))
        text = "\n".join(lines) + "\n"
        try:
            tree = ast.parse(text)
            compile(tree, "<test>", "exec")
        except (SyntaxError, ValueError, RecursionError):
            return False
        known = set(dir(__builtins__) if not isinstance(__builtins__, dict) else __builtins__)
        known |= {"pytest", "tempfile", "asyncio", "copy", "itertools", "pickle", "tmp_path"}
        known |= {n for _, n in imports}
        known |= {i["name"].split(".")[0] for i in self.items}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                known.add(node.id)
            elif isinstance(node, ast.arg):
                known.add(node.arg)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                known.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                known.add(node.name)
            elif isinstance(node, (ast.comprehension,)):
                for sub in ast.walk(node.target):
                    if isinstance(sub, ast.Name):
                        known.add(sub.id)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in known:
                return False
        return True


def grouped(expr):
    """An operator expression in parentheses, so `assert (a == b) is True` keeps its meaning."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return f"({expr})"
    if isinstance(node, (ast.Compare, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.IfExp, ast.Lambda)):
        return f"({expr})"
    return expr


PYTEST = {}  # what the probe of this interpreter's pytest found, once per helper run


def _pytest_env(place):
    env = dict(os.environ, HOME=place.home, TMPDIR=place.tmp, PYTHONDONTWRITEBYTECODE="1")
    paths = [os.path.join(ORIGIN["cwd"], p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths + [ORIGIN["cwd"]])
    return env


def pytest_problem():
    """Why this interpreter cannot run pytest, in a line ("" when it can; None when it has no
    pytest at all). A pytest that is installed but does not start (Debian's pytest 7.2 seen by
    PyPy 3.9 lacks `exceptiongroup`) is asked once, in a folder of its own."""
    import importlib.util
    import subprocess
    if "problem" in PYTEST:
        return PYTEST["problem"]
    if importlib.util.find_spec("pytest") is None:
        PYTEST["problem"] = None
        return None
    place = CallPlace()
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "--version"], capture_output=True, text=True,
                              timeout=120, cwd=place.tmp_path, env=_pytest_env(place), stdin=subprocess.DEVNULL)
        lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        PYTEST["problem"] = "" if done.returncode == 0 else (lines[-1] if lines else f"exit {done.returncode}")
    except (OSError, subprocess.SubprocessError) as exc:
        PYTEST["problem"] = f"{type(exc).__name__}: {exc}"
    finally:
        place.remove()
    return PYTEST["problem"]


def interpreter_name():
    """This interpreter in words: `PyPy 3.9.16 (/usr/bin/pypy3)`."""
    import platform
    return f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})"


def pytest_env_issue(module):
    """The env_issue finding of an interpreter whose pytest does not run (None when it runs or
    is not installed): the tests were compiled, not collected."""
    problem = PYTEST.get("problem")
    if not problem:
        return None
    return {"module": module, "function": module, "kind": "env_issue",
            "call": f"{sys.executable} -m pytest --collect-only",
            "expected": "pytest runs in the project's interpreter",
            "actual": f"pytest does not run in {interpreter_name()}: {problem}; the written tests were "
                      f"compiled, not collected", "test": None}


def collect_errors(source, module):
    """pytest's view of a written file: None when it collects, else the names of tests that did
    not load (an empty set when the whole file did not). Collection runs in a folder of its own,
    like a call; where pytest is not installed, or does not run in this interpreter (an env_issue
    `pytest_env_issue` reports), compiling has to do."""
    import subprocess
    try:
        compile(source, "<generated>", "exec")
    except (SyntaxError, ValueError):
        return set()
    if not source.strip() or pytest_problem() is None or pytest_problem():
        return None
    place = CallPlace()
    try:
        path = os.path.join(place.tmp_path, "test_tt_collect.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        try:
            done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                                   "-o", "addopts=", path], capture_output=True, text=True, timeout=120,
                                  cwd=place.tmp_path, env=_pytest_env(place), stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return set()
        if done.returncode in (0, 5):
            return None
        log(f"collection of the tests for {module} failed:\n{done.stdout[-1500:]}")
        return set()
    finally:
        place.remove()


def isolation_fixture():

    """The autouse fixture every generated module carries (tt_isolation.py, shipped beside us)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tt_isolation.py"),
              encoding="utf-8") as f:
        text = f.read()
    return text[text.index("@pytest.fixture"):].rstrip()


def test_params(body):
    """The fixtures a test's body uses: tmp_path, where its files live."""
    return "tmp_path" if any(re.search(r"\btmp_path\b", line) for line in body) else ""


# ---- L3: the project's entry points, run as subprocesses -----------------------------------------

def e2e_tests(req, rng, deadline):
    """Runs each entry point with argument sets drawn from its argparse definition; a test asserts
    the exit code and, when it is stable and short, the output. An entry point that changes
    anything outside its tmp_path is a side_effect finding, never a test."""
    timeout = max(5.0, float(req.get("call_timeout_s", 2)) * 5)
    tests, findings = [], []
    for module, path in entry_points(os.getcwd()):
        flags, positionals = argparse_options(path) if path else ([], [])
        for argv in entry_argvs(flags, positionals, rng):
            if time.monotonic() > deadline:
                break
            first, second = run_entry(module, argv, timeout), run_entry(module, argv, timeout)
            if first is None:
                continue
            code, out, effects = first
            if effects or (second and second[2]):
                effects = effects or second[2]
                if not any(f["function"] == module for f in findings):
                    findings.append({"module": module, "function": module, "kind": "side_effect",
                                     "call": f"python -m {module} {' '.join(argv)}".strip(),
                                     "expected": "no effect outside its tmp_path",
                                     "actual": "; ".join(e["effect"] for e in effects[:3]), "test": None})
                continue
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
            tests.append((f"test_{module.replace('.', '_')}_cli_{digest}", body))
    return tests, findings


def _machine_paths_of_run():
    """The folders of this machine an entry point's output must not be asserted with."""
    cwd = ORIGIN["cwd"]
    found = [cwd, cwd.split(os.sep + "workspace" + os.sep)[0], ORIGIN["home"], ORIGIN["tmp"]]
    return [p for p in found if p and len(p) > 4]


def render_e2e(tests, seed):
    out = [f'"""End-to-end tests of the project\'s entry points, generated by team-testing\'s built-in '
           f'generator (layer L3-e2e, seed {seed})."""', "import os", "import subprocess", "import sys",
           "import tempfile", "", "import pytest", "", "", isolation_fixture()]
    seen = set()
    for name, body in tests:
        if name in seen:
            continue
        seen.add(name)
        out += ["", "", f"def {name}(tmp_path):"] + ["    " + line for line in body]
    return "\n".join(out) + "\n", sorted(seen)


def test_file_name(module):
    return "test_" + module.replace(".", "_") + ".py"


def search_module(spec, req, rng, deadline):
    entry = {"module": spec["module"], "file": spec["file"], "test_file": test_file_name(spec["module"]),
             "source": "", "tests": [], "lines_total": 0, "lines_covered": 0,
             "import_error": None, "import_error_kind": None}
    try:
        module = importlib.import_module(spec["module"])
    except BaseException as exc:  # noqa: BLE001 - the module's own import can raise anything
        entry["import_error"] = f"{type(exc).__name__}: {exc}"
        own = spec["module"].split(".")[0]
        missing = isinstance(exc, ModuleNotFoundError) and not (exc.name or "").startswith(own)
        # A package that reads its own installed metadata when imported (its version) is not
        # installed in this interpreter: the environment's doing, not the code's.
        uninstalled = type(exc).__name__ in ("PackageNotFoundError", "DistributionNotFound")
        if uninstalled:
            entry["import_error"] += " (the package reads its installed metadata on import: install it in this interpreter, e.g. pip install -e .)"
        entry["import_error_kind"] = "env_issue" if missing or uninstalled else "code_defect"
        return entry, []
    try:
        with open(module.__file__, encoding="utf-8") as f:
            source = f.read()
    except (OSError, TypeError) as exc:
        entry["import_error"] = f"cannot read the source: {exc}"
        entry["import_error_kind"] = "env_issue"
        return entry, []
    search = ModuleSearch(spec, module, source, rng, req, deadline)
    phases = [search.doctests, search.constructors]
    # L2 starts with sequences; L1 builds objects in some state too, inside its own search.
    phases += [search.l2, search.l1] if req.get("layer", "").startswith("L2") else [search.l1]
    for phase in phases:
        try:
            phase()
        except Exception as exc:  # noqa: BLE001 - a failed phase keeps what the others found
            search.findings.append(generator_error(spec["module"], phase.__name__, exc))
    entry["source"], entry["tests"] = search.render(req.get("layer", ""), req.get("seed"))
    if not entry["tests"]:
        entry["source"] = ""
    entry["lines_total"] = len(search.lines_total)
    entry["lines_covered"] = len(search.covered & search.lines_total)
    entry["calls_tried"] = search.tried
    return entry, search.findings


DEFAULT_MODULE_BUDGET_S = 8.0  # per module when the request names no budget (under a third of Pynguin's 20 s
#                                and its start-up, for the same modules)


def module_weight(spec):
    """How much of the budget a module gets: its size in lines (read, not imported), at least a
    small module's share."""
    try:
        with open(spec.get("file", ""), encoding="utf-8") as f:
            lines = sum(1 for line in f if line.strip() and not line.lstrip().startswith("#"))
    except (OSError, UnicodeDecodeError):
        lines = 100
    return max(60, min(lines, 1500))


def generator_error(module, where, exc):
    """A problem of the generator itself, kept as a finding with its traceback: one module or one
    candidate failing never loses the others."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {"module": module, "function": f"{module}.{where}" if where else module, "kind": "generator_error",
            "call": where or "", "expected": "the generator handles it", "actual": text[-2000:], "test": None}


def result_channel():
    """The JSON result goes out on a descriptor of its own (a duplicate of the original stdout);
    descriptor 1 and sys.stdout then point at stderr, so whatever the code under test prints (on
    import, on call) can never corrupt the result."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def main():
    channel = result_channel()
    req = json.load(sys.stdin)
    started = time.monotonic()
    specs = req.get("modules", [])
    budget = req.get("budget_s")
    if budget is None:
        budget = DEFAULT_MODULE_BUDGET_S * max(1, len(specs))
    end = started + float(budget)
    rng = random.Random(req.get("seed", 1))
    if req.get("layer", "").startswith("L3"):
        points = len(entry_points(os.getcwd()))
        tests, findings = e2e_tests(req, rng, end)
        source, names = render_e2e(tests, req.get("seed"))
        entry = {"module": "entry_points", "file": "", "test_file": "test_entry_points.py",
                 "source": source if names else "", "tests": names, "lines_total": 0, "lines_covered": 0,
                 "import_error": None, "import_error_kind": None}
        channel.write(json.dumps({"modules": [entry], "findings": findings,
                                  "stats": {"calls_tried": len(tests), "tests": len(names),
                                            "entry_points": points,
                                            "seconds": round(time.monotonic() - started, 3)}}))
        channel.flush()
        return
    modules, findings, tried = [], [], 0
    weights = [module_weight(spec) for spec in specs]
    for index, spec in enumerate(specs):
        # The time left, shared by size: a big module gets more of it than a small one.
        share = (end - time.monotonic()) * weights[index] / max(1, sum(weights[index:]))
        # Each module's own generator, from the seed and its name: the same seed gives the same
        # tests whether the modules are searched together or in shards on several hosts.
        module_rng = random.Random(f"{req.get('seed', 1)}:{spec.get('module', '')}")
        try:
            entry, found = search_module(spec, req, module_rng, time.monotonic() + share)
        except BaseException as exc:  # noqa: BLE001 - one module never loses the others
            if isinstance(exc, KeyboardInterrupt):
                raise
            log(f"generator error in {spec.get('module')}: {exc!r}")
            entry = {"module": spec.get("module", ""), "file": spec.get("file", ""),
                     "test_file": test_file_name(spec.get("module", "m")), "source": "", "tests": [],
                     "lines_total": 0, "lines_covered": 0, "import_error": None, "import_error_kind": None}
            found = [generator_error(spec.get("module", ""), "", exc)]
        tried += entry.pop("calls_tried", 0)
        modules.append(entry)
        findings.extend(found)
    issue = pytest_env_issue(next((m["module"] for m in modules if m["tests"]), ""))
    if issue is not None:
        findings.append(issue)
    kept = sum(len(m["tests"]) for m in modules)
    channel.write(json.dumps({"modules": modules, "findings": findings,
                              "stats": {"calls_tried": tried, "tests": kept,
                                        "seconds": round(time.monotonic() - started, 3)}}))
    channel.flush()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--entry-points":
        # For a plan: the entry points L3 would run (files are read, nothing is imported).
        print(json.dumps([module for module, _ in entry_points(sys.argv[2])]))
        sys.exit(0)
    if len(sys.argv) > 3 and sys.argv[1] == "--audit-run":
        audited_entry(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.dont_write_bytecode = True
        main()
