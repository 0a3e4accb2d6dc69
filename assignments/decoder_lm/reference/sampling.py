r"""Choosing the next token, and generating text with the KV cache.

    probs = softmax(top_p(top_k(logits / temperature)))       then one draw per row
    temperature = 0: argmax (greedy)

Temperature flattens (> 1) or sharpens (< 1) the distribution; top-k keeps the k most likely tokens; top-p
(nucleus sampling, Holtzman et al. 2019) keeps the smallest set of most likely tokens whose probability
reaches p. Both filters cut the unreliable tail that makes sampled text wander. The order is fixed:
temperature, then top-k, then top-p (whose probabilities are those after temperature and top-k).
"""

import torch


def top_k_filter(logits, k):
    """Keep the ``k`` largest logits of each row; set the others to ``-inf``.

    Args:
        logits: ``[..., V]``.
        k: an int ``>= 1``; ``k >= V`` keeps everything.

    Returns:
        ``[..., V]``, a new tensor: a logit is kept iff it is ``>=`` the ``k``-th largest of its row (ties at
        the boundary are all kept).

    Hints:
        ``torch.topk(...).values[..., -1:]`` is the threshold of each row. ``torch.topk`` refuses ``k > V``.
    """
    k = min(k, logits.size(-1))
    threshold = torch.topk(logits, k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest
    return logits.masked_fill(logits < threshold, float("-inf"))


def top_p_filter(logits, p):
    """Keep the most probable tokens of each row up to total probability ``p``; set the others to ``-inf``.

    Args:
        logits: ``[..., V]`` (may hold ``-inf``).
        p: ``0 < p``; ``p >= 1`` keeps everything.

    Returns:
        ``[..., V]``, a new tensor: with ``probs = softmax(logits)``, token ``j`` is kept iff the total
        probability of the tokens strictly more probable than ``j`` is ``< p``. The most probable token is
        always kept; tied tokens share one fate.

    Hints:
        Sort the probabilities in descending order; the mass *before* each sorted token is its cumulative
        sum minus itself. The smallest kept probability is then a threshold to apply to the unsorted row.
    """
    if p >= 1:
        return logits.clone()
    probs = logits.softmax(dim=-1)  # (..., V)
    sorted_probs = probs.sort(dim=-1, descending=True).values  # (..., V)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs  # (..., V): probability of the tokens ahead
    kept = mass_before < p  # (..., V), a prefix of True: the first one always (mass 0 < p)
    threshold = sorted_probs.masked_fill(~kept, float("inf")).amin(dim=-1, keepdim=True)  # (..., 1)
    return logits.masked_fill(probs < threshold, float("-inf"))  # ties with the threshold stay


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    """The next token of each row: temperature, then top-k, then top-p, then one draw.

    Args:
        logits: ``[B, V]``, the last position's logits.
        temperature: ``>= 0``; 0 is greedy.
        top_k: ``None`` (off) or an int for ``top_k_filter``.
        top_p: ``None`` (off) or a float for ``top_p_filter``.
        generator: the ``torch.Generator`` to draw with (``None``: the global one).

    Returns:
        ``long [B]``. With ``temperature == 0``: the argmax of each row (lowest index among equal maxima);
        no filter, no draw. Otherwise: ``logits / temperature``, ``top_k_filter`` (if ``top_k``),
        ``top_p_filter`` (if ``top_p``), softmax, and exactly one call
        ``torch.multinomial(probs, num_samples=1, generator=generator)`` for all rows.

    Hints:
        Divide before filtering: top-p depends on the temperature. A single multinomial call on the
        ``[B, V]`` probabilities keeps the draws identical to the reference's for the same seed.
    """
    if temperature == 0:
        return logits.argmax(dim=-1)  # (B,)
    logits = logits / temperature
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = logits.softmax(dim=-1)  # (B, V), zero where filtered
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)  # (B,)


@torch.no_grad()
def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    """Extend each prompt by ``max_new_tokens`` sampled tokens, decoding incrementally with the KV cache.

    Args:
        model: a ``DecoderLM`` (``model(tokens, caches)`` and ``model.new_cache()``).
        prompt: ``long [B, L0]``, ``L0 >= 1``.
        max_new_tokens: how many tokens to add (no end-of-sequence stop).
        temperature, top_k, top_p, generator: passed to ``sample_next``.

    Returns:
        ``long [B, L0 + max_new_tokens]``: the prompt, then the new tokens, on the prompt's device.

    One forward on the whole prompt with ``caches = model.new_cache()``, then one forward per new token
    on that token alone (``[B, 1]``); the last new token is not fed back, so there are exactly
    ``max_new_tokens`` forwards. Each step calls ``sample_next`` once on the last position's logits.
    No gradients; ``model.training`` is left as it was.

    Hints:
        After the prompt, feed only the newest token: the cache supplies the rest, and the positions
        continue from its length.
    """
    caches = model.new_cache()
    tokens = [prompt]
    step_input = prompt  # (B, L0), then (B, 1)
    for _ in range(max_new_tokens):
        logits = model(step_input, caches)[:, -1]  # (B, L, V) -> (B, V): the last position
        step_input = sample_next(logits, temperature, top_k, top_p, generator)[:, None]  # (B, 1)
        tokens.append(step_input)
    return torch.cat(tokens, dim=1)  # (B, L0 + max_new_tokens)
