"""Stand-ins for the reference's parts (``grader.submission.standin``): what an isolated check's code is given in a
sealed worker. Over a host in this process (``Loopback``: every message through the wire format), a stand-in must
behave as the part itself (values, gradients, random draws, devices, copies, state changes), hold nothing of the
reference's code, and a host must answer only what its variant gives, whatever a message says."""

import collections
import copy
import gc
import types
from pathlib import Path

import pytest
import torch
from torch import nn

from grader import api
from grader.assignment import load
from grader.submission import wire
from grader.submission.inprocess import StandInParts, host_for, loopback_parts, reference_namespace
from grader.submission.standin import MAX_STATE_BYTES, MESSAGE_CHARS, Loopback, StandInError, StandIns

TRANSFORMER = load("transformer")
LM = load("decoder_lm")


def parts(assignment, task):
    return loopback_parts(assignment, task)


def same_params(a, b):
    pa, pb = dict(a.named_parameters()), dict(b.named_parameters())
    return pa.keys() == pb.keys() and all(torch.equal(pa[k], pb[k]) for k in pa)


# -- the same behaviour as the part ----------------------------------------------------------------------------
def test_a_module_builds_computes_and_differentiates_as_the_part():
    ref = reference_namespace(TRANSFORMER).get("MultiHeadAttention")
    MHA = parts(TRANSFORMER, "encoder_layer").get("MultiHeadAttention")
    torch.manual_seed(3)
    mine = ref(8, 2, dropout=0.25)
    torch.manual_seed(3)
    theirs = MHA(8, 2, dropout=0.25)
    assert type(theirs).__name__ == "MultiHeadAttention" and isinstance(theirs, nn.Module)
    assert same_params(mine, theirs) and theirs.state_dict().keys() == mine.state_dict().keys()
    assert all(isinstance(p, nn.Parameter) for p in theirs.parameters())
    x = torch.randn(2, 5, 8, requires_grad=True)
    mask = torch.ones(2, 1, 5, dtype=torch.bool)
    mask[1, 0, 3:] = False
    torch.manual_seed(7)
    y_ref = mine(x, x, x, mask)  # dropout draws from the global generator
    after_ref = torch.get_rng_state()
    torch.manual_seed(7)
    y = theirs(x, x, x, mask)
    assert torch.equal(y, y_ref) and torch.equal(torch.get_rng_state(), after_ref)
    g_ref = torch.autograd.grad((y_ref * y_ref).sum(), [x, *mine.parameters()])
    g = torch.autograd.grad((y * y).sum(), [x, *theirs.parameters()])
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(g, g_ref))


def test_parameters_changed_by_the_students_code_are_used_in_the_next_call():
    ref = reference_namespace(TRANSFORMER).get("FeedForward")
    FF = parts(TRANSFORMER, "encoder_layer").get("FeedForward")
    mine, theirs = ref(6, 10, dropout=0.0), FF(6, 10, dropout=0.0)
    x = torch.randn(3, 6)
    optimiser = torch.optim.SGD(theirs.parameters(), lr=0.5)  # the student's optimiser on the stand-in's parameters
    theirs(x).sum().backward()
    optimiser.step()
    with torch.no_grad():
        theirs.linear1.weight.data.mul_(2)  # through .data too: no version counter moves
        for p_ref, p in zip(mine.parameters(), theirs.parameters()):
            p_ref.copy_(p)
    assert torch.equal(theirs(x), mine(x))
    theirs.eval()
    assert not theirs.training and not theirs.linear1.training


class _Recording:
    """A link that passes each message on and keeps its size in bytes."""

    def __init__(self, link):
        self.link, self.sizes = link, []

    def ask(self, message):
        self.sizes.append(len(wire.encode(message)))
        return self.link.ask(message)


def test_a_state_unchanged_since_the_last_call_crosses_as_a_number_and_any_change_crosses_in_full():
    ref = reference_namespace(TRANSFORMER).get("EncoderLayer")
    layer_parts = parts(TRANSFORMER, "model")
    standins = layer_parts.standins
    link = standins.link = _Recording(standins.link)
    torch.manual_seed(5)
    mine = ref(64, 4, 128, dropout=0.0)
    torch.manual_seed(5)
    theirs = layer_parts.get("EncoderLayer")(64, 4, 128, dropout=0.0)
    x = torch.randn(2, 4, 64)
    assert torch.equal(theirs(x), mine(x))
    first = link.sizes[-1]
    assert torch.equal(theirs(x), mine(x))
    assert link.sizes[-1] < first / 3  # the parameters went as their slots
    changes = [
        lambda m: m.norm1.weight.data.mul_(3),  # no version counter moves
        lambda m: setattr(m.ffn.linear1.weight, "data", m.ffn.linear1.weight.data * 2),
        lambda m: m.self_attn.w_q.weight.data.copy_(m.self_attn.w_q.weight.data.double().float() + 1),
    ]
    for change in changes:
        with torch.no_grad():
            change(theirs)
            change(mine)
        assert torch.equal(theirs(x), mine(x))
    theirs.double()  # new tensors of another dtype: sent in full, not taken for the old ones
    mine.double()
    assert torch.equal(theirs(x.double()), mine(x.double()))
    y, y_ref = theirs(x.double().requires_grad_()), mine(x.double().requires_grad_())
    g = torch.autograd.grad(y.sum(), list(theirs.parameters()))  # the backward names the slots its forward sent
    g_ref = torch.autograd.grad(y_ref.sum(), list(mine.parameters()))
    assert all(torch.allclose(a, b) for a, b in zip(g, g_ref))


