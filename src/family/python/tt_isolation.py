"""The isolation every test team-testing delivers runs under: generated test modules carry this
fixture, the conftest `apply` writes carries it, and the executor's plugin loads it for every test
it runs. Whoever runs a test, from wherever: its current folder, HOME, the XDG folders and TMPDIR
are fresh temporary folders of its own, so a relative path or `~` never reaches the project or the
user's home."""
import tempfile

import pytest


@pytest.fixture(autouse=True)
def _tt_isolated(tmp_path_factory, monkeypatch):
    """team-testing: run in a fresh folder, with HOME, the XDG folders and TMPDIR of its own."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                      ("XDG_CACHE_HOME", ".cache"), ("XDG_STATE_HOME", ".local/state")):
        monkeypatch.setenv(name, str(home / sub))
    tmp = tmp_path_factory.mktemp("tmp")
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
