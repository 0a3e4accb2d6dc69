import torch


def top_k_filter(logits, k):
    if k >= logits.shape[-1]:
        return logits.clone()
    threshold = logits.topk(k, dim=-1).values.amin(dim=-1, keepdim=True)
    return torch.where(logits >= threshold, logits, torch.full_like(logits, float("-inf")))


def top_p_filter(logits, p):
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits.to(torch.float32), dim=-1)
    sp, _ = probs.sort(dim=-1, descending=True)
    cum = sp.cumsum(dim=-1)
    keep = (cum - sp) < p
    keep[..., 0] = True
    kept_min = torch.where(keep, sp, torch.ones_like(sp)).amin(dim=-1, keepdim=True)
    return torch.where(probs >= kept_min, logits, torch.full_like(logits, float("-inf")))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    z = logits / temperature
    if top_k is not None:
        z = top_k_filter(z, top_k)
    if top_p is not None:
        z = top_p_filter(z, top_p)
    probs = torch.softmax(z, dim=-1)
    idx = torch.multinomial(probs, num_samples=1, generator=generator)
    return idx.reshape(logits.shape[0])


@torch.no_grad()
def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    out = prompt.clone()
    if max_new_tokens <= 0:
        return out
    caches = model.new_cache()
    logits = model(prompt, caches)
    for step in range(max_new_tokens):
        token = sample_next(logits[:, -1], temperature, top_k, top_p, generator).to(prompt.device)
        out = torch.cat([out, token.unsqueeze(-1)], dim=-1)
        if step + 1 < max_new_tokens:
            logits = model(out[:, -1:], caches)
    return out