class _Tokens:
    """A link that passes each message on and keeps, per message, whether its target went by token (``"R"``) and
    whether the host asked for it in full (``stale``); ``deltas``: for how many of its parameters and buffers a target
    sent by token brought new data, and for how many of its modules a new mode."""

    def __init__(self, link):
        self.link, self.seen, self.deltas = link, [], []

    def ask(self, message):
        target = message["body"].get("self")
        reply = self.link.ask(message)
        self.seen.append(("R" if isinstance(target, tuple) and target[0] == "R" else "full", bool(reply.get("stale"))))
        self.deltas.append((len(message["body"].get("delta") or ()), len(message["body"].get("modes") or ())))
        return reply


LM_CONFIG = {"vocab_size": 13, "dim": 8, "num_layers": 2, "num_heads": 2, "hidden_dim": 12, "num_kv_heads": 1}
"""A small ``DecoderLM``: two layers, grouped keys and values."""


def _lm_pair(seed=4, hub=None):
    """The reference's ``DecoderLM`` and its stand-in, built alike; the stand-ins' link keeps what went by token.
    ``hub``: a list given to receive the stand-ins (``StandIns``)."""
    ref = reference_namespace(LM).get("DecoderLM")
    lm_parts = parts(LM, "generate")
    link = lm_parts.standins.link = _Tokens(lm_parts.standins.link)
    if hub is not None:
        hub.append(lm_parts.standins)
    config = LM_CONFIG
    torch.manual_seed(seed)
    mine = ref(**config)
    torch.manual_seed(seed)
    theirs = lm_parts.get("DecoderLM")(**config)
    return mine, theirs, link


def test_an_unchanged_target_goes_by_token_and_every_change_of_its_state_is_seen():
    mine, theirs, link = _lm_pair()
    tokens = torch.randint(0, 13, (2, 5))
    places = len(dict(theirs.named_parameters(remove_duplicate=False))) + len(list(theirs.buffers()))

    def same(how, new_data=0, new_modes=0):
        """``how``: ``"full"``, or ``"R"``: by token, with new data for ``new_data`` of its parameters and buffers and
        a new mode for ``new_modes`` of its modules."""
        with torch.no_grad():
            got, want = theirs(tokens), mine(tokens)
        assert torch.equal(got, want)
        assert (link.seen[-1][0], link.deltas[-1]) == (how, (new_data, new_modes)), (link.seen[-4:], link.deltas[-4:])

    # Built by the host: its token came with it, and the first call brings the data of every place (the tied weight's
    # two), which the worker never sent; then its token alone.
    same("R", places)
    same("R")
    changes = [  # each seen, whatever it goes through: no version counter moves for some
        (lambda m: m.layers[0].attn.q_proj.weight.data.mul_(3), ("R", 1)),  # new data for that place alone
        (lambda m: setattr(m.norm, "weight", nn.Parameter(m.norm.weight.detach() * 2)), ("full", 0)),
        (lambda m: m.layers[1].ffn_norm.weight.copy_(torch.linspace(0.5, 2, 8)), ("R", 1)),
        (lambda m: m.eval(), ("R", 0, len(list(theirs.modules())))),  # every module's mode, nothing else
        (lambda m: m.layers[1].attn.train(), ("R", 0, len(list(theirs.layers[1].attn.modules())))),
        (lambda m: setattr(m, "forward_hook_note", print), ("R", 0)),  # not data: never sent, so nothing new
        (lambda m: setattr(m.layers[0].attn_norm, "eps", 0.5), ("full", 0)),
        (lambda m: setattr(m.layers, "0", copy.deepcopy(m.layers[1])), ("full", 0)),
        (lambda m: m.embed.weight.requires_grad_(False), ("full", 0)),
        (lambda m: m.double(), ("R", places)),  # the same tensors, each with new data of another dtype
        (lambda m: m.embed.weight.data.zero_(), ("R", 2)),  # the tied weight: both its places
    ]
    for change, how in changes:
        with torch.no_grad():
            change(theirs)
            change(mine)
        if theirs.embed.weight.dtype == torch.float64:
            tokens = tokens.clone()
        same(*how)
        same("R")
    idle = sum(not m.training for m in theirs.modules())
    assert 0 < idle < len(list(theirs.modules()))
    for m in (theirs, mine):  # modes and data at once: both by token, and only those
        m.train()
        m.layers[0].ffn.up_proj.weight.data.add_(1)
    same("R", 1, idle)
    same("R")
    theirs.layers[0].attn.o_proj.weight.grad = torch.ones_like(theirs.layers[0].attn.o_proj.weight)
    same("full")  # a gradient: never by token
    same("full")
    assert not any(stale for _, stale in link.seen)


