"""A student kit grades a task over the reference's functions beneath it from their record (``submission.replay``):
a correct composite over a broken part is graded as the full kit grades it, and a call the record does not hold is
never answered."""

import shutil

import pytest
import torch

from grader import api, kit
from grader.assignment import load
from grader.bugs.catalogue import Catalogue
from grader.submission import replay, wire
from grader.submission.bank import Bank, NotInBank
from tests.conftest import ROOT as REPO


def _attend(query, key, value, mask=None, scale=1.0):
    scores = (query @ key.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ value, weights


def _dropped(x, p=0.5):
    return torch.nn.functional.dropout(x, p, training=True)


def _replay_of(log, assignment=None):
    return replay.Replay(assignment, wire.decode(wire.encode(log.to_data())))


def _inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(2, 3, 4, generator=g, dtype=torch.float64) for _ in range(3)]


def test_a_recorded_call_is_answered_however_it_is_passed_and_its_gradient_too():
    log = replay.Log()
    recorded = log.wrap("attend", _attend)
    q, k, v = (t.requires_grad_() for t in _inputs())
    out, weights = recorded(q, k, v, None, 0.5)  # positionally
    (out.sum() + 2 * weights.sum()).backward()
    expected = [t.grad.clone() for t in (q, k, v)]
    assert len(log.calls) == 1 and log.count == 1

    r = _replay_of(log)
    q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
    got, got_weights = r.call("attend", (q2,), {"key": k2, "value": v2, "scale": 0.5})  # by name, default left out
    torch.testing.assert_close(got, out.detach(), rtol=0, atol=0)
    torch.testing.assert_close(got_weights, weights.detach(), rtol=0, atol=0)
    (got.sum() + 2 * got_weights.sum()).backward()
    for t, want in zip((q2, k2, v2), expected):
        torch.testing.assert_close(t.grad, want, rtol=0, atol=0)
    assert (r.answered, r.missed) == (1, 0)


def _scaled(x, m):
    return x * m


def test_a_call_whose_arguments_depend_on_each_other_records_its_own_gradient_not_the_paths_between_them():
    """A part called twice with the same ``m``, its second input computed from ``m`` by the first call (a decoder
    layer's memory and its input from the layer before): each call's recorded product is its own, so the replayed
    composite's gradients are the reference composite's, not ``m``'s path through the first call counted twice."""

    def composite(part, x, m0):
        m = m0 * 1.0  # a tensor with a history, as the memory is
        return part(part(x, m), m).sum()

    log = replay.Log()
    recorded = log.wrap("scaled", _scaled)
    x, m0 = (t.requires_grad_() for t in _inputs(3)[:2])
    composite(recorded, x, m0).backward()
    x_ref, m_ref = (t.detach().clone().requires_grad_() for t in (x, m0))
    composite(_scaled, x_ref, m_ref).backward()  # the part itself, unrecorded
    torch.testing.assert_close(m0.grad, m_ref.grad, rtol=0, atol=0)  # recording changes nothing

    r = _replay_of(log)
    x2, m2 = (t.detach().clone().requires_grad_() for t in (x, m0))
    composite(lambda a, b: r.call("scaled", (a, b), {}), x2, m2).backward()
    assert r.missed == 0
    torch.testing.assert_close(x2.grad, x_ref.grad, rtol=0, atol=1e-12)
    torch.testing.assert_close(m2.grad, m_ref.grad, rtol=0, atol=1e-12)


def test_arguments_off_by_rounding_are_answered_and_others_never():
    log = replay.Log()
    recorded = log.wrap("attend", _attend)
    q, k, v = _inputs()
    recorded(q, k, v)
    r = _replay_of(log)
    scale = float(q.abs().max())
    nudged = q + scale * 1e-14  # another order of the same sums
    torch.testing.assert_close(r.call("attend", (nudged, k, v), {})[0], _attend(q, k, v)[0], rtol=0, atol=0)
    for other in (q + scale * 1e-9, q.float(), q[:, :2], q.flip(0)):
        with pytest.raises(NotInBank):
            r.call("attend", (other, k, v), {})
    with pytest.raises(NotInBank):
        r.call("attend", (q, k, v), {"scale": 2.0})
    with pytest.raises(NotInBank):  # a gradient it was never asked for
        r.call("attend", (q.clone().requires_grad_(), k, v), {})[0].sum().backward()
    assert r.missed == 6


