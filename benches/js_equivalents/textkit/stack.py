"""A bounded stack: the Python twin of tests/fixtures/js-esm/src/stack.js."""


class Stack:
    def __init__(self, capacity: int = 3):
        self.capacity = capacity
        self.items = []

    def push(self, item: int) -> int:
        if len(self.items) >= self.capacity:
            raise OverflowError("stack is full")
        self.items.append(item)
        return len(self.items)

    def pop(self) -> int:
        if not self.items:
            raise IndexError("stack is empty")
        return self.items.pop()

    @property
    def size(self) -> int:
        return len(self.items)

    @property
    def is_empty(self) -> bool:
        return len(self.items) == 0

    @staticmethod
    def of(items: list) -> "Stack":
        s = Stack(len(items))
        for item in items:
            s.push(item)
        return s


def sum_values(values: list) -> int:
    """Sums numbers."""
    if not isinstance(values, list):
        raise TypeError("values must be a list")
    return sum(values)


def sorted_by(items: list, key) -> list:
    """Sorts a copy of the list by the key function."""
    return sorted(items, key=key)
