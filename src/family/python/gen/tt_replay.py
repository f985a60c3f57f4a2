"""The generator's replay stage: the calls a search ran on one version of the code, run on this one.

"What did my change alter?": the search lists the calls it ran on HEAD (tt_search.CallList);
the same list is replayed on a mirror of the base commit and on one of HEAD, and a call whose
result or raised exception differs between the two is a behaviour change. Each call runs twice,
as a search's does (tt_execution.run_call, in the namespace a search builds), and what it did
becomes the body of a test written exactly as the search writes one (tt_assertions), so two
versions' bodies compare as text; the bodies become one test file per module (tt_render). Every
call gets an answer, in the order given (the two versions' answers are paired by position): a
call that cannot be asserted, or whose two runs disagree, gets no body. At the top with
tt_search, whose namespace it shares; only the entry point (ttgen.py) imports it.
"""

import ast
import importlib
import inspect
import os
import traceback

from tt_analysis import discover
from tt_assertions import NOT_KEPT, Oracle
from tt_execution import log, sandbox_block
from tt_memo import CallMemo
from tt_render import Rendering, test_file_name
from tt_search import module_namespace

SHOWN_MAX = 200      # "returns ..." / "raises ...": a line of a report
HELPER_OUTCOMES = ("InternalError", "Undescribable", "ChildCrashed", "Unpicklable", "ForkFailed")  # not the code's


def replay(body):
    """The answer to a replay request: {"modules": [...]}, one entry per module asked for; a
    module that fails to import, or a replay that fails, never loses the others."""
    modules = []
    for spec in body.get("modules", []):
        try:
            modules.append(replay_module(spec, body))
        except BaseException as exc:  # noqa: BLE001 - the module's own code can raise anything
            if isinstance(exc, KeyboardInterrupt):
                raise
            log(f"replay of {spec.get('module')} failed:\n{traceback.format_exc()}")
            modules.append(module_entry(spec, [unanswered(spec, c, f"the replay failed: {exc!r}")
                                               for c in spec.get("calls", [])]))
    return {"modules": modules}


def module_entry(spec, replayed, source="", import_error=None):
    return {"module": spec.get("module", ""), "test_file": test_file_name(spec.get("module", "m")),
            "source": source, "replayed": replayed, "import_error": import_error}


def replay_module(spec, body):
    try:
        module = importlib.import_module(spec["module"])
    except BaseException as exc:  # noqa: BLE001 - the module's own import can raise anything
        if isinstance(exc, KeyboardInterrupt):
            raise
        return module_entry(spec, [], import_error=f"{type(exc).__name__}: {exc}")
    run = Replay(spec, module, body)
    replayed = [run.answer(call) for call in spec.get("calls", [])]
    source, names = run.render(body.get("layer", "replay"), body.get("seed"))
    written = set(names)
    for item in replayed:
        if item["name"] not in written:
            item["body"] = None  # a test pytest would not load: nothing to compare either
    return module_entry(spec, replayed, source if names else "")


def unanswered(spec, call, shown):
    """The answer of a call the replay could not run."""
    return {"function": call.get("function", ""), "expr": call.get("expr", ""), "test": call.get("test"),
            "name": call.get("test") or "", "body": None, "shown": shown[:SHOWN_MAX], "raised": False,
            "stable": False, "missing": False, "doc": None}


