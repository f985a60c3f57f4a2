"""The generator's minimization stage: the shortest call that still shows what a call showed.

A contract finding (a builtin exception escaping on well-typed input) is reported with its
call shortened: each literal argument tried as its type's smallest value, kept when the call
still raises the same exception on the same line. Imports only the execution stage.
"""

from tt_execution import Execution


class Shortening(Execution):
    """Shortening a module search's calls (a part of tt_search.ModuleSearch)."""

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
