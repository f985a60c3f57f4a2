"""The generator's oracles beyond the observed value (tt_oracle.py): which input is well typed
(annotations and ranges a docstring states) and which result looks like a bug. Plain unittest,
run by every interpreter found, like the guard tests."""
import os
import sys
import typing
import unittest
from typing import Callable, Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The audit and isolation modules the helper imports ship with the Python runner.
_FAMILY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, _FAMILY)

from tt_oracle import suspicious, well_typed  # noqa: E402


def neg(x: int) -> int:
    return -x


def discounted(total: float, percent: int) -> float:
    """The total after a discount of `percent` (0 to 100)."""
    return total


def greet(name: Optional[str] = None) -> str:
    return "hi"


def apply(fn: Callable[[int], int], x: int) -> int:
    return fn(x)


def anything(x: typing.Any, *rest: int):
    return x


def total_price(quantity: int, price: float) -> float:
    return quantity * price


def truncate(text: str, limit: int) -> str:
    """Shorten text to at most limit characters."""
    return text


def to_lower(text: str) -> str:
    return text


def slugify(text: str) -> str:
    return text


class WellTyped(unittest.TestCase):
    def test_annotations_decide(self):
        self.assertTrue(well_typed(neg, (3,))[0])
        ok, why = well_typed(neg, (1.5,))
        self.assertFalse(ok)
        self.assertIn("x=1.5", why)
        self.assertFalse(well_typed(neg, (None,))[0])
        self.assertFalse(well_typed(neg, (True,))[0])
        self.assertTrue(well_typed(discounted, (10, 3))[0])  # an int is a fine float
        self.assertTrue(well_typed(greet, (None,))[0])
        self.assertFalse(well_typed(greet, (3,))[0])
        self.assertTrue(well_typed(apply, (lambda v: v, 2))[0])
        self.assertFalse(well_typed(apply, (3, 2))[0])
        self.assertTrue(well_typed(anything, (object(), 1, 2))[0])
        self.assertFalse(well_typed(anything, (object(), 1, "x"))[0])
        self.assertFalse(well_typed(neg, (1, 2))[0])

    def test_a_documented_range_decides_too(self):
        self.assertTrue(well_typed(discounted, (10.0, 100))[0])
        ok, why = well_typed(discounted, (10.0, 150))
        self.assertFalse(ok)
        self.assertIn("outside the documented 0 to 100", why)


class Suspicious(unittest.TestCase):
    def test_results_that_look_like_bugs_are_flagged(self):
        self.assertIn("negative", suspicious(total_price, (-1, 2.0), {}, -2.0))
        self.assertIsNone(suspicious(total_price, (1, 2.0), {}, 2.0))
        self.assertIn("more than limit=5", suspicious(truncate, ("abcdefgh", 5), {}, "abcdefgh"))
        self.assertIsNone(suspicious(truncate, ("ab", 5), {}, "ab"))
        self.assertIn("lower case", suspicious(to_lower, ("ABC",), {}, "ABC"))
        self.assertIsNone(suspicious(to_lower, ("abc",), {}, "abc"))
        self.assertIn("slug", suspicious(slugify, ("Hello World",), {}, "Hello World"))
        self.assertIsNone(suspicious(neg, (2,), {}, -2))


if __name__ == "__main__":
    unittest.main()