def test_a_mask_of_another_rank_is_answered_only_where_the_reference_answers_it_alike():
    q, k, v = (t.unsqueeze(1).expand(2, 2, 3, 4) for t in _inputs())  # [B, H, L, D]
    mask = torch.tensor([[True, False, True], [True, True, False]])  # [Lq, Lk] broadcast over batch and heads

    def picky(query, key, value, mask=None, scale=1.0):  # reads a rank-4 mask as something else
        if mask is not None and mask.dim() == 4:
            mask = ~mask
        return _attend(query, key, value, mask, scale)

    for fn, answered in ((_attend, True), (picky, False)):
        log = replay.Log()
        recorded = log.wrap("attend", fn)
        q2 = q[:, :, :2]
        want = recorded(q2, k, v, mask)
        r = _replay_of(log)
        for form in (mask[None], mask[None, None]):
            if answered:
                torch.testing.assert_close(r.call("attend", (q2, k, v, form), {})[0], want[0], rtol=0, atol=0)
        if not answered:
            with pytest.raises(NotInBank):
                r.call("attend", (q2, k, v, mask[None, None]), {})
        expanded = r.call("attend", (q2, k, v, mask[None]), {})  # rank 3 reads alike in both
        torch.testing.assert_close(expanded[0], want[0], rtol=0, atol=0)


def test_a_call_that_draws_random_numbers_is_answered_only_from_the_same_generator_state():
    log = replay.Log()
    recorded = log.wrap("dropped", _dropped)
    x = torch.ones(50, dtype=torch.float64)
    torch.manual_seed(3)
    want = recorded(x)
    after = torch.get_rng_state()
    r = _replay_of(log)
    torch.manual_seed(3)
    torch.testing.assert_close(r.call("dropped", (x,), {}), want, rtol=0, atol=0)
    assert torch.equal(torch.get_rng_state(), after)  # the generator goes on as after the reference's call
    torch.manual_seed(4)
    with pytest.raises(NotInBank):
        r.call("dropped", (x,), {})


def test_a_call_with_an_argument_of_no_plain_form_is_computed_but_not_recorded():
    log = replay.Log()
    recorded = log.wrap("attend", lambda q, k, v, mask=None, scale=1.0: _attend(q, k, v, None, scale))
    q, k, v = _inputs()
    recorded(q, k, v, object())
    assert log.count == 0
    with pytest.raises(NotInBank):
        _replay_of(log).call("attend", (q, k, v, object()), {})


# -- the Transformer: MultiHeadAttention over a broken scaled_dot_product_attention ------------------------------
UNSCALED = """

def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):  # no 1/sqrt(d_k)
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = scores.softmax(dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights
"""
TASKS = ("sdpa", "mha")


@pytest.fixture(scope="module")
def bank_file(tmp_path_factory):
    a = load("transformer")
    bank = kit.record(a, [a.reference], profiles=("quick",), tasks=TASKS, diagnoses=False)
    assert replay.TABLE_DIGEST in bank.answers
    return bank.save(tmp_path_factory.mktemp("replay") / "answers.bank")


def _both(folder, bank_file, tasks=TASKS):
    a = load("transformer")
    full = api.check(path=folder, assignment=a, profile="quick", tasks=tasks, diagnose=False)
    kitted = api.check(path=folder, assignment=a, profile="quick", tasks=tasks, diagnose=False, bank=str(bank_file))
    statuses = [{c.id: c for t in r.tasks for c in t.checks} for r in (full, kitted)]
    return statuses


def _with_broken_sdpa(src, dest):
    shutil.copytree(src, dest)
    (dest / "attention.py").write_text((dest / "attention.py").read_text() + UNSCALED)
    return dest


