"""Import smoke test for calc.tokenizer (calc/tokenizer.py), written by team-testing's built-in generator."""
import importlib

MODULE = "calc.tokenizer"
SOURCE = "/calc/tokenizer.py"


def test_calc_tokenizer_imports_from_the_repository():
    module = importlib.import_module(MODULE)
    assert module.__name__ == MODULE
    assert (module.__file__ or "").replace("\\", "/").endswith(SOURCE)


def test_calc_tokenizer_names_in_all_exist():
    module = importlib.import_module(MODULE)
    missing = [name for name in getattr(module, "__all__", ()) if not hasattr(module, name)]
    assert missing == [], f"names in __all__ but not defined: {missing}"
