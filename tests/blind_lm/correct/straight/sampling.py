import torch


def top_k_filter(logits, k):
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits, p):
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits.float(), dim=-1)
    sorted_probs, _ = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_sorted = before < p
    # smallest kept probability of each row is the threshold
    masked = sorted_probs.masked_fill(~keep_sorted, float("inf"))
    threshold = masked.min(dim=-1, keepdim=True).values
    return logits.masked_fill(probs < threshold, float("-inf"))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(dim=-1)
    logits = logits / temperature
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = torch.softmax(logits.float(), dim=-1)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)


@torch.no_grad()
def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    out = prompt
    if max_new_tokens == 0:
        return prompt.clone()
    caches = model.new_cache()
    logits = model(prompt, caches)
    for i in range(max_new_tokens):
        nxt = sample_next(logits[:, -1, :], temperature, top_k, top_p, generator)
        nxt = nxt.to(prompt.device).unsqueeze(1)
        out = torch.cat([out, nxt], dim=1)
        if i < max_new_tokens - 1:
            logits = model(nxt, caches)
    return out