class Replay(Oracle, Rendering):
    """One module's replay: the parts of a module search (tt_search.ModuleSearch) that run a call,
    write the test of what it did and write the file, over this version of the module."""

    def __init__(self, spec, module, req):
        self.spec, self.module = spec, module
        self.req = dict(req, call_timeout_s=float(req.get("call_timeout_s") or 2.0))
        self.target = os.path.abspath(module.__file__)
        self.namespace = module_namespace(module)
        self.items = discover(module)
        self.classes = {}
        self.tests, self.findings = [], []
        self.names = set()
        self.memo = CallMemo(None)  # each version's calls run for real: that is the comparison

    def answer(self, call):
        """What one call did here: {function, expr, test, name, body, shown, raised, stable,
        missing, doc}."""
        item = self.item_name(call)
        found = self.resolve(item)
        out = {"function": call.get("function", ""), "expr": call.get("expr", ""), "test": call.get("test"),
               "name": self.name(call, item), "body": None, "shown": "", "raised": False, "stable": True,
               "missing": found is None, "doc": None}
        if found is None:
            out["shown"] = f"{item} does not exist in this version"[:SHOWN_MAX]
            return out
        out["doc"] = self.doc_of(found[0])
        out["lines"] = self.lines_of(found[0])
        try:
            body, shown, raised, stable, uses, imports = self.outcome(call.get("statements", []), out["expr"])
        except Exception as exc:  # noqa: BLE001 - one call never loses the others
            log(f"replay of {out['expr']} failed:\n{traceback.format_exc()}")
            body, shown, raised, stable, uses, imports = None, f"the replay failed: {exc!r}", False, False, False, set()
        out.update(body=body if stable else None, shown=shown[:SHOWN_MAX], raised=raised, stable=stable)
        if out["body"] is not None:
            self.add_test(out["name"], out["body"], uses, imports)
        return out

    # -- which item a call calls --

    def item_name(self, call):
        """The item a call calls, as the search named it (`total_price`, `Basket.add`): its
        `function` less the module's name; else the first name its expression calls."""
        prefix = self.spec["module"] + "."
        function = call.get("function", "")
        if function.startswith(prefix):
            return function[len(prefix):]
        try:
            node = next(n for n in ast.walk(ast.parse(call.get("expr", ""), mode="eval")) if isinstance(n, ast.Call))
            func = node.func
            while isinstance(func, (ast.Attribute, ast.Call)):  # Basket(1).add('z'): Basket
                func = func.value if isinstance(func, ast.Attribute) else func.func
            return func.id if isinstance(func, ast.Name) else ""
        except (SyntaxError, ValueError, StopIteration):
            return ""

    def resolve(self, item):
        """(the item's object,) in this version of the module; None when it has no such name.
        Looked up statically: a descriptor or a module's __getattr__ runs no code of its own here."""
        obj = self.module
        for part in item.split(".") if item else [""]:
            try:
                obj = inspect.getattr_static(obj, part)
            except AttributeError:
                return None
        return (obj,)

    def doc_of(self, obj):
        """The called item's docstring here: a changed one says the change was meant."""
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        try:
            return inspect.getdoc(obj)
        except Exception:  # noqa: BLE001
            return None

    def lines_of(self, obj):
        """The first and last line of the called item's source here (the diff's hunks in it are
        what a reviewer reads beside a change); None when it has no source of its own."""
        obj = getattr(obj, "__func__", obj)
        if isinstance(obj, property):
            obj = obj.fget
        try:
            src, start = inspect.getsourcelines(obj)
        except (OSError, TypeError):
            return None
        return [start, start + len(src) - 1]

    def name(self, call, item):
        """The test's name: the search's test when the call became one, else one made from the
        call (not from what it did), so a call has the same name in both versions' files."""
        name = call.get("test")
        if not name or name in self.names:
            made = {"name": item or "call"}
            name = self.name_for(made, list(call.get("statements", [])) + [call.get("expr", "")])
            while name in self.names:
                name += "_"
        self.names.add(name)
        return name

    # -- what a call did --

    def outcome(self, statements, expr):
        """(body, shown, raised, stable, uses pytest, imports) of a call run twice: the body is the
        first run's, as the search writes it, and stable when the second run gives the same."""
        first, second = self.run(statements, expr), self.run_again(statements, expr)
        shown, raised = self.shown(first), self.raised(first)
        body, uses, imports = self.body(statements, expr, first, second)
        again = self.body(statements, expr, second, first)[0]
        stable = body == again if body is not None or again is not None else shown == self.shown(second)
        return body, shown, raised, stable, uses, imports

    def body(self, statements, expr, outcome, other):
        """(body, uses pytest, imports) of the test of one run (`other`, the other run, says which
        parts of a value are stable); body None when nothing of it is the code's to assert: an
        effect, the sandbox, a failed setup, a timeout, an outcome the search never asserts."""
        if outcome.get("effects") or sandbox_block(outcome) or outcome.get("setup_failed") \
                or outcome.get("timeout") or outcome.get("fork_failed"):
            return None, False, set()
        if outcome.get("ok"):
            if not other.get("ok") or other.get("settled") != outcome.get("settled"):
                return None, False, set()
            return self.returned_body(statements, expr, outcome, other)
        if outcome.get("exc") in NOT_KEPT:
            return None, False, set()
        return self.raised_body(statements, expr, outcome)

    def raised(self, outcome):
        return not outcome.get("ok") and not outcome.get("timeout") and not outcome.get("setup_failed") \
            and bool(outcome.get("exc")) and outcome.get("exc") not in HELPER_OUTCOMES

    def shown(self, outcome):
        """What a run did, in words: `returns 3`, `raises IndexError: string index out of range`."""
        if outcome.get("timeout"):
            return "does not finish in time"
        if outcome.get("effects"):
            return "changes something outside its tmp_path: " + "; ".join(e["effect"] for e in outcome["effects"][:2])
        blocked = sandbox_block(outcome)
        if blocked:
            return f"stopped by the sandbox: {blocked}"
        words = f"{outcome.get('exc')}: {outcome.get('msg')}" if outcome.get("msg") else f"{outcome.get('exc')}"
        if outcome.get("setup_failed"):
            return f"its setup raises {words}"
        if outcome.get("ok"):
            return f"returns {outcome.get('repr', '')}"
        if outcome.get("exc") in HELPER_OUTCOMES:
            return f"cannot be observed ({words})"
        return f"raises {words}"
