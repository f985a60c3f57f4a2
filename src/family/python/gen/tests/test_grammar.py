"""Parser modules get documents in their own grammar (tt_grammar.py, issue 32's docstring_parser).

Plain unittest, run by every interpreter found (see test_guards.py).
"""
import os
import random
import re
import sys
import tempfile
import textwrap
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
# The audit and isolation modules the helper imports ship with the Python runner.
_FAMILY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, _FAMILY)
sys.path.insert(0, HERE)

import tt_analysis  # noqa: E402
from test_guards import run_helper  # noqa: E402

PARSER = textwrap.dedent('''
    """Sectioned notes."""
    import re

    SECTIONS = {"Needs", "Gives"}
    FIELD_KEYS = ("since", "author")
    HEADER = re.compile(r"^(\\w+):\\s*$")
    FIELD = re.compile(r"^@(?P<key>\\w+)\\s+(?P<name>\\w+):\\s*(?P<text>.*)$")
    ENTRY = re.compile(r"\\s+(?P<name>[a-z_]+)\\s*\\((?P<kind>\\w+)\\):")


    def parse(text: str):
        lines = text.splitlines()
        sections, fields, current = {}, [], None
        for line in lines[1:]:
            header = HEADER.match(line)
            if header and header.group(1) in SECTIONS:
                current = sections.setdefault(header.group(1), [])
            elif FIELD.match(line):
                fields.append(line)
            elif current is not None and ENTRY.match(line):
                current.append(line)
                if len(current) > 1:
                    return "a section of two entries"
        return sections, fields
''')


def grammar_of(source, name="notes_mod"):
    module = types.ModuleType(name)
    exec(compile(source, name, "exec"), vars(module))
    return tt_analysis.parser_grammar(source, module)


class Grammar(unittest.TestCase):
    def test_a_parser_module_has_a_grammar_read_from_its_own_source(self):
        grammar = grammar_of(PARSER)
        self.assertIsNotNone(grammar)
        self.assertEqual(grammar.markers, ["@"])
        self.assertTrue({"Needs", "Gives"} <= set(grammar.titles), grammar.titles)
        self.assertTrue({"since", "author"} <= set(grammar.keywords), grammar.keywords)

    def test_a_module_that_does_not_parse_has_none(self):
        self.assertIsNone(grammar_of("def add(a, b):\n    return a + b\n"))

    def test_documents_span_lines_use_the_grammar_and_follow_the_seed(self):
        grammar = grammar_of(PARSER)
        self.assertEqual(grammar.document(random.Random(5)), grammar.document(random.Random(5)))
        rng = random.Random(1)
        documents = [grammar.document(rng) for _ in range(60)]
        self.assertTrue(all(len(d) <= 600 for d in documents))
        self.assertTrue(sum("\n" in d for d in documents) > 50)
        lines = [line for d in documents for line in d.splitlines()]
        self.assertTrue(any(line in ("Needs:", "Gives:") for line in lines))
        self.assertTrue(any(line.startswith("@") for line in lines))
        self.assertTrue(any(re.match(r"\s+[a-z_]+\s*\(\w+\):", line) for line in lines))

    def test_no_code_of_the_module_runs_while_its_grammar_is_read(self):
        source = PARSER + textwrap.dedent('''
            class Loud:
                def __repr__(self):
                    raise RuntimeError("repr ran")

                def __lt__(self, other):
                    raise RuntimeError("a comparison ran")

                def __iter__(self):
                    raise RuntimeError("iteration ran")

            HELD = {Loud(), Loud()}
            LISTED = [Loud()]
        ''')
        self.assertIsNotNone(grammar_of(source))


class TheHelper(unittest.TestCase):
    def test_a_parser_is_reached_through_documents_it_accepts(self):
        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, "notes_mod.py"), "w") as f:
                f.write(PARSER)
            result = run_helper(root, ["notes_mod"], budget=10)
        source = result["modules"][0]["source"]
        # No single string reaches it: a line, a header of the module's own, two entries under it.
        self.assertIn("== 'a section of two entries'", source)


if __name__ == "__main__":
    unittest.main()
