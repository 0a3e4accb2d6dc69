import torch


def top_k_filter(logits, k):
    if k >= logits.shape[-1]:
        return logits.clone()
    threshold = torch.kthvalue(-logits, k, dim=-1, keepdim=True).values.neg()
    return logits.masked_fill(logits < threshold, float("-inf"))


def top_p_filter(logits, p):
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits.to(torch.promote_types(logits.dtype, torch.float32)), dim=-1)
    srt = probs.sort(dim=-1, descending=True).values
    exclusive = srt.cumsum(-1) - srt
    cut = srt.masked_fill(exclusive >= p, float("inf")).min(dim=-1, keepdim=True).values
    return logits.masked_fill(probs < cut, float("-inf"))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(-1)
    x = logits.div(temperature)
    if top_k is not None:
        x = top_k_filter(x, top_k)
    if top_p is not None:
        x = top_p_filter(x, top_p)
    probs = torch.softmax(x.to(torch.promote_types(x.dtype, torch.float32)), dim=-1)
    return torch.multinomial(probs, num_samples=1, generator=generator).flatten()


def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    """Runs on the model's device (next(model.parameters())) in eval() and inference mode; the training flag
    is restored; the result goes back to the prompt's device."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            tokens = prompt.to(device)
            if max_new_tokens == 0:
                return prompt.clone()
            caches = model.new_cache()
            logits = model(tokens, caches)
            generated = []
            while True:
                nxt = sample_next(logits[:, -1], temperature, top_k, top_p, generator)
                generated.append(nxt)
                if len(generated) == max_new_tokens:
                    break
                logits = model(nxt[:, None], caches)
            return torch.cat([tokens, torch.stack(generated, dim=1)], dim=1).to(prompt.device)
    finally:
        model.train(was_training)
