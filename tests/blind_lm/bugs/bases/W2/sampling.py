import torch


def top_k_filter(logits, k):
    V = logits.shape[-1]
    if k >= V:
        return logits.clone()
    kth = torch.kthvalue(logits, V - k + 1, dim=-1, keepdim=True).values  # the k-th largest
    return torch.where(logits < kth, torch.full_like(logits, float("-inf")), logits)


def top_p_filter(logits, p):
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits.double(), dim=-1)
    asc = torch.sort(probs, dim=-1).values  # ascending
    csum = torch.cumsum(asc, dim=-1)
    above = csum[..., -1:] - csum  # mass of the tokens after each one in ascending order
    kept = above < p
    threshold = torch.where(kept, asc, torch.full_like(asc, float("inf"))).min(dim=-1, keepdim=True).values
    return torch.where(probs >= threshold, logits, torch.full_like(logits, float("-inf")))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(dim=-1)
    scaled = logits / temperature
    if top_k is not None:
        scaled = top_k_filter(scaled, top_k)
    if top_p is not None:
        scaled = top_p_filter(scaled, top_p)
    probs = torch.softmax(scaled, dim=-1)
    return torch.multinomial(probs, num_samples=1, generator=generator).view(-1)


@torch.no_grad()
def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    B, L0 = prompt.shape
    out = prompt.new_empty(B, L0 + max_new_tokens)
    out[:, :L0] = prompt
    caches = model.new_cache()
    step_input = prompt
    for t in range(L0, L0 + max_new_tokens):
        logits = model(step_input, caches)
        out[:, t] = sample_next(logits[:, -1, :], temperature, top_k, top_p, generator).to(out.device)
        step_input = out[:, t : t + 1]
    return out
