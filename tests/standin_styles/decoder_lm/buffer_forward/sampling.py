import torch


def top_k_filter(logits, k):
    if k >= logits.size(-1):
        return logits.clone()
    values, _ = logits.topk(k, dim=-1)
    return torch.where(logits >= values[..., -1:], logits, torch.full_like(logits, -float("inf")))


def top_p_filter(logits, p):
    if p >= 1.0:
        return logits.clone()
    probs = logits.softmax(-1) if logits.element_size() >= 4 else logits.float().softmax(-1)
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    count = (mass_before < p).sum(dim=-1, keepdim=True)  # the kept prefix of the sorted row
    threshold = sorted_probs.gather(-1, count - 1)
    return torch.where(probs >= threshold, logits, torch.full_like(logits, -float("inf")))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    scaled = logits / temperature
    if top_k is not None:
        scaled = top_k_filter(scaled, top_k)
    if top_p is not None:
        scaled = top_p_filter(scaled, top_p)
    probs = scaled.softmax(-1) if scaled.element_size() >= 4 else scaled.float().softmax(-1)
    return torch.multinomial(probs, num_samples=1, generator=generator)[:, 0]


def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    """Switches the model to eval() for the loop and back afterwards; fills a preallocated output."""
    batch, start = prompt.shape
    out = prompt.new_empty((batch, start + max_new_tokens))
    out[:, :start] = prompt
    if max_new_tokens == 0:
        return out
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            caches = model.new_cache()
            logits = model(prompt, caches)
            for i in range(max_new_tokens):
                out[:, start + i] = sample_next(logits[:, -1, :], temperature, top_k, top_p, generator)
                if i < max_new_tokens - 1:
                    logits = model(out[:, start + i: start + i + 1], caches)
    finally:
        model.train(was_training)
    return out