@pytest.mark.parametrize("style", ["reference", "fused_qkv", "einsum", "functional", "custom_init"])
def test_a_correct_attention_over_a_broken_function_is_graded_as_the_full_kit_grades_it(style, bank_file, tmp_path):
    src = load("transformer").reference if style == "reference" else REPO / "tests/blind/correct" / style
    full, kitted = _both(_with_broken_sdpa(src, tmp_path / style), bank_file)
    assert full["sdpa.equivalence"].status == kitted["sdpa.equivalence"].status == "failed"
    for cid, c in full.items():
        if cid.startswith("mha."):
            assert c.status == "passed", cid
            assert kitted[cid].status == "passed", (cid, kitted[cid].notes)
            assert kitted[cid].score == c.score


@pytest.mark.parametrize("bug", ["mha.no_output_projection", "mha.key_uses_query_projection", "mha.scale_d_model"])
def test_a_broken_attention_over_a_broken_function_never_passes_what_the_full_kit_fails(bug, bank_file, tmp_path):
    a = load("transformer")
    catalogue = Catalogue(a)
    mutant = catalogue.write_mutant(catalogue.by_id[bug], tmp_path / "mutant")
    folder = _with_broken_sdpa(mutant, tmp_path / "both")
    full, kitted = _both(folder, bank_file)
    for cid, c in full.items():
        if c.status != "passed":
            assert kitted[cid].status != "passed", cid
        if kitted[cid].status == "failed":  # judged over the record: the full kit fails it too
            assert c.status == "failed", cid
    if bug == "mha.no_output_projection":  # its calls are the reference's: judged, and charged where it is
        assert kitted["mha.equivalence"].status == "failed"


def test_calls_the_record_does_not_hold_leave_the_check_blocked_not_failed(bank_file, tmp_path):
    """One call per head: every call has other shapes than the reference's, so the record answers none."""
    folder = _with_broken_sdpa(REPO / "tests/blind/correct/per_head_loops", tmp_path / "loops")
    full, kitted = _both(folder, bank_file)
    assert full["mha.equivalence"].status == "passed"
    blocked = kitted["mha.equivalence"]
    assert blocked.status == "skipped" and blocked.score == 0
    assert any(n.key == "note.blocked_by" for n in blocked.notes)


@pytest.mark.parametrize(
    "case", ["reference", "fused_qkv", "per_head_loops", "mha.no_output_projection", "mha.key_uses_query_projection"]
)
def test_a_task_checked_without_the_one_beneath_it_loses_no_point_the_full_kit_keeps(case, bank_file, tmp_path):
    """``--tasks mha`` over a broken sdpa: the full kit grades mha's isolated checks over the reference's sdpa, so
    the kit judges them over the record, never charging a check the full kit passes nor passing one it fails; a
    check the record cannot judge is blocked by sdpa, which the kit then grades (unreported) to tell."""
    if case.startswith("mha."):
        catalogue = Catalogue(load("transformer"))
        src = catalogue.write_mutant(catalogue.by_id[case], tmp_path / "mutant")
    else:
        src = load("transformer").reference if case == "reference" else REPO / "tests/blind/correct" / case
    full, kitted = _both(_with_broken_sdpa(src, tmp_path / "sub"), bank_file, tasks=("mha",))
    assert set(full) == set(kitted) and all(cid.startswith("mha.") for cid in full)
    for cid, c in full.items():
        got = kitted[cid]
        if got.status == "skipped" and c.status != "skipped":
            said = [n for n in got.notes if n.key == "note.blocked_by"]
            assert said and said[0].params["tasks"] == "sdpa" and got.score == 0, (cid, got.notes)
        else:
            assert (got.status, got.score) == (c.status, c.score), (cid, c.status, got.status, got.notes)
    if case in ("reference", "fused_qkv", "mha.no_output_projection"):  # calls the record holds: judged
        assert kitted["mha.equivalence"].status != "skipped"
    if case == "mha.no_output_projection":
        assert kitted["mha.equivalence"].status == "failed"


@pytest.mark.parametrize("bug", ["mha.key_uses_query_projection", "mha.scale_d_model"])
def test_a_mistake_of_a_task_checked_alone_is_charged_there_as_in_the_full_kit(bug, bank_file, tmp_path):
    """``--tasks mha`` over a correct sdpa: calls the record cannot answer, and nothing beneath fails: charged."""
    catalogue = Catalogue(load("transformer"))
    mutant = catalogue.write_mutant(catalogue.by_id[bug], tmp_path / "mutant")
    full, kitted = _both(mutant, bank_file, tasks=("mha",))
    assert full["mha.equivalence"].status == "failed"
    for cid, c in full.items():
        assert (kitted[cid].status, kitted[cid].score) == (c.status, c.score), (cid, kitted[cid].notes)


