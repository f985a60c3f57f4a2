"""The generator's search stage: the phases of a module's search, and layer L3's runs.

A module's search runs its docstring examples as doctest does (tt_doctest), builds instances of
its classes, then draws candidates: every callable a minimum of tries, then aimed at the lines
no kept call reached (the previous round's missing ones count more); a candidate is kept only
when it reaches a line or a branch no kept call did. It stops on counts when it can (every
callable tried, the lines all reached, nothing new for a while), else at its deadline. When the
request names the lines a change added or modified, a last phase varies the successful calls of
the items defined on them at the boundaries of their arguments' kinds, so that the calls a replay
runs on the change's base include the edge cases a change breaks most often. Layer L3
runs each entry point with drawn command lines instead. The stage at the top: it imports the
stages below it, and only the entry point (ttgen.py) imports it.
"""

import hashlib
import importlib
import inspect
import os
import pickle
import re
import time
import traceback

import tt_doctest
from itertools import zip_longest

from tt_analysis import (argparse_options, defined_lines, discover, entry_points, executable_lines,
                         harvest_constants, harvest_patterns, parser_grammar)
from tt_assertions import Oracle, cli_test, machine_specific
from tt_execution import describe_error, run_call, run_entry, sandbox_block
from tt_memo import CallMemo
from tt_inputs import CallBuilding, Inputs, boundary_variants, entry_argvs
from tt_render import Rendering, test_file_name

MAX_CANDIDATES = 6000     # per module: a bound on counts (time is the other)
STAGNATION = 400          # candidates in a row that add nothing, above the target: the module is done
MIN_TRIES = 10            # every callable gets at least this many candidates before aiming starts
CALLS_PER_FUNCTION = 40   # the call list a replay runs on another version of the code: per item,
CALLS_PER_MODULE = 300    # and per module
BOUNDARY_BASES = 3        # a changed item's successful calls the boundary phase varies,
BOUNDARY_VARIANTS = 60    # and the variants of them it runs at most
BOUNDARY_SHARE = 0.15     # the part of a module's time kept for that phase when it has one
SUCCEEDED_KEPT = 50       # a changed item's successful calls remembered to choose from


