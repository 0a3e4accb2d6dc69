import torch


def top_k_filter(logits, k):
    V = logits.size(-1)
    k = min(k, V)
    sorted_logits, _ = torch.sort(logits, dim=-1, descending=True)
    kth = sorted_logits[..., k - 1].unsqueeze(-1)
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits, p):
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits.float(), dim=-1)
    sorted_probs, _ = torch.sort(probs, dim=-1, descending=True)
    cumulative = torch.cumsum(sorted_probs, dim=-1)
    before = cumulative - sorted_probs
    keep = before < p
    last_kept = keep.sum(dim=-1, keepdim=True) - 1
    threshold = torch.gather(sorted_probs, -1, last_kept)
    return logits.masked_fill(probs < threshold, float("-inf"))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    logits = logits / temperature
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = torch.softmax(logits, dim=-1)
    next_token = torch.multinomial(probs, num_samples=1, generator=generator)
    return next_token.squeeze(-1)


@torch.no_grad()
def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    tokens = prompt
    if max_new_tokens == 0:
        return tokens.clone()
    caches = model.new_cache()
    logits = model(prompt, caches)
    for i in range(max_new_tokens):
        if i == max_new_tokens - 1:
            break
        next_token = sample_next(logits[:, -1, :], temperature, top_k, top_p, generator)
        next_token = next_token.unsqueeze(1).to(prompt.device)
        tokens = torch.cat([tokens, next_token], dim=1)
        logits = model(next_token, caches)
    return tokens