def test_new_data_by_token_must_name_places_the_object_has():
    """A forged message's new data for an object named by token: a place it does not have, one place twice, a number
    that is not one, a tensor the message does not hold, a parameter's place given a plain tensor. Each is refused
    with an error, never put in place: the next honest call computes what the part itself does."""
    mine, theirs, link, hub, tokens = _forged_pair()

    def forge(message, entry):
        message["body"]["delta"], plain = entry
        if plain:
            message["table"][0][1] &= ~2  # sent as a plain tensor, not a parameter

    hub.link = forging = _Forge(link, forge)
    forged = forging.forged
    bad = [[10_000, 0]], [[0, 0], [0, 0]], [["0", 0]], [[0, -1]], [[0, 99]], [[1, 0], [10_000, 0]], [[0, 0]]
    for i, delta in enumerate(bad):
        with torch.no_grad():
            assert torch.equal(theirs(tokens), mine(tokens))  # after a refusal the next call is in full: a token again
            theirs.layers[0].attn.q_proj.weight.data.mul_(2)
            mine.layers[0].attn.q_proj.weight.data.mul_(2)
            forged.append((delta, i == len(bad) - 1))
            with pytest.raises(StandInError, match="not a parameter" if i == len(bad) - 1 else None):
                theirs(tokens)
            assert link.seen[-1][0] == "R"
    _honest_again(mine, theirs, link, hub, tokens)


def test_new_modes_by_token_must_name_modules_the_object_has():
    """A forged message's new modes for an object named by token: a module it does not have, a mode that is not a
    bool, one module twice, a negative number, a list that is not one, an entry of three. Each is refused with an
    error, and no mode of the host's object changes: it stays what the worker's copy was when its token was given,
    and the next honest call goes by token again and computes what the part itself does."""
    mine, theirs, link, hub, tokens = _forged_pair()
    host = link.link.host

    def host_modes():
        (obj,) = [o for o in host.objects.values() if isinstance(o, nn.Module) and o.__class__.__name__ == "DecoderLM"]
        return [m.training for m in obj.modules()]

    def forge(message, modes):
        message["body"]["modes"] = modes

    hub.link = forging = _Forge(link, forge)
    forged = forging.forged
    bad = [[10_000, False]], [[0, 1]], [[0, False], [0, True]], [[-1, False]], "x", [[0, False, 1]], [[1, None]]
    for modes in bad:
        with torch.no_grad():
            assert torch.equal(theirs(tokens), mine(tokens))
            before = host_modes()
            assert before == [m.training for m in theirs.modules()]
            theirs.eval()
            mine.eval()
            forged.append(modes)
            with pytest.raises(StandInError):
                theirs(tokens)
            assert link.seen[-1][0] == "R"
            assert host_modes() == before, modes  # nothing of the forged message was put in place
            theirs.train()
            mine.train()
    _honest_again(mine, theirs, link, hub, tokens)
    assert host_modes() == [m.training for m in theirs.modules()]


def _forged_pair():
    """``_lm_pair`` with its stand-ins (``hub``) and tokens, the stand-in once called: it has a token."""
    given = []
    mine, theirs, link = _lm_pair(hub=given)
    (hub,) = given
    tokens = torch.randint(0, 13, (1, 3))
    with torch.no_grad():
        theirs(tokens)
    return mine, theirs, link, hub, tokens


class _Forge:
    """A link that, while ``forged`` holds entries, passes the next message naming its target by token on rewritten by
    ``forge(message, entry)`` (the last entry first), and every other message as it is."""

    def __init__(self, link, forge):
        self.link, self.forge, self.forged = link, forge, []

    def ask(self, message):
        body = message["body"]
        if self.forged and isinstance(body.get("self"), tuple) and body["self"][0] == "R":
            self.forge(message, self.forged.pop())
        return self.link.ask(message)


def _honest_again(mine, theirs, link, hub, tokens):
    """With the honest link back, the stand-in computes what the part does, and by token again (no stale copy)."""
    hub.link = link
    with torch.no_grad():
        assert torch.equal(theirs(tokens), mine(tokens))
        assert torch.equal(theirs(tokens), mine(tokens))
    assert link.seen[-1] == ("R", False)


def test_a_stand_in_built_used_and_dropped_leaves_nothing_for_the_garbage_collector():
    """Reference counting alone frees a stand-in and what its calls made: built, called by token (with new data and
    modes), through autograd and backward. A reference cycle among them would leave each for the cyclic collector, and
    the host's copy held until it ran (thousands of objects a grading, and most of a construction's time)."""
    cls = parts(LM, "generate").get("DecoderLM")
    config = LM_CONFIG
    tokens = torch.randint(0, 13, (2, 4))

    def use():
        model = cls(**config)
        with torch.no_grad():
            model(tokens)
            model.layers[0].attn.q_proj.weight.mul_(2)
            model.eval()
            model(tokens)
        model.train()
        model(tokens).sum().backward()

    use()  # what is made once (layouts, caches) is made here
    left = _cyclic_garbage(use)
    assert not left, left.most_common(8)