def generator_error(module, where, exc):
    """A problem of the generator itself, kept as a finding with its traceback: one module or one
    candidate failing never loses the others."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {"module": module, "function": f"{module}.{where}" if where else module, "kind": "generator_error",
            "call": where or "", "expected": "the generator handles it", "actual": text[-2000:], "test": None}


def module_namespace(module):
    """What a call's expression is evaluated in: the module's names, and the standard modules the
    operator forms of dunders use (a replay evaluates the same calls in the same namespace)."""
    namespace = dict(vars(module))
    for name, std in (("copy", __import__("copy")), ("pickle", pickle), ("itertools", __import__("itertools"))):
        namespace.setdefault(name, std)
    return namespace


# ---- the calls a search ran, for a replay ---------------------------------------------------------

class CallList:
    """The distinct calls a module's search ran on its items, in the order tried: run again on
    another version of the code (tt_replay), a call that gives another result there is a
    behaviour change. A call that changed something, met the sandbox, failed its setup, or did
    not finish is left out: what it would do elsewhere is not its result."""

    def __init__(self, module):
        self.module = module
        self.calls = {}    # (statements, expression) -> the call, in the order tried
        self.unfit = set()  # calls a run of which is left out: never listed
        self.boundary = set()  # the boundary phase's calls (of items a change touched): listed early

    def known(self, statements, expr):
        """Whether a call already ran (listed, or left out)."""
        key = (tuple(statements), expr)
        return key in self.calls or key in self.unfit

    def ran(self, item, statements, expr, outcome):
        key = (tuple(statements), expr)
        if outcome.get("effects") or sandbox_block(outcome) or outcome.get("setup_failed") \
                or outcome.get("fork_failed") or outcome.get("timeout"):
            self.unfit.add(key)
            self.calls.pop(key, None)
        elif key not in self.unfit and key not in self.calls:
            self.calls[key] = {"function": f"{self.module}.{item['name']}", "statements": list(statements),
                               "expr": expr, "test": None}

    def tested(self, statements, expr, test):
        """The test record() kept for a call, when its body spells the call (a contract test of
        the call's shortened form asserts another call)."""
        call = self.calls.get((tuple(statements), expr))
        name, body = test[0], test[1]
        if call is not None and call["test"] is None and expr in "\n".join(body):
            call["test"] = name

    def listed(self, rendered, focus=None):
        """The calls to replay: those whose test is in the written file first, then the boundary
        phase's (the edge cases of what a change touched), then the others in the order tried, at
        most CALLS_PER_FUNCTION per item and CALLS_PER_MODULE in all. A test name is given only
        when that test was written. With `focus` (the short names of the items a change touched
        and of those that call them), a call without a test is listed only when it calls one of
        them, itself or in its setup: the others cannot have changed, and each call listed runs
        four times in a replay."""
        rendered = set(rendered)

        def in_focus(c):
            text = "\n".join(c["statements"] + [c["expr"]])
            return focus is None or any(re.search(rf"\b{re.escape(n)}\(", text) for n in focus)
        calls = [(key in self.boundary, dict(c, test=c["test"] if c["test"] in rendered else None))
                 for key, c in self.calls.items()]
        calls = [(edge, c) for edge, c in calls if c["test"] or in_focus(c)]
        calls = [c for _, c in calls if c["test"]] + [c for edge, c in calls if edge and not c["test"]] \
            + [c for edge, c in calls if not edge and not c["test"]]
        out, per = [], {}
        for call in calls:
            if per.get(call["function"], 0) < CALLS_PER_FUNCTION and len(out) < CALLS_PER_MODULE:
                per[call["function"]] = per.get(call["function"], 0) + 1
                out.append(call)
        return out


def changed_lines(req, file):
    """The lines of `file` (repo-relative, as a module's spec names it) the request's "changed"
    says a change added or modified, in HEAD's version."""
    wanted = os.path.normpath(file or "")
    lines = set()
    for name, numbers in (req.get("changed") or {}).items():
        if os.path.normpath(name) == wanted:
            lines.update(n for n in numbers if isinstance(n, int))
    return lines


# ---- a module's search ---------------------------------------------------------------------------

class ModuleSearch(CallBuilding, Oracle, Rendering):
    """The search of one module: its state, and its phases (the module's docstring examples, its
    classes' constructors, then single calls (l1) or sequences first (l2)); the stages below
    provide the uses of its items (tt_inputs), the calls and their coverage (tt_execution),
    shortening (tt_minimize), tests and findings (tt_assertions) and its file (tt_render)."""

    def __init__(self, spec, module, source, rng, req, deadline):
        self.spec, self.module, self.rng, self.req, self.deadline = spec, module, rng, req, deadline
        self.source = source
        self.target = os.path.abspath(module.__file__)
        self.namespace = module_namespace(module)
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
        self.calls = CallList(spec["module"])  # the candidates run, for a replay (l1 and l2)
        self.memo = CallMemo.of(req, spec["module"])  # outcomes an earlier round already has
        # The items whose definition a change added or modified lines of (the request's
        # "changed"), and their calls that returned: the boundary phase varies them.
        changed = changed_lines(req, spec["file"])
        self.changed_items = {i["name"] for i in self.items if changed & defined_lines(i, self.target)} \
            if changed else set()
        self.succeeded = {}        # changed item name -> [(statements, expression, typed)]

    def focus(self):
        """The short names of the items a change touched and of the module's items whose source
        calls one of them (a behaviour that changed through a call chain); None without a change."""
        if not self.changed_items:
            return None
        touched = {name.split(".")[-1] for name in self.changed_items}
        out = set(touched)
        for item in self.items:
            try:
                text = inspect.getsource(item["obj"])
            except (OSError, TypeError):
                continue
            if any(re.search(rf"\b{re.escape(n)}\(", text) for n in touched):
                out.add(item["name"].split(".")[-1])
        return out

    def ran(self, item, statements, expr, outcome, typed=()):
        """A candidate of `item` ran: noted in the call list, and among a changed item's calls
        that returned."""
        self.calls.ran(item, statements, expr, outcome)
        if item["name"] in self.changed_items and outcome.get("ok") and not outcome.get("effects") \
                and not sandbox_block(outcome):
            calls = self.succeeded.setdefault(item["name"], [])
            if len(calls) < SUCCEEDED_KEPT and all((s, e) != (list(statements), expr) for s, e, _ in calls):
                calls.append((list(statements), expr, list(typed)))

    def record_call(self, item, statements, expr, typed, outcome):
        """record() (tt_assertions), and the test it kept noted with its call in the call list."""
        made = len(self.tests)
        kept = self.record(item, statements, expr, typed, outcome)
        for test in self.tests[made:]:
            self.calls.tested(statements, expr, test)
        return kept

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
            t, n, self.module, lambda exc: describe_error(exc, self.target)))
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
                    self.ran(item, [], expr, outcome, typed)
                    if outcome.get("effects"):
                        self.side_effect(item, [], expr, outcome["effects"])
                        continue
                    if outcome.get("ok") and expr not in self.classes[item["name"]] and \
                            len(self.classes[item["name"]]) < 4:
                        self.classes[item["name"]].append(expr)
                        attrs = [a for a, _, _ in outcome.get("attrs", [])]
                        self.attributes[item["name"]] = sorted(set(self.attributes.get(item["name"], []) + attrs))
                    if self.adds(outcome) and self.record_call(item, [], expr, typed, outcome):
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
        self.ran(item, statements, expr, outcome, typed)
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
        if self.record_call(item, statements, expr, typed, outcome):
            self.keep(outcome)
            return True
        return False

    def boundary(self):
        """The edge cases of what a change touched: for each function, method or constructor a
        changed line defines, up to BOUNDARY_BASES of its calls that returned (those without setup
        statements, and with more literal arguments, first), each with one argument at a boundary
        of its kind or one default left out (tt_inputs.boundary_variants), the bases' variants in
        turn, at most BOUNDARY_VARIANTS per item. Each runs as any candidate does (try_candidate):
        listed for a replay, and a test only when it reaches something new. The phase's time is
        shared among the items: a short budget still reaches each of them."""
        changed = [i for i in self.items if i["name"] in self.changed_items]
        for index, item in enumerate(changed):
            share = time.monotonic() + max(0.0, self.deadline - time.monotonic()) / (len(changed) - index)
            bases = []
            for order, (statements, expr, typed) in enumerate(self.succeeded.get(item["name"], [])):
                variants = [(statements, e, t) for e, t in boundary_variants(item, expr, typed)]
                if variants:
                    bases.append(((bool(statements), -len(variants), order), variants))
            bases = [variants for _, variants in sorted(bases, key=lambda b: b[0])[:BOUNDARY_BASES]]
            runs, seen = [], set()
            for turn in zip_longest(*bases):
                for variant in turn:
                    key = (tuple(variant[0]), variant[1]) if variant else None
                    if variant and key not in seen:
                        seen.add(key)
                        runs.append(variant)
            for statements, expr, typed in runs[:BOUNDARY_VARIANTS]:
                if time.monotonic() > share or self.timeouts.get(item["name"], 0) >= 2:
                    break
                self.calls.boundary.add((tuple(statements), expr))
                if self.calls.known(statements, expr):
                    continue  # it ran already: it reached nothing new then, nor would now
                self.tried += 1
                try:
                    self.try_candidate(item, list(statements), expr, list(typed))
                except Exception as exc:  # noqa: BLE001 - one candidate never loses the others
                    self.inputs.take_setup()
                    self.candidate_failed(item, exc)

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
                self.ran(item, statements, expr, outcome)
                if outcome.get("effects") or outcome.get("timeout") or not self.adds(outcome):
                    # Any step may have done it: never a test; the single calls (l1) name the culprit.
                    stale += 1
                    continue
                if self.record_call(item, statements, expr, typed, outcome):
                    self.keep(outcome)
                    stale = 0
                else:
                    stale += 1
            except Exception as exc:  # noqa: BLE001
                self.inputs.take_setup()
                self.candidate_failed(None, exc)
                stale += 1


