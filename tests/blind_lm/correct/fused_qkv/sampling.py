import torch
import torch.nn.functional as F


def top_k_filter(logits, k):
    V = logits.size(-1)
    if k >= V:
        return logits.clone()
    # k-th largest = (V - k + 1)-th smallest
    kth = torch.kthvalue(logits, V - k + 1, dim=-1, keepdim=True).values
    out = logits.clone()
    out[out < kth] = float("-inf")
    return out


def top_p_filter(logits, p):
    if p >= 1.0:
        return logits.clone()
    probs = F.softmax(logits.float(), dim=-1)
    srt = probs.sort(dim=-1, descending=True).values
    cum = srt.cumsum(dim=-1)
    mass_before = torch.cat([torch.zeros_like(cum[..., :1]), cum[..., :-1]], dim=-1)
    n_keep = (mass_before < p).sum(dim=-1, keepdim=True).clamp(min=1)
    threshold = srt.gather(-1, n_keep - 1)
    out = logits.clone()
    out[probs < threshold] = float("-inf")
    return out


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(-1)
    x = logits / temperature
    if top_k is not None:
        x = top_k_filter(x, top_k)
    if top_p is not None:
        x = top_p_filter(x, top_p)
    return torch.multinomial(F.softmax(x, dim=-1), num_samples=1, generator=generator).view(-1)


@torch.no_grad()
def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    caches = model.new_cache()
    new_tokens = []
    x = prompt
    for _ in range(max_new_tokens):
        logits = model(x, caches)
        tok = sample_next(logits[:, -1, :], temperature=temperature, top_k=top_k, top_p=top_p, generator=generator)
        x = tok.view(-1, 1).to(prompt.device)
        new_tokens.append(x)
    return torch.cat([prompt] + new_tokens, dim=1)
