import torch

NEG_INF = float("-inf")


def top_k_filter(logits, k):
    V = logits.shape[-1]
    if k >= V:
        return logits.clone()
    desc = torch.sort(logits, dim=-1, descending=True).values
    kth = desc[..., k - 1 : k]
    return torch.where(logits >= kth, logits, torch.full_like(logits, NEG_INF))


def top_p_filter(logits, p):
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits.double(), dim=-1)
    asc, _ = torch.sort(probs, dim=-1)  # ascending
    above = probs.sum(-1, keepdim=True) - torch.cumsum(asc, dim=-1)  # mass after each in ascending order
    keep = above < p  # a suffix of the ascending order
    smallest_kept = torch.where(keep, asc, torch.full_like(asc, 2.0)).min(dim=-1, keepdim=True).values
    return torch.where(probs >= smallest_kept, logits, torch.full_like(logits, NEG_INF))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    scaled = logits / temperature
    if top_k is not None:
        scaled = top_k_filter(scaled, top_k)
    if top_p is not None:
        scaled = top_p_filter(scaled, top_p)
    probs = scaled.softmax(dim=-1)
    return torch.multinomial(probs, num_samples=1, generator=generator)[:, 0]


@torch.no_grad()
def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    B, L0 = prompt.shape
    seq = torch.empty(B, L0 + max_new_tokens, dtype=prompt.dtype, device=prompt.device)
    seq[:, :L0] = prompt
    caches = model.new_cache()
    for n in range(max_new_tokens):
        inp = seq[:, :L0] if n == 0 else seq[:, L0 + n - 1 : L0 + n]
        logits = model(inp, caches)[:, -1]
        seq[:, L0 + n] = sample_next(logits, temperature, top_k, top_p, generator).to(seq.device)
    return seq