def _cyclic_garbage(use, times=3):
    """The objects ``use()`` run ``times`` times leaves that only the cyclic garbage collector frees, by type."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(times):
            use()
        gc.collect()
        return collections.Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


def test_the_generate_probe_leaves_nothing_for_the_garbage_collector():
    """The LM's generate probe wraps the model's forward in a recorder, which the model holds: once the call is over,
    the recorder no longer holds the model, so the model it built is freed as soon as the probe returns."""
    from assignments.decoder_lm.sampling_probes import lm_generate

    ns = reference_namespace(LM)
    config = LM_CONFIG
    state = {k: v.detach().clone() for k, v in ns.get("DecoderLM")(**config).named_parameters()}
    prompt = torch.randint(0, 13, (2, 3))

    def use():
        lm_generate(ns, model={"kwargs": config, "state": state}, prompt=prompt, max_new_tokens=3)

    use()
    left = _cyclic_garbage(use)
    assert not left, left.most_common(8)


def test_with_autograd_on_the_target_always_crosses_in_full():
    mine, theirs, link = _lm_pair()
    tokens = torch.randint(0, 13, (1, 4))
    for _ in range(3):
        got, want = theirs(tokens), mine(tokens)
        assert torch.equal(got, want)
        g = torch.autograd.grad(got.sum(), list(theirs.parameters()))
        g_ref = torch.autograd.grad(want.sum(), list(mine.parameters()))
        assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(g, g_ref))
    assert all(kind == "full" for kind, _ in link.seen)


def test_copies_that_share_the_hosts_object_never_stand_for_each_other():
    mine, theirs, link = _lm_pair()
    tokens = torch.randint(0, 13, (2, 3))
    twin, twin_ref = copy.deepcopy(theirs), copy.deepcopy(mine)  # one host object for both, until they differ
    optimiser = torch.optim.SGD(twin.parameters(), lr=0.1)
    twin(tokens).sum().backward()
    optimiser.step()
    optimiser.zero_grad(set_to_none=True)
    with torch.no_grad():
        for p_ref, p in zip(twin_ref.parameters(), twin.parameters()):
            p_ref.copy_(p)
        for _ in range(3):
            for model, ref in ((theirs, mine), (twin, twin_ref), (theirs, mine)):
                assert torch.equal(model(tokens), ref(tokens))
    assert any(kind == "R" for kind, _ in link.seen)


def _another_state_on_the_hosts_object(mine, theirs, link, tokens):
    """``theirs`` named by token, then a copy of it that shares the host's object sends another state onto it."""
    with torch.no_grad():
        theirs(tokens)
        theirs(tokens)
    assert link.seen[-1] == ("R", False)
    twin, twin_ref = copy.deepcopy(theirs), copy.deepcopy(mine)  # shares the host's object, and its token
    with torch.no_grad():
        for p, p_ref in zip(twin.parameters(), twin_ref.parameters()):
            p.mul_(-1)
            p_ref.mul_(-1)
    assert torch.equal(twin(tokens), twin_ref(tokens))  # with autograd: in full, onto the object both share


def test_a_token_stands_for_nothing_once_the_hosts_object_took_another_state():
    mine, theirs, link = _lm_pair()
    tokens = torch.randint(0, 13, (2, 3))
    _another_state_on_the_hosts_object(mine, theirs, link, tokens)
    with torch.no_grad():
        assert torch.equal(theirs(tokens), mine(tokens))
    assert link.seen[-2:] == [("R", True), ("full", False)]


def test_new_data_by_token_is_refused_once_the_hosts_object_took_another_state():
    """As above, but the call by token brings new data and modes: they are never put on a state other than the one the
    token stands for (the host asks for the object in full), and the answer is the part's."""
    mine, theirs, link = _lm_pair()
    tokens = torch.randint(0, 13, (2, 3))
    _another_state_on_the_hosts_object(mine, theirs, link, tokens)
    for m in (theirs, mine):
        m.eval()
        with torch.no_grad():
            m.norm.weight.add_(1)
    with torch.no_grad():
        assert torch.equal(theirs(tokens), mine(tokens))
    assert link.seen[-2:] == [("R", True), ("full", False)]
    assert link.deltas[-2] == (1, len(list(theirs.modules())))


_SELF_CHANGING = """
import torch
from torch import nn


class Counter(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.arange(1.0, n + 1))
        self.calls = 0

    def forward(self, x):
        self.calls += 1  # a plain attribute changed by every call
        return x * self.w + self.calls

    @property
    def weight(self):
        return self.w  # its own parameter, given back


class Plain(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.arange(1.0, n + 1))

    def forward(self, x):
        return x * self.w

    @property
    def weight(self):
        return self.w  # its own parameter, given back


class Grower(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("total", torch.zeros(n))

    def forward(self, x):
        self.total.add_(x)  # its buffer, changed in place
        return self.total * 1
"""