def search_module(spec, req, rng, deadline):
    entry = {"module": spec["module"], "file": spec["file"], "test_file": test_file_name(spec["module"]),
             "source": "", "tests": [], "lines_total": 0, "lines_covered": 0,
             "import_error": None, "import_error_kind": None, "calls": []}
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
    if search.changed_items:
        # The edge cases of what a change touched, last: a share of the time is kept for them.
        phases.append(search.boundary)
        search.deadline = time.monotonic() + (deadline - time.monotonic()) * (1 - BOUNDARY_SHARE)
    for phase in phases:
        if phase == search.boundary:
            search.deadline = deadline
        try:
            phase()
        except Exception as exc:  # noqa: BLE001 - a failed phase keeps what the others found
            search.findings.append(generator_error(spec["module"], phase.__name__, exc))
    search.memo.save()
    entry["source"], entry["tests"] = search.render(req.get("layer", ""), req.get("seed"))
    if not entry["tests"]:
        entry["source"] = ""
    entry["calls"] = search.calls.listed(entry["tests"], search.focus())
    entry["lines_total"] = len(search.lines_total)
    entry["lines_covered"] = len(search.covered & search.lines_total)
    entry["calls_tried"] = search.tried
    entry["calls_reused"] = search.memo.reused
    return entry, search.findings


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
            effects = first[2]
            if effects or (second and second[2]):
                effects = effects or second[2]
                if not any(f["function"] == module for f in findings):
                    findings.append({"module": module, "function": module, "kind": "side_effect",
                                     "call": f"python -m {module} {' '.join(argv)}".strip(),
                                     "expected": "no effect outside its tmp_path",
                                     "actual": "; ".join(e["effect"] for e in effects[:3]), "test": None})
                continue
            tests.append(cli_test(module, argv, first, second))
    return tests, findings
