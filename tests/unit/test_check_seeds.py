"""A property's examples come from the check's id and the property's name, not from its source text: reformatting
or rewording a check leaves what every submission is graded on as it was, and two checks never share their draws
by accident."""

from hypothesis import strategies as st

from grader.checks.base import CheckContext, CheckSpec, check


def _spec(check_id, examples):
    return CheckSpec(check_id, check_id.split(".")[0], None, 1, examples=(examples, examples))


def _drawn(check_id, prop_factory, *, seed=None, examples=12):
    ctx = CheckContext(_spec(check_id, examples), sub=None, ref=None, profile="full", seed=seed)
    seen = []
    prop_factory(ctx, seen)()
    return seen


def _plain(ctx, seen):
    @ctx.given(st.integers(0, 10**9))
    def prop(n):
        seen.append(n)

    return prop


def _reworded(ctx, seen):
    @ctx.given(st.integers(0, 10**9))
    def prop(n):  # the same property, written otherwise
        value = n
        seen.append(value)

    return prop


def test_same_id_same_examples_whatever_the_text():
    first = _drawn("task.one", _plain)
    assert len(first) >= 5
    assert _drawn("task.one", _reworded) == first
    assert _drawn("task.one", _plain) == first  # and on every run


def test_another_check_draws_other_examples():
    assert _drawn("task.one", _plain) != _drawn("task.two", _plain)


def test_two_properties_of_one_check_draw_apart():
    ctx = CheckContext(_spec("task.one", 12), sub=None, ref=None)
    a, b = [], []
    _plain(ctx, a)()
    _plain(ctx, b)()
    assert a and b and a != b


def test_a_given_seed_is_used_as_given():
    assert _drawn("task.one", _plain, seed=7) == _drawn("task.two", _plain, seed=7)
    assert _drawn("task.one", _plain, seed=7) != _drawn("task.one", _plain, seed=8)


def test_registered_property_checks_draw_apart():
    """``@check(given=...)`` properties are wrapped alike; each still draws from its own id."""

    def make(name):
        @check("seedtask", name, points=1, examples=(6, 6), given=st.integers(0, 10**9))
        def prop(ctx, n):
            seen.append(n)

        return prop

    from grader.checks import base

    before = len(base.REGISTRY)
    try:
        results = {}
        for name in ("alpha", "beta"):
            seen = []
            make(name)
            spec = base.REGISTRY[-1]
            spec.fn(CheckContext(spec, sub=None, ref=None, profile="full"))
            results[name] = list(seen)
        assert results["alpha"] and results["beta"] and results["alpha"] != results["beta"]
    finally:
        del base.REGISTRY[before:]
