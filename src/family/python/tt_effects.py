"""team-testing's pytest plugin (`-p tt_effects`): runs every test isolated and records what it
changes outside its own temporary folders.

Isolated: the autouse fixture of tt_isolation.py gives each test a fresh current folder, HOME, XDG
folders and TMPDIR under pytest's basetemp, the same fixture every generated test module carries. Recorded: the
effect audit (ttaudit.py) watches collection and each test's setup, call and teardown; an effect
outside the allowed folders (pytest's basetemp and TT_EFFECTS_ALLOWED) becomes one JSON line in
TT_EFFECTS_FILE, naming the test (or the file whose import did it). team-testing quarantines
such tests as unsafe, and `apply` refuses them.
"""

import json
import os
import tempfile

import pytest

import tt_isolation
import ttaudit

# The autouse fixture, for every test this plugin runs.
_tt_isolated = tt_isolation._tt_isolated

_STATE = {"audit": None, "out": None, "current": None, "seen": set()}


def pytest_configure(config):
    path = os.environ.get("TT_EFFECTS_FILE")
    if not path or _STATE["audit"] is not None:
        return
    allowed = [p for p in os.environ.get("TT_EFFECTS_ALLOWED", "").split(os.pathsep) if p]
    basetemp = config.getoption("basetemp", None)
    if basetemp:
        allowed.append(os.path.abspath(basetemp))
    else:  # pytest's default place for tmp_path
        try:
            import getpass
            user = getpass.getuser()
        except Exception:  # noqa: BLE001
            user = "unknown"
        allowed.append(os.path.join(tempfile.gettempdir(), f"pytest-of-{user}"))
    network_on = os.environ.get("TT_SANDBOX_NETWORK") == "on"
    _STATE["out"] = open(path, "a", encoding="utf-8")  # before the audit: our own file
    _STATE["audit"] = ttaudit.Audit(allowed, network_on=network_on).install()


def _flush():
    audit = _STATE["audit"]
    if audit is None or not audit.effects:
        return
    audit.on = False
    who = _STATE["current"] or "<session>"
    for effect in audit.effects:
        if (who, effect["effect"]) in _STATE["seen"]:
            continue
        _STATE["seen"].add((who, effect["effect"]))
        _STATE["out"].write(json.dumps(dict(effect, test=who)) + "\n")
    _STATE["out"].flush()
    audit.effects.clear()


def _watch(who):
    audit = _STATE["audit"]
    if audit is not None:
        _STATE["current"] = who
        audit.on = True


def _unwatch():
    _flush()
    _STATE["current"] = None
    if _STATE["audit"] is not None:
        _STATE["audit"].on = False


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # Importing a test module runs its top level: that is the file's doing.
    _watch(getattr(collector, "nodeid", "") or "<collect>")
    try:
        yield
    finally:
        _unwatch()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _watch(item.nodeid)
    try:
        yield
    finally:
        _unwatch()


def pytest_unconfigure(config):
    _unwatch()
    if _STATE["out"] is not None:
        _STATE["out"].close()
        _STATE["out"] = None
