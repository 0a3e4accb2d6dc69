"""``Fail``: how a check says the submission is wrong (a leaf module: ``compare`` and the checks both raise it)."""


class Fail(Exception):
    """The submission is wrong: ``key`` names the sentence, ``params`` fill it in.

    ``example`` holds the minimal failing example for the report (config,
    shapes, first differing position, error figures), ``artifacts`` plain data
    for pictures.
    """

    def __init__(self, key, *, example=None, artifacts=None, **params):
        super().__init__(key)
        self.key = key
        self.params = params
        self.example = dict(example or {})
        self.artifacts = dict(artifacts or {})
