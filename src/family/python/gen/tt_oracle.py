"""Oracles beyond "what it returns today", for team-testing's Python generator (3.8+).

`well_typed` says whether a call's arguments are what the function states it takes: its
annotations, and a range its docstring gives a parameter. An exception on such input is the
code's fault (a code_defect); on input outside them it is the input's (the call is still a test,
written with pytest.raises, but no finding).

`suspicious` says whether an observed result looks like a bug rather than behaviour worth
pinning down: a negative price or count, a result longer than the limit it was given, a result that
breaks its docstring's own sentence ("non-negative", "lower case", ...), an input returned
unchanged where the name promises a change. Such a value is flagged for review with its evidence
instead of being asserted.
"""
import inspect
import re
import typing

try:  # 3.10+: `int | None`
    from types import UnionType as _UnionType
except ImportError:  # pragma: no cover (3.8, 3.9)
    _UnionType = None

_NUMBER_WORDS = re.compile(r"price|cost|total|amount|count|quantity|qty|size|length|len|balance|sum")
_LIMIT_PARAMS = ("limit", "max_len", "max_length", "maxlen", "width", "length", "size", "n", "max_chars")
_RANGE = r"(?:between|from|in)?\s*\(?\s*(-?\d+(?:\.\d+)?)\s*(?:to|and|-|\.\.)\s*(-?\d+(?:\.\d+)?)"


def _hints(func):
    try:
        return typing.get_type_hints(func)
    except Exception:  # unresolvable forward references, odd objects: no hints
        return getattr(func, "__annotations__", {}) or {}


def _matches(value, hint):
    """Whether value is of the hinted type; True when the hint is one we cannot judge."""
    if hint is typing.Any or hint is inspect.Parameter.empty:
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = getattr(hint, "__origin__", None)
    if origin is typing.Union or (_UnionType is not None and isinstance(hint, _UnionType)):
        return any(_matches(value, h) for h in hint.__args__)
    if origin is not None:
        if origin in (list, tuple, set, frozenset, dict):
            return isinstance(value, origin)
        try:
            import collections.abc as abc
            if origin is abc.Callable:
                return callable(value)
            if isinstance(origin, type):
                return isinstance(value, origin)
        except TypeError:
            return True
        return True
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is complex:
        return isinstance(value, (int, float, complex)) and not isinstance(value, bool)
    if isinstance(hint, type):
        try:
            return isinstance(value, hint)
        except TypeError:  # a Protocol that is not runtime_checkable, a TypedDict
            return True
    return True


def documented_ranges(func):
    """Parameter -> (low, high) where the docstring gives one: "`percent` (0 to 100)",
    "percent must be between 0 and 100", "n: a count from 1 to 10"."""
    doc = inspect.getdoc(func) or ""
    ranges = {}
    try:
        params = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return ranges
    for name in params:
        for sentence in re.split(r"(?<=[.;\n])", doc):
            if not re.search(r"\b%s\b" % re.escape(name), sentence):
                continue
            m = re.search(r"\b%s\b[^.;\n]*?%s" % (re.escape(name), _RANGE), sentence)
            if m:
                low, high = float(m.group(1)), float(m.group(2))
                if low <= high:
                    ranges[name] = (low, high)
    return ranges


def well_typed(func, args=(), kwargs=None):
    """(True, "") when the call's arguments fit the function's annotations and documented ranges;
    else (False, why)."""
    kwargs = kwargs or {}
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return False, "the arguments do not fit the signature"
    hints = _hints(func)
    ranges = documented_ranges(func)
    for name, value in bound.arguments.items():
        hint = hints.get(name, inspect.Parameter.empty)
        kind = inspect.signature(func).parameters[name].kind
        values = value if kind == inspect.Parameter.VAR_POSITIONAL else (value,)
        if kind == inspect.Parameter.VAR_KEYWORD:
            values = tuple(value.values())
        for v in values:
            if not _matches(v, hint):
                return False, "%s=%r is not %s" % (name, v, getattr(hint, "__name__", hint))
            if name in ranges and isinstance(v, (int, float)) and not isinstance(v, bool):
                low, high = ranges[name]
                if not low <= v <= high:
                    return False, "%s=%r is outside the documented %g to %g" % (name, v, low, high)
    return True, ""


def suspicious(func, args, kwargs, result):
    """Why `result` looks like a bug for this call, or None."""
    kwargs = kwargs or {}
    name = getattr(func, "__name__", "")
    doc = (inspect.getdoc(func) or "").lower()
    number = isinstance(result, (int, float)) and not isinstance(result, bool)
    if number and result < 0 and _NUMBER_WORDS.search(name.lower()):
        return "%s returned %r: a negative %s" % (name, result, _NUMBER_WORDS.search(name.lower()).group(0))
    if number and result < 0 and re.search(r"non-negative|nonnegative|positive|at least 0|>= ?0", doc):
        return "%s returned %r, but its docstring says the result is not negative" % (name, result)
    try:
        bound = inspect.signature(func).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        bound = {}
    if isinstance(result, (str, list, tuple)) and re.search(r"trunc|shorten|limit|clip|abbrev", name.lower() + " " + doc):
        for p in _LIMIT_PARAMS:
            limit = bound.get(p)
            if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0 and len(result) > limit:
                return "%s returned %d items/characters, more than %s=%d" % (name, len(result), p, limit)
    if isinstance(result, str):
        lowered = name.lower()
        checks = (
            (("lower", "lowercase"), result != result.lower(), "lower case"),
            (("upper", "uppercase"), result != result.upper(), "upper case"),
            (("strip", "trim"), result != result.strip(), "without surrounding whitespace"),
            (("slug",), bool(re.search(r"[A-Z\s]", result)), "a slug (no spaces, no capitals)"),
        )
        for words, broken, what in checks:
            if any(w in lowered for w in words) and broken:
                return "%s returned %r, which is not %s" % (name, result, what)
        strings = [v for v in bound.values() if isinstance(v, str)]
        promises = re.search(r"normali[sz]e|escape|convert|transform|capitali[sz]e|slug|lower|upper|strip|trim", lowered)
        if promises and result in strings and len(strings) == 1:
            changed = {
                "lower": result.lower(), "upper": result.upper(), "strip": result.strip(),
                "trim": result.strip(), "capitaliz": result[:1].upper() + result[1:],
                "capitalis": result[:1].upper() + result[1:],
            }
            for key, expected in changed.items():
                if key in lowered and expected != result:
                    return "%s returned its input %r unchanged, though its name promises a change" % (name, result)
    return None
