"""Formatting helpers with two known bugs: the Python twin of tests/fixtures/js-esm/src/buggy.js."""


def format_price(cents: int) -> str:
    """Formats a price given in cents as dollars.

    >>> format_price(1999)
    '$19.99'
    """
    return "$%.2f" % (cents / 10)


def initials(name: str) -> str:
    """The initials of a full name.

    >>> initials('Ada Lovelace')
    'AL'
    """
    return "".join(word[0].upper() for word in name.strip().split(" "))