def test_a_bank_keeps_the_record_as_plain_data(bank_file):
    bank = Bank.load(bank_file)
    data = wire.decode(bank.answers[replay.TABLE_DIGEST][0])
    assert data["functions"] == ["scaled_dot_product_attention"]
    r = replay.Replay.of_bank(bank, load("transformer"))
    assert r.covers("mha") and not r.covers("encoder_layer") and not r.covers("sdpa")


# -- classes: a part with state, built and called by the composite ------------------------------------------------
class _Scale(torch.nn.Module):
    def __init__(self, d, p=0.0):
        super().__init__()
        self.proj = torch.nn.Linear(d, d)
        self.drop = torch.nn.Dropout(p)
        self.d = d

    def forward(self, x):
        return self.drop(self.proj(x)).tanh()

    @property
    def width(self):
        return 2 * self.d


class _Store:
    def __init__(self):
        self.kept = None

    def add(self, x):
        self.kept = x if self.kept is None else torch.cat([self.kept, x])
        return self.kept


class _Bump(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        self.count += 1  # its state, changed in place
        return x * 2


CLASSES = {"_Scale": _Scale, "_Store": _Store, "_Bump": _Bump}


def _recorded_classes():
    log = replay.Log()
    return log, {name: log.wrap_class(name, cls, CLASSES) for name, cls in CLASSES.items()}


def test_a_recorded_class_is_built_called_and_differentiated_from_the_record_alone():
    log, rec = _recorded_classes()
    torch.manual_seed(0)
    m = rec["_Scale"](4)
    x = torch.randn(3, 4, dtype=torch.float32, requires_grad=True)
    y = m(x)
    (y**2).sum().backward()
    store = rec["_Store"]()
    store.add(torch.ones(1, 2))
    both = store.add(torch.zeros(2, 2))
    assert m.width == 8

    r = _replay_of(log)
    shell = r.shells["_Scale"]
    assert shell.__name__ == "_Scale" and issubclass(shell, torch.nn.Module)
    torch.manual_seed(0)
    m2 = shell(4)
    assert [n for n, _ in m2.named_parameters()] == ["proj.weight", "proj.bias"]
    assert torch.equal(m2.proj.weight, m.proj.weight) and isinstance(m2.proj, torch.nn.Linear)
    x2 = x.detach().clone().requires_grad_()
    y2 = m2(x2)
    assert torch.equal(y2, y.detach())
    (y2**2).sum().backward()
    assert torch.equal(x2.grad, x.grad) and torch.equal(m2.proj.weight.grad, m.proj.weight.grad)
    assert m2.width == 8
    store2 = r.shells["_Store"]()
    store2.add(torch.ones(1, 2))
    assert torch.equal(store2.add(torch.zeros(2, 2)), both) and store2.kept.shape == (3, 2)
    assert r.missed == 0


def test_a_class_call_the_record_does_not_hold_is_never_answered():
    log, rec = _recorded_classes()
    torch.manual_seed(0)
    m = rec["_Scale"](4)
    x = torch.randn(3, 4)
    m(x)
    r = _replay_of(log)
    torch.manual_seed(0)
    m2 = r.shells["_Scale"](4)
    with pytest.raises(NotInBank):  # other inputs
        m2(x * 2)
    with torch.no_grad():
        m2.proj.weight[0, 0] += 1e-3  # other parameters: the student's optimiser moved them
    with pytest.raises(NotInBank):
        m2(x)
    with pytest.raises(NotInBank):  # other arguments to the constructor
        r.shells["_Scale"](5)
    assert r.missed == 3


def test_a_construction_from_another_generator_state_gets_recorded_values_and_leaves_the_generator():
    log, rec = _recorded_classes()
    torch.manual_seed(0)
    m = rec["_Scale"](4)
    after = torch.get_rng_state()
    r = _replay_of(log)
    torch.manual_seed(0)
    r.shells["_Scale"](4)
    assert torch.equal(torch.get_rng_state(), after)  # from the same state: goes on as the reference's did
    torch.manual_seed(7)
    here = torch.get_rng_state()
    other = r.shells["_Scale"](4)
    assert torch.equal(other.proj.weight, m.proj.weight)  # the reference's values, from its own draw
    assert torch.equal(torch.get_rng_state(), here)


def test_a_part_that_changes_its_state_in_place_is_computed_but_not_recorded():
    log, rec = _recorded_classes()
    b = rec["_Bump"]()
    assert torch.equal(b(torch.ones(2)), torch.full((2,), 2.0)) and float(b.count) == 1
    assert not any(k for k, calls in log.calls.items() for c in calls if "out" in c)
    r = _replay_of(log)
    with pytest.raises(NotInBank):
        r.shells["_Bump"]()(torch.ones(2))


# -- the Transformer: an EncoderLayer over a broken LayerNorm (classes beneath) -----------------------------------
LAYER_TASKS = ("sdpa", "mha", "layernorm", "feedforward", "encoder_layer")


def _break_norm(folder, tmp_path):
    """``folder``'s norm.py replaced by the reference's with its variance unbiased (the catalogued mistake)."""
    catalogue = Catalogue(load("transformer"))
    broken = catalogue.write_mutant(catalogue.by_id["layernorm.unbiased_variance"], tmp_path / "broken_norm")
    shutil.copy(broken / "norm.py", folder / "norm.py")


@pytest.fixture(scope="module")
def layer_bank(tmp_path_factory):
    a = load("transformer")
    bank = kit.record(a, [a.reference], profiles=("quick",), tasks=LAYER_TASKS, diagnoses=False)
    return bank.save(tmp_path_factory.mktemp("replay") / "layers.bank")


def _layer_verdicts(folder, bank_file, tasks=LAYER_TASKS):
    a = load("transformer")
    runs = [
        api.check(path=folder, assignment=a, profile="quick", tasks=tasks, diagnose=False, bank=bank)
        for bank in (None, str(bank_file))
    ]
    return [{c.id: c for t in r.tasks for c in t.checks} for r in runs]


@pytest.mark.parametrize("style", ["reference", "einsum", "fused_qkv"])
def test_a_correct_layer_over_a_broken_norm_is_graded_as_the_full_kit_grades_it(style, layer_bank, tmp_path):
    a = load("transformer")
    src = a.reference if style == "reference" else REPO / "tests/blind/correct" / style
    dest = shutil.copytree(src, tmp_path / style)
    _break_norm(dest, tmp_path)
    full, kitted = _layer_verdicts(dest, layer_bank)
    assert full["layernorm.equivalence"].status == kitted["layernorm.equivalence"].status == "failed"
    judged = [cid for cid in full if cid.startswith("encoder_layer.")]
    assert judged
    for cid in judged:
        assert (kitted[cid].status, kitted[cid].score) == (full[cid].status, full[cid].score), (
            cid,
            full[cid].status,
            kitted[cid].status,
            [n.key for n in kitted[cid].notes],
        )


def test_a_layer_over_an_attention_without_biases_is_judged_over_the_record_as_in_the_full_kit(layer_bank, tmp_path):
    """An attention built without biases (a deviation from the contract, charged in mha): over the submission's own
    parts a layer's check asks for the reference's answer with those biases set to zero, which no bank holds; the
    full kit grades the layer over the reference's attention, and so does the kit, over its record (the layer
    checked alone: with mha failing first, the kit would go to the record at once)."""
    dest = shutil.copytree(REPO / "tests/blind/correct/fused_qkv", tmp_path / "no_bias")
    shutil.copy(REPO / "tests/blind/deviations/fused_qkv__no_bias/attention.py", dest / "attention.py")
    full, kitted = _layer_verdicts(dest, layer_bank, tasks=("encoder_layer",))
    isolated = [cid for cid in full if cid.startswith("encoder_layer.") and full[cid].variant == "isolated"]
    assert "encoder_layer.equivalence" in isolated
    for cid in isolated:
        assert (kitted[cid].status, kitted[cid].score) == (full[cid].status, full[cid].score), (cid, kitted[cid].notes)


@pytest.mark.parametrize("bug", ["encoder_layer.no_attention_residual", "encoder_layer.norms_swapped"])
def test_a_broken_layer_over_a_broken_norm_never_passes_what_the_full_kit_fails(bug, layer_bank, tmp_path):
    """A mistake in the layer itself: the kit fails what it can judge over the record, as the full kit fails it, and
    blocks the rest."""
    a = load("transformer")
    catalogue = Catalogue(a)
    dest = catalogue.write_mutant(catalogue.by_id[bug], tmp_path / "mutant")
    _break_norm(dest, tmp_path)
    full, kitted = _layer_verdicts(dest, layer_bank)
    for cid, c in full.items():
        if c.status != "passed":
            assert kitted[cid].status != "passed", cid
        if kitted[cid].status == "failed":
            assert c.status == "failed", cid
    # its calls to the parts are not the reference's (another input to a norm, no mask): blocked, never passed
    blocked = [c for c in kitted if c.startswith("encoder_layer.") and kitted[c].status == "skipped"]
    assert blocked and all(any(n.key == "note.blocked_by" for n in kitted[c].notes) for c in blocked), bug


def _clip(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    for g in grads:
        g.mul_((max_norm / (total + 1e-6)).clamp(max=1.0))
    return total


def _draw(logits, generator):
    return torch.multinomial(logits.softmax(-1), 1, generator=generator)


def _net_with_grads(seed):
    torch.manual_seed(seed)
    net = torch.nn.Linear(3, 2)
    net(torch.randn(4, 3)).pow(2).sum().backward()
    return net


def test_a_function_that_changes_its_arguments_in_place_is_replayed_with_the_change():
    log = replay.Log()
    recorded = log.wrap("clip", _clip)
    net = _net_with_grads(0)
    total = recorded(net.parameters(), 0.1)  # a generator, read once
    clipped = [p.grad.clone() for p in net.parameters()]
    r = _replay_of(log)
    net2 = _net_with_grads(0)
    got = r.call("clip", (net2.parameters(),), {"max_norm": 0.1})
    assert torch.equal(got, total)
    for p, want in zip(net2.parameters(), clipped):
        assert torch.equal(p.grad, want)  # scaled in place, as the reference scaled them
    with pytest.raises(NotInBank):  # other gradients: another question
        r.call("clip", (_net_with_grads(1).parameters(), 0.1), {})


def test_a_function_drawing_from_a_generator_it_is_given_leaves_that_generator_as_the_reference_did():
    log = replay.Log()
    recorded = log.wrap("draw", _draw)
    logits = torch.randn(2, 5)
    g = torch.Generator().manual_seed(5)
    want = recorded(logits, g)
    after = g.get_state()
    r = _replay_of(log)
    g2 = torch.Generator().manual_seed(5)
    assert torch.equal(r.call("draw", (logits, g2), {}), want) and torch.equal(g2.get_state(), after)
    with pytest.raises(NotInBank):
        r.call("draw", (logits, torch.Generator().manual_seed(6)), {})


class _Counter:
    """State the record cannot describe (a dict keyed by tensors, as an optimiser keeps its moments)."""

    def __init__(self):
        self.seen = {}

    def add(self, x):
        self.seen[x] = self.seen.get(x, 0) + 1
        return x * len(self.seen)


def test_state_of_no_plain_form_is_never_left_out_of_a_key():
    log = replay.Log()
    rec = log.wrap_class("_Counter", _Counter, {"_Counter": _Counter})
    c = rec()
    with log.window():
        c.add(torch.ones(2))  # its state holds a tensor key: the call is computed, not recorded
    assert not any("out" in call for calls in log.calls.values() for call in calls)
    with pytest.raises(NotInBank):
        _replay_of(log).shells["_Counter"]().add(torch.ones(2))


# -- a task with no code of its own (the language model's overfit run) ---------------------------------------------
WHOLE_TASKS = ("rope", "gqa", "kv_cache", "attention", "overfit")
"""The whole learning and the parts of attention, which mends a broken ``causal_attention`` (``gqa``) beneath it."""


def _whole_bank(tmp_path_factory, name, mending_bytes, tasks=WHOLE_TASKS):
    a = load("decoder_lm")
    bank = kit.record(a, [a.reference], profiles=("quick",), tasks=tasks, diagnoses=False, mending_bytes=mending_bytes)
    return bank.save(tmp_path_factory.mktemp("whole") / name)


@pytest.fixture(scope="module")
def mended_bank(tmp_path_factory):
    """With the reference's training run over attention's recorded parts (26 MB of tensors: above the default)."""
    return _whole_bank(tmp_path_factory, "mended.bank", 26 << 20)


@pytest.fixture(scope="module")
def small_bank(tmp_path_factory):
    """The default: a training run's record is too big to keep. With the optimiser's task too."""
    return _whole_bank(tmp_path_factory, "small.bank", None, WHOLE_TASKS + ("adamw",))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_commands_say_which_whole_runs_a_limit_kept_and_which_it_left_out(mended_bank, small_bank, lang):
    """``bank build`` and ``kit build`` print ``kit.whole_runs_said``: each run recorded under ``--whole-run-mb``,
    its size, and whether it was kept; a run left out says the limit that would keep it, and that limit does. The
    mended bank's limit (26 MiB) keeps the runs over attention's parts and the model's (25.7 and 22.5 MB here) and
    leaves out bigger ones (the block's, generate's, train_step's: 46.1, 28.5, 54.1 MB); the run over sample's parts,
    which training never calls, recorded nothing and says so; a bank made without a limit records none and says
    nothing."""
    found = Bank.load(mended_bank).meta["whole_runs"]
    limit = 26 << 20
    assert found["limit"] == limit
    assert found["runs"] and all(r["task"] == "overfit" and r["profile"] == "quick" for r in found["runs"])
    assert all(r["kept"] == (r["bytes"] <= limit) for r in found["runs"]), found
    assert [r["kept"] for r in found["runs"] if r["over"] == "attention"] == [True]  # the run the tests above use
    assert not all(r["kept"] for r in found["runs"]), found  # both kinds of line are seen
    lines = kit.whole_runs_said(Bank.load(mended_bank).meta, lang)
    assert len(lines) == len(found["runs"])
    assert [r["bytes"] for r in found["runs"] if r["over"] == "sample"] == [0]  # training never calls sample's parts
    for run, line in zip(found["runs"], lines, strict=True):
        if not run["bytes"]:  # recorded nothing: said so, with no size and no limit
            assert run["over"] in line and ("no tensors" in line if lang == "en" else "没有记录" in line), line
            assert "MB" not in line and "--whole-run-mb" not in line, line
            continue
        assert run["over"] in line and f"{run['bytes'] / 1e6:.1f} MB" in line and "--whole-run-mb 27.3" in line, line
        if run["kept"]:
            assert "kept" in line if lang == "en" else "已保留" in line, line
            continue
        assert "left out" in line if lang == "en" else "未保留" in line, line
        need = line.rsplit("--whole-run-mb ", 1)[1].split()[0]
        assert int(float(need) * 1e6) >= run["bytes"] > int((float(need) - 0.1) * 1e6), (need, run["bytes"])
    assert "whole_runs" not in Bank.load(small_bank).meta
    assert kit.whole_runs_said(Bank.load(small_bank).meta, lang) == []


def _lm_with_mutants(bugs, tmp_path, src=None):
    a = load("decoder_lm")
    catalogue = Catalogue(a)
    dest = shutil.copytree(src or a.reference, tmp_path / "case")
    for bug in bugs:
        mutant = catalogue.write_mutant(catalogue.by_id[bug], tmp_path / bug)
        shutil.copy(mutant / catalogue.by_id[bug].file, dest / catalogue.by_id[bug].file)
    return dest


def _overfit(folder, bank_file):
    a = load("decoder_lm")
    runs = [
        api.check(path=folder, assignment=a, profile="quick", tasks=WHOLE_TASKS, diagnose=False, bank=bank)
        for bank in (None, None if bank_file is None else str(bank_file))
    ]
    return [{c.id: c for t in r.tasks for c in t.checks}["overfit.ten_poems"] for r in runs]


def _trains_as_the_reference(folder):
    """Whether ``folder``'s code trains as the reference does here, bit for bit: the overfit check's training run
    (``training_run``: its probe, in this process, from the reference's initial parameters) gives the reference's
    losses at every step. Code written otherwise (an ``einsum`` for a ``matmul``) can round otherwise on one machine
    and not on another, by the kernels torch picks for it there."""
    from assignments.decoder_lm.checks.overfit import training_run
    from assignments.decoder_lm.sampling_probes import lm_overfit
    from grader.probes import params
    from grader.submission.inprocess import reference_namespace
    from grader.submission.loader import Namespace

    a = load("decoder_lm")
    reference = reference_namespace(a)
    _, _, run = training_run(lambda kw: params(reference, name="DecoderLM", kwargs=kw)["values"])
    theirs = lm_overfit(Namespace(folder, assignment=a, label="submission"), **run)["losses"]
    return theirs == lm_overfit(reference, **run)["losses"]


@pytest.mark.parametrize("style", ["reference", "einsum"])
def test_a_whole_over_a_broken_part_is_graded_over_the_record_of_the_part_that_mends_it(style, mended_bank, tmp_path):
    """The record is of the reference's own training run: it holds the calls of a run over it only where the code
    around the recorded parts computes what the reference's computes, bit for bit. The reference always does; code
    in another style does on some machines (``_trains_as_the_reference``), and there the kit must give the full kit's
    verdict. Where it does not, the record cannot judge the run, and the kit must say so (blocked, no points in the
    kit: the full kit's grade judges it), never fail it; giving the full kit's verdict is right there too."""
    src = None if style == "reference" else REPO / "tests/blind_lm/correct" / style
    full, kitted = _overfit(_lm_with_mutants(["gqa.fill_zero"], tmp_path, src), mended_bank)
    assert full.status == "passed" and [n.key for n in full.notes] == ["note.charged_beneath_whole"]
    same = (kitted.status, kitted.score, kitted.notes) == (full.status, full.score, full.notes)
    if src is None or _trains_as_the_reference(src):
        assert same, (kitted.status, kitted.score, [n.key for n in kitted.notes])
    else:
        blocked = (kitted.status, kitted.score) == ("skipped", 0.0) and "note.blocked_by" in [
            n.key for n in kitted.notes
        ]
        assert same or blocked, (kitted.status, kitted.score, [n.key for n in kitted.notes])


def test_a_whole_the_record_cannot_mend_is_blocked_not_failed(small_bank, tmp_path):
    full, kitted = _overfit(_lm_with_mutants(["gqa.fill_zero"], tmp_path), small_bank)
    assert full.status == "passed"
    assert (kitted.status, kitted.score) == ("skipped", 0.0)
    assert [n.key for n in kitted.notes] == ["note.blocked_by"] and kitted.notes[0].params["tasks"] == "gqa"


def test_a_whole_over_a_broken_part_it_uses_directly_fails_as_in_the_full_kit(small_bank, tmp_path):
    """No task beneath holds the broken optimiser: the full kit charges the whole run, and so does the kit."""
    a = load("decoder_lm")
    folder = _lm_with_mutants(["adamw.l2_not_decoupled"], tmp_path)
    tasks = WHOLE_TASKS + ("adamw",)
    runs = [
        api.check(path=folder, assignment=a, profile="quick", tasks=tasks, diagnose=False, bank=bank)
        for bank in (None, str(small_bank))
    ]
    full, kitted = ({c.id: c for t in r.tasks for c in t.checks} for r in runs)
    assert any(c.status == "failed" for cid, c in full.items() if cid.startswith("adamw."))
    assert any(c.status == "failed" for cid, c in kitted.items() if cid.startswith("adamw."))
    whole = "overfit.ten_poems"
    assert full[whole].status == "failed"
    assert (kitted[whole].status, kitted[whole].score, kitted[whole].notes) == ("failed", 0.0, full[whole].notes)


def test_a_whole_that_fails_over_the_mending_parts_too_never_passes(mended_bank, tmp_path):
    """A broken loss (a task not graded here) beside the broken attention: the whole does not learn over the
    reference's attention either, and the kit never passes it."""
    full, kitted = _overfit(_lm_with_mutants(["gqa.fill_zero", "loss.not_shifted"], tmp_path), mended_bank)
    assert full.status == "failed"
    assert kitted.status != "passed" and kitted.score == 0
