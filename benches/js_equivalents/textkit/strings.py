"""Text helpers: the Python twin of tests/fixtures/js-esm/src/strings.js."""
import re


def capitalize(s: str) -> str:
    """Capitalizes the first letter."""
    if len(s) == 0:
        return s
    return s[0].upper() + s[1:]


def slugify(text: str) -> str:
    """A URL slug: lower case words joined by dashes."""
    return re.sub(r"^-+|-+$", "", re.sub(r"[^a-z0-9]+", "-", text.lower()))


def truncate(text: str, max: int = 10) -> str:
    """Cuts a string to at most `max` characters, ending with an ellipsis when cut."""
    if max < 1:
        raise ValueError("max must be at least 1")
    if len(text) <= max:
        return text
    return text[: max - 1] + "…"


def word_count(text: str) -> int:
    """Counts the words of a text."""
    return len([w for w in text.split() if w])
