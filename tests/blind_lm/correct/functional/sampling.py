import torch


def top_k_filter(logits, k):
    k = min(int(k), logits.size(-1))
    threshold = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < threshold, -float("inf"))


def top_p_filter(logits, p):
    if p >= 1:
        return logits.clone()
    probs = logits.float().softmax(-1)
    sorted_probs = probs.sort(-1, descending=True).values
    mass_before = sorted_probs.cumsum(-1) - sorted_probs  # non-decreasing
    p_t = torch.full((*mass_before.shape[:-1], 1), float(p), dtype=mass_before.dtype, device=logits.device)
    n_keep = torch.searchsorted(mass_before.contiguous(), p_t, side="left").clamp(min=1)
    smallest = sorted_probs.gather(-1, n_keep - 1)
    return logits.masked_fill(probs < smallest, -float("inf"))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(dim=-1)
    logits = logits / temperature
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(1)


@torch.no_grad()
def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    tokens = [prompt]
    caches = model.new_cache()
    feed = prompt
    remaining = max_new_tokens
    while remaining > 0:
        last = model(feed, caches)[:, -1, :]
        nxt = sample_next(last, temperature, top_k, top_p, generator)[:, None].to(prompt.device)
        tokens.append(nxt)
        feed = nxt
        remaining -= 1
    return torch.cat(tokens, dim=1)
