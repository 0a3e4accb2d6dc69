import torch


def top_k_filter(logits, k):
    kth = logits.topk(min(k, logits.shape[-1]), dim=-1).values.min(dim=-1, keepdim=True).values
    out = logits.clone()
    out[logits < kth] = float("-inf")
    return out


def top_p_filter(logits, p):
    out = logits.clone()
    if p >= 1:
        return out
    probs = torch.softmax(logits.double(), dim=-1).to(torch.float64 if logits.dtype == torch.float64
                                                       else torch.float32)
    desc, _ = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(desc, dim=-1) - desc
    floor = torch.where(before < p, desc, torch.ones_like(desc) * 2).min(dim=-1, keepdim=True).values
    out[probs < floor] = float("-inf")
    return out


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if not temperature:
        return torch.argmax(logits, dim=-1)
    z = logits / temperature
    z = z if top_k is None else top_k_filter(z, top_k)
    z = z if top_p is None else top_p_filter(z, top_p)
    return torch.multinomial(torch.softmax(z.float() if z.dtype in (torch.float16, torch.bfloat16) else z, -1),
                             num_samples=1, generator=generator).view(-1)


def _new_tokens(model, prompt, max_new_tokens, temperature, top_k, top_p, generator):
    """A generator of the new tokens: the prompt through model.forward with fresh caches, then each token."""
    caches = model.new_cache()
    logits = model.forward(prompt, caches=caches)
    for i in range(max_new_tokens):
        token = sample_next(logits[:, -1], temperature=temperature, top_k=top_k, top_p=top_p, generator=generator)
        yield token
        if i + 1 < max_new_tokens:
            logits = model.forward(token.view(-1, 1), caches=caches)


def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    with torch.no_grad():
        new = list(_new_tokens(model, prompt, max_new_tokens, temperature, top_k, top_p, generator)) \
            if max_new_tokens > 0 else []
        return torch.cat([prompt] + [t.to(prompt.device).unsqueeze(-1) for t in new], dim=-1)
