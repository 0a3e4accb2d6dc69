import torch


def top_k_filter(logits, k):
    k = min(k, logits.shape[-1])
    values, _ = torch.topk(logits, k, dim=-1, sorted=True)
    cutoff = values[..., k - 1 : k]
    filtered = logits.clone()
    filtered[filtered < cutoff] = -float("inf")
    return filtered


def top_p_filter(logits, p):
    if p >= 1:
        return logits.clone()
    probs = logits.float().softmax(dim=-1)
    sorted_probs, sorted_idx = probs.sort(dim=-1, descending=True)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    drop_sorted = mass_before >= p
    drop_sorted[..., 0] = False
    drop = drop_sorted.scatter(-1, sorted_idx, drop_sorted)
    # tied tokens share one fate: keep everything at least as probable as the least probable kept token
    least_kept = probs.masked_fill(drop, float("inf")).amin(dim=-1, keepdim=True)
    drop = probs < least_kept
    return logits.masked_fill(drop, -float("inf"))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(dim=-1)
    logits = logits / temperature
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = logits.softmax(dim=-1)
    return torch.multinomial(probs, 1, generator=generator)[..., 0]


@torch.no_grad()
def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    caches = model.new_cache()
    seq = prompt
    for i in range(max_new_tokens):
        inp = seq if i == 0 else seq[:, -1:]
        logits = model(inp, caches)
        nxt = sample_next(logits[:, -1, :], temperature=temperature, top_k=top_k, top_p=top_p, generator=generator)
        seq = torch.cat((seq, nxt.unsqueeze(1).to(seq.device)), dim=1)
    return seq
