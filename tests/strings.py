"""Reading the text out of plain data, for the tests that ask what a report or a result carries."""


def strings(value):
    """Every string in ``value`` (plain data, dataclasses and messages included), keys too."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            yield from strings(getattr(value, name))
