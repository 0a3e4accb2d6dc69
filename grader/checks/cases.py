"""An assignment's example cases and the example a report shows.

A check's strategy draws a typed case: a frozen dataclass deriving from ``Case``, one per kind of case, its fields
the sizes and options one example is made of. ``shown_example`` turns what a check graded into the example its
report shows (``{"config": ..., "shapes": ...}``)."""

import dataclasses
from collections.abc import Mapping


@dataclasses.dataclass(frozen=True)
class Case:
    """Base of an assignment's example cases: subclass it with ``@dataclass(frozen=True)`` and read the fields as
    attributes (``c.B``)."""

    def replace(self, **changes):
        """This case with ``changes`` to some fields."""
        return dataclasses.replace(self, **changes)


def _shape(value):
    if value is None:
        return None
    shape = getattr(value, "shape", value)  # a tensor, or a shape already (a list, a tuple, a torch.Size)
    return list(shape)


def shown_example(config: Mapping, /, **shapes) -> dict:
    """The example a report shows: ``{"config": config, "shapes": {name: shape}}``.

    ``config`` is what the example was built with (constructor arguments, options), in the order given; each
    keyword of ``shapes`` names an input, given as a tensor, as its shape (a list or tuple), or as ``None`` (an
    input left out, e.g. no mask), shown in the order given. Without ``shapes`` the example is the config alone."""
    example: dict = {"config": dict(config)}
    if shapes:
        example["shapes"] = {name: _shape(value) for name, value in shapes.items()}
    return example
