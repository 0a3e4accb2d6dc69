"""The kit passes ``mypy`` (with the exceptions pyproject.toml lists): the third step of ``scripts/lint``, here rather
than beside the other two in ``tests/unit/test_lint.py`` because a cold type check of the whole kit takes most of a
minute, which the inner loop's tier cannot spend."""

from tests.unit.test_lint import check_step


def test_types():
    check_step("mypy")