def test_a_part_that_changes_itself_without_autograd_keeps_both_sides_in_step():
    from grader.submission.standin import Host

    module = types.ModuleType("self_changing")
    exec(compile(_SELF_CHANGING, "self_changing.py", "exec"), vars(module))  # noqa: S102 - the test's own part
    host = Host([module], {"Counter", "Grower", "Plain"})
    standins = StandIns(Loopback(host), host.surface)
    link = standins.link = _Tokens(standins.link)
    x = torch.ones(3)
    with torch.no_grad():
        for cls in ("Counter", "Grower"):
            theirs, mine = standins.get(cls)(3), getattr(module, cls)(3)
            for _ in range(4):
                assert torch.equal(theirs(x), mine(x))
                assert standin_state(theirs) == standin_state(mine)
        plain = standins.get("Plain")(3)
        plain(x)
        plain(x)
        assert link.seen[-1] == ("R", False)
        assert plain.weight is plain.w  # the worker's own parameter, as in full, not a copy of it
        assert link.seen[-2:] == [("R", True), ("full", False)]
        mine = module.Plain(3)
        plain(x)
        assert link.seen[-1] == ("full", False)  # no token again for it: it gave its own tensor back
        twin = standins.get("Plain")(3)
        twin(x)
        twin(x)
        assert link.seen[-1] == ("R", False)
        assert torch.equal(twin(twin.w), mine(mine.w))  # its own parameter as the argument: in full, one tensor
        assert link.seen[-1] == ("full", False)
    assert sum(stale for _, stale in link.seen) <= 3  # once each, then never by token again


def standin_state(module):
    return (
        {k: v.tolist() for k, v in module.state_dict().items()},
        {k: v for k, v in vars(module).items() if not k.startswith("_") and k != "training"},
    )


def test_a_host_answers_a_token_it_did_not_give_by_asking_for_the_object_in_full():
    mine, theirs, link = _lm_pair()
    host = link.link.host
    tokens = torch.randint(0, 13, (1, 3))
    with torch.no_grad():
        theirs(tokens)
        theirs(tokens)
    handle, token = vars(theirs)["_standin_sync"][:2]
    body = {"self": None, "method": "forward", "args": ("U", [("T", 0)]), "kwargs": ("D", {}), "objects": 1}
    for forged in (("R", 0, handle, token + 1), ("R", 0, handle + 1000, token), ("R", 0, 0, 0)):
        reply = ask(host, {"op": "call", "table": [[tokens, 0, None]], "body": dict(body, self=forged)})
        assert reply == {"stale": True}
    for malformed in (("R", 0, handle), ("R", "0", handle, token), ("R", 0, handle, str(token))):
        reply = ask(host, {"op": "call", "table": [[tokens, 0, None]], "body": dict(body, self=malformed)})
        assert reply["error"]["type"] == "StandInError"
    vjp = dict(body, self=("R", 0, handle, token), wrt=[0], outputs=[0], grad_outputs=[None])
    assert ask(host, {"op": "vjp", "table": [[tokens, 0, None]], "body": vjp}) == {"stale": True}
    with torch.no_grad():  # the worker's token still holds
        assert torch.equal(theirs(tokens), mine(tokens))
    assert link.seen[-1] == ("R", False)


def test_the_host_forgets_the_copies_of_tensors_the_worker_no_longer_holds():
    import gc

    lm = parts(TRANSFORMER, "encoder_layer")
    host = lm.standins.link.host
    MHA = lm.get("MultiHeadAttention")
    x = torch.randn(1, 3, 8)
    kept = MHA(8, 2, dropout=0.0)
    kept(x, x, x)
    held = dict(host.cache.tensors)
    for _ in range(5):
        gone = MHA(8, 2, dropout=0.0)
        gone(x, x, x)
        del gone
        gc.collect()
    kept(x, x, x)
    assert set(host.cache.tensors) == set(held) and len(held) == len(list(kept.parameters()))


