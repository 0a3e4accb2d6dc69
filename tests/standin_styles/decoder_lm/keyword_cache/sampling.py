import torch


def top_k_filter(logits, k):
    k = min(int(k), logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits, p):
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits, dim=-1)
    ordered = torch.sort(probs, dim=-1, descending=True).values
    before = ordered.cumsum(dim=-1) - ordered
    kept = before < p
    smallest = torch.where(kept, ordered, torch.full_like(ordered, float("inf"))).amin(dim=-1, keepdim=True)
    return logits.masked_fill(probs < smallest, float("-inf"))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(dim=-1)
    logits = logits / temperature
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    work = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    probs = torch.softmax(work, dim=-1)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)


@torch.no_grad()
def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    """model.new_cache(), the prompt once, then one token at a time; sample_next called by keyword."""
    pieces = [prompt]
    if max_new_tokens <= 0:
        return torch.cat(pieces, dim=1)
    caches = model.new_cache()
    logits = model(prompt, caches=caches)
    for step in range(max_new_tokens):
        token = sample_next(logits[:, -1, :], temperature=temperature, top_k=top_k, top_p=top_p,
                            generator=generator)
        token = token.to(prompt.device).unsqueeze(1)
        pieces.append(token)
        if step + 1 < max_new_tokens:
            logits = model(token, caches=caches)
    return torch.cat(pieces, dim=1)