def test_a_host_refuses_a_cached_tensor_it_never_got_and_more_than_a_worker_may_keep():
    from grader.submission import standin

    sdpa_parts = parts(TRANSFORMER, "encoder_layer")
    host = sdpa_parts.standins.link.host
    layouts = {0: [["weight", "bias"], [], [], [], []]}
    body = {
        "self": ("S", 0, 1, "LayerNorm", 0, True, [0, 1], [], [], []),
        "method": "forward",
        "args": ("U", [("T", 2)]),
        "kwargs": ("D", {}),
        "objects": 1,
        "env": {},
    }
    host.answer(
        {
            "op": "new",
            "table": [],
            "body": {"cls": "LayerNorm", "args": ("U", [4]), "kwargs": ("D", {}), "objects": 0, "env": {}},
        }
    )
    table = [[None, 3, None, 424242], [None, 3, None, 424243], [torch.randn(4), 0, None]]
    reply = ask(host, {"op": "call", "table": table, "body": body, "layouts": layouts})
    assert reply["error"]["type"] == "StandInError" and "does not hold" in reply["error"]["message"]
    big = torch.zeros(standin.HOST_CACHE_BYTES // 4 + 1)
    table = [[big, 3, None, 1], [torch.zeros(4), 3, None, 2], [torch.randn(4), 0, None]]
    reply = ask(host, {"op": "call", "table": table, "body": body, "layouts": layouts})
    assert reply["error"]["type"] == "StandInError" and "more cached" in reply["error"]["message"]
    assert host.cache.bytes == sum(t.numel() * t.element_size() for t in host.cache.tensors.values())


_SCALER = """
import torch
from torch import nn


class Scaler(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.arange(1.0, n + 1))
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        out = x * self.w
        with torch.no_grad():
            self.w.mul_(2)  # a part that changes its own state in place
            self.calls.add_(1)
        return out
"""


def test_a_part_that_changes_its_own_state_keeps_the_workers_copy_and_the_hosts_in_step():
    from grader.submission.standin import Host

    module = types.ModuleType("scaler")
    exec(compile(_SCALER, "scaler.py", "exec"), vars(module))  # noqa: S102 - the test's own part
    host = Host([module], {"Scaler"})
    Scaler = StandIns(Loopback(host), host.surface).get("Scaler")
    theirs, mine = Scaler(3), module.Scaler(3)
    x = torch.ones(3)
    for _ in range(2):
        sent = theirs.w.detach().clone()
        assert torch.equal(theirs(x), mine(x))
        assert torch.equal(theirs.w, mine.w) and torch.equal(theirs.calls, mine.calls)
    with torch.no_grad():
        theirs.w.data.copy_(sent)  # back to what the worker last sent: the host must not have kept its change
        mine.w.data.copy_(sent)
    assert torch.equal(theirs(x), mine(x)) and torch.equal(theirs.w, mine.w)


_COUNTED = """
import torch
from torch import nn

BUILT = [0]


class Counted(nn.Module):
    def __init__(self, n):
        super().__init__()
        BUILT[0] += 1
        self.register_buffer("serial", torch.full((n,), float(BUILT[0])))

    def forward(self, x):
        return x + self.serial


class Drawer(nn.Module):
    def __init__(self, n):
        super().__init__()
        torch.rand(n)  # draws, keeps nothing of it: the same state each time, a different random state after
        self.register_buffer("zeros", torch.zeros(n))
"""


def test_a_construction_is_built_from_a_copy_only_when_the_host_saw_it_give_the_same_twice_without_randomness():
    from grader.submission.standin import Host

    ref = reference_namespace(TRANSFORMER)
    layer_parts = parts(TRANSFORMER, "encoder_layer")
    link = layer_parts.standins.link = _Recording(layer_parts.standins.link)
    LN, MHA = layer_parts.get("LayerNorm"), layer_parts.get("MultiHeadAttention")
    norms = [LN(6) for _ in range(5)]
    assert len(link.sizes) == 2  # built twice by the host, then from the copy it vouched for
    norms[0].weight.data.add_(1.0)  # each copy its own tensors
    x = torch.randn(2, 6)
    mine = ref.get("LayerNorm")(6)
    assert torch.equal(norms[1](x), mine(x)) and not torch.equal(norms[0](x), mine(x))
    with torch.device("meta"):  # a meta state has no values to compare: its shapes and dtypes are what is vouched
        on_meta = [LN(6) for _ in range(3)] + [MHA(6, 2, dropout=0.0) for _ in range(3)]
    assert all(t.device.type == "meta" for m in on_meta for t in m.parameters())
    before = len(link.sizes)
    torch.manual_seed(0)
    heads = [MHA(6, 2, dropout=0.0) for _ in range(3)]  # draws random numbers: always built by the host
    torch.manual_seed(0)
    theirs = [ref.get("MultiHeadAttention")(6, 2, dropout=0.0) for _ in range(3)]
    assert len(link.sizes) == before + 3 and all(same_params(a, b) for a, b in zip(heads, theirs))
    assert not same_params(heads[0], heads[1])
    module = types.ModuleType("counted")
    exec(compile(_COUNTED, "counted.py", "exec"), vars(module))  # noqa: S102 - the test's own part
    host = Host([module], {"Counted"})
    Counted = StandIns(Loopback(host), host.surface).get("Counted")
    built = [Counted(2) for _ in range(4)]  # no random numbers, but not the same twice: never copied
    serials = [b.serial[0].item() for b in built]
    assert len(set(serials)) == 4 and serials == sorted(serials)
    host = Host([module], {"Drawer"})
    Drawer = StandIns(Loopback(host), host.surface).get("Drawer")
    torch.manual_seed(1)
    for _ in range(4):
        Drawer(3)
    after = torch.get_rng_state()
    torch.manual_seed(1)
    for _ in range(4):
        module.Drawer(3)
    assert torch.equal(after, torch.get_rng_state())


def test_copies_devices_dtypes_and_meta_work_as_on_a_module():
    MHA = parts(TRANSFORMER, "encoder_layer").get("MultiHeadAttention")
    first = MHA(8, 2, dropout=0.0)
    twins = [copy.deepcopy(first) for _ in range(3)]  # the annotated transformer's clones()
    with torch.no_grad():
        twins[1].w_q.weight.add_(1.0)
    x = torch.randn(1, 4, 8)
    assert torch.equal(twins[0](x, x, x), first(x, x, x))
    assert not torch.equal(twins[1](x, x, x), first(x, x, x))  # each copy has its own state on the host too
    assert torch.equal(twins[0](x, x, x), first(x, x, x))
    double = MHA(8, 2).double()
    assert double(x.double(), x.double(), x.double()).dtype == torch.float64
    with torch.device("meta"):
        meta = MHA(8, 2)
    assert all(p.device.type == "meta" for p in meta.parameters())
    assert (
        meta(
            torch.empty(1, 3, 8, device="meta"),
            torch.empty(1, 3, 8, device="meta"),
            torch.empty(1, 3, 8, device="meta"),
        ).device.type
        == "meta"
    )


def test_objects_built_by_the_reference_methods_properties_and_generators():
    lm = parts(LM, "generate")
    DecoderLM, sample_next = lm.get("DecoderLM"), lm.get("sample_next")
    ref = reference_namespace(LM)
    torch.manual_seed(0)
    model = DecoderLM(11, 8, 2, 2, 12)
    torch.manual_seed(0)
    model_ref = ref.get("DecoderLM")(11, 8, 2, 2, 12)
    assert same_params(model, model_ref)
    assert model.lm_head.weight is model.embed.weight  # tied: one parameter in the worker as in the part
    caches, caches_ref = model.new_cache(), model_ref.new_cache()
    assert type(caches[0]).__name__ == "KVCache" and caches[0].length == 0
    tokens = torch.tensor([[1, 2, 3]])
    out, out_ref = model(tokens, caches), model_ref(tokens, caches_ref)
    assert torch.allclose(out, out_ref) and caches[1].length == 3 and torch.equal(caches[1].keys, caches_ref[1].keys)
    step, step_ref = model(tokens[:, -1:], caches), model_ref(tokens[:, -1:], caches_ref)
    assert torch.allclose(step, step_ref) and caches[0].length == 4
    gen, gen_ref = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    draws = [sample_next(step[:, -1], 0.9, top_k=5, generator=gen) for _ in range(4)]
    draws_ref = [ref.get("sample_next")(step_ref[:, -1], 0.9, top_k=5, generator=gen_ref) for _ in range(4)]
    assert all(torch.equal(a, b) for a, b in zip(draws, draws_ref))
    assert torch.equal(gen.get_state(), gen_ref.get_state())  # the caller's generator moved on as with the part


def test_a_reference_function_that_changes_gradients_in_place():
    clip = parts(LM, "train_step").get("clip_grad_norm_")
    clip_ref = reference_namespace(LM).get("clip_grad_norm_")
    params = [nn.Parameter(torch.randn(4, 3)), nn.Parameter(torch.randn(5))]
    twins = [nn.Parameter(p.detach().clone()) for p in params]
    for p, q in zip(params, twins):
        p.grad = torch.randn_like(p) * 10
        q.grad = p.grad.clone()
    grads = [p.grad for p in params]
    total = clip((p for p in params), 1.0)  # a generator of parameters, as model.parameters() gives
    total_ref = clip_ref(twins, 1.0)
    assert torch.allclose(total, total_ref)
    assert all(torch.allclose(p.grad, q.grad) for p, q in zip(params, twins))
    assert all(p.grad is g for p, g in zip(params, grads))  # changed in place, as the part does


# -- nothing of the reference's code in what the worker holds ---------------------------------------------------
@pytest.mark.parametrize(
    "assignment, task", [(a, t.id) for a in (TRANSFORMER, LM) for t in a.tasks if t.names and a.all_deps(t.id)]
)
def test_the_worker_side_holds_names_only(assignment, task):
    host = host_for(assignment, task)
    assert wire.decode(wire.encode(host.surface)) == host.surface  # plain data
    strings = []

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                strings.append(k)
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        else:
            assert isinstance(x, (str, bool)), x
            if isinstance(x, str):
                strings.append(x)

    walk(host.surface)
    assert all(s.isidentifier() for s in strings)
    standins = StandIns(Loopback(host), host.surface)
    for name in standins.names():
        obj = standins.get(name)
        functions = (
            [obj]
            if isinstance(obj, types.FunctionType)
            else [v for v in vars(obj).values() if isinstance(v, types.FunctionType)]
        )
        for fn in functions:
            assert fn.__code__.co_filename.endswith("grader/submission/standin.py"), (name, fn)
            cells = [c.cell_contents for c in fn.__closure__ or ()]
            assert not any(isinstance(c, (types.ModuleType, types.CodeType)) for c in cells)
        assert obj.__module__ == "reference"


# -- a host answers only what its variant gives ----------------------------------------------------------------
def ask(host, message):
    return wire.decode(wire.encode(host.answer(wire.decode(wire.encode(message)))))


def test_a_host_builds_only_the_parts_of_its_variant():
    standins = parts(TRANSFORMER, "encoder_layer").standins
    host = standins.link.host
    for forged in ("EncoderLayer", "DecoderLayer", "Transformer", "greedy_decode", "_init_weights", "__import__"):
        message = {
            "op": "new",
            "table": [],
            "body": {"cls": forged, "args": ("U", []), "kwargs": ("D", {}), "objects": 0, "env": {}},
        }
        assert ask(host, message)["error"]["type"] == "StandInError"
        message = {
            "op": "call",
            "table": [],
            "body": {"fn": forged, "args": ("U", []), "kwargs": ("D", {}), "objects": 0, "env": {}},
        }
        assert ask(host, message)["error"]["type"] == "StandInError"
    with pytest.raises(KeyError):
        standins.get("EncoderLayer")


def test_a_host_calls_no_private_method_and_survives_any_message():
    lm = parts(LM, "block")
    attention = lm.get("CausalSelfAttention")(8, 2)
    host = lm.standins.link.host
    for method in ("_split", "__reduce__", "__init__", "__class__", "_apply", "register_forward_hook"):
        with pytest.raises(StandInError):
            lm.standins.call({"self": attention, "method": method}, (), {})
    junk = [
        None,
        3,
        "x",
        [],
        {"op": "call"},
        {"op": "call", "table": 5, "body": {}},
        {
            "op": "call",
            "table": [[1, 2, 3]],
            "body": {"fn": "causal_attention", "args": ("U", [("T", 0)]), "objects": 0},
        },
        {
            "op": "call",
            "table": [],
            "body": {"self": ("S", 0, 99999, "RMSNorm", 0, True, [], [], [], []), "method": "forward", "objects": 1},
        },
        {"op": "vjp", "table": [], "body": {"fn": "causal_attention", "objects": 0, "wrt": [7]}},
        {"op": "get", "table": [], "body": {"self": ("O", 4), "method": "length", "objects": 0}},
    ]
    for message in junk:
        assert "error" in ask(host, message), message
    assert attention(torch.randn(1, 3, 8)).shape == (1, 3, 8)  # and it still answers properly


def test_errors_come_back_as_their_type_with_a_bounded_message_and_no_traceback():
    MHA = parts(TRANSFORMER, "encoder_layer").get("MultiHeadAttention")
    with pytest.raises(ValueError) as info:
        MHA(10, 3)
    assert info.value.__traceback__ is not None
    assert len(str(info.value)) <= MESSAGE_CHARS + 10
    assert "reference-parts" not in str(info.value) and "File " not in str(info.value)
    assert all(
        "nonexistent-gradekit" not in f.filename for f in __import__("traceback").extract_tb(info.value.__traceback__)
    )


def test_a_part_too_large_for_grading_is_refused_before_it_is_built():
    MHA = parts(TRANSFORMER, "encoder_layer").get("MultiHeadAttention")
    with pytest.raises(StandInError, match="more than"):
        MHA(1 << 16, 2)  # 4 x 2^32 parameters: refused from its size on the meta device, nothing allocated
    assert MAX_STATE_BYTES < 16 * (1 << 32) * 4


def test_an_argument_that_is_not_data_is_refused_and_says_so():
    sdpa = parts(TRANSFORMER, "mha").get("scaled_dot_product_attention")
    q = torch.randn(1, 2, 3)

    class Spy(torch.Tensor):
        pass

    with pytest.raises(StandInError, match="subclass"):
        sdpa(q.as_subclass(Spy), q, q)
    with pytest.raises(StandInError, match="cannot be passed"):
        sdpa(q, q, q, dropout=lambda w: w)
    out, weights = sdpa(q, q, q, dropout=nn.Dropout(0.0))  # torch.nn's own modules cross
    assert out.shape == (1, 2, 3) and weights.shape == (1, 2, 2)


def test_stand_in_parts_give_modules_by_file():
    p = parts(TRANSFORMER, "model")
    assert isinstance(p, StandInParts)
    layers = p.module("layers.py")
    assert {"EncoderLayer", "DecoderLayer"} <= set(vars(layers))
    assert "model.py" not in {
        f for f in TRANSFORMER.contract_files if any(TRANSFORMER.name_to_file[n] == f for n in p.standins.names())
    }


def test_inference_mode_crosses():
    lm = parts(LM, "generate")
    ref = reference_namespace(LM)
    outs = []
    for make in (lm.get("DecoderLM"), ref.get("DecoderLM")):
        torch.manual_seed(0)
        model = make(11, 8, 2, 2, 12)
        with torch.inference_mode():
            caches = model.new_cache()
            model(torch.tensor([[1, 2, 3]]), caches)
            out = model(torch.tensor([[1]]), caches)
        outs.append((out, caches[0].keys.is_inference(), out.is_inference()))
    (mine, *flags), (theirs, *flags_ref) = outs
    assert torch.allclose(mine, theirs) and flags == flags_ref == [True, True]


# -- correct code in other styles keeps every point over stand-ins ---------------------------------------------
STYLES = Path(__file__).resolve().parents[1] / "standin_styles"


@pytest.mark.parametrize(
    "style", sorted(f"{a.name}/{p.name}" for a in (TRANSFORMER, LM) for p in (STYLES / a.name).iterdir() if p.is_dir())
)
def test_correct_styles_keep_full_marks_over_stand_ins(style):
    """Submissions written from the contract alone that lean on the parts they are given (copies, ``apply``,
    ``state_dict`` round trips, direct ``forward`` calls, keyword calls, ``inference_mode``, generators of
    parameters, caches of their own beside the reference's): every isolated check passes over the stand-ins,
    without falling back to the student's own parts."""
    assignment = load(style.split("/")[0])
    tasks = [t.id for t in assignment.tasks if t.names and assignment.all_deps(t.id)]
    result = api.check(path=STYLES / style, assignment=assignment, profile="quick", tasks=tasks, stand_ins=True)
    lost = {c.id: c.message for t in result.tasks for c in t.checks if c.status != "passed"}
    fallen = {
        c.id: [n.params for n in c.notes]
        for t in result.tasks
        for c in t.checks
        if any(n.key in ("note.not_isolated", "note.partly_isolated") for n in c.notes)
    }
    assert not lost and not fallen, (lost, fallen)
