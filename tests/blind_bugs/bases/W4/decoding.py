import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    src_mask = padding_mask(src, pad_idx)
    memory = model.encode(src, src_mask)
    batch = src.size(0)
    out = torch.full((batch, 1), bos_idx, dtype=torch.long, device=src.device)
    finished = torch.zeros(batch, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        hidden = model.decode(out, memory, target_mask(out, pad_idx), src_mask)
        logits = model.output_proj(hidden[:, -1])
        nxt = logits.argmax(dim=-1)
        nxt = torch.where(finished, torch.full_like(nxt, pad_idx), nxt)
        out = torch.cat([out, nxt.unsqueeze(1)], dim=1)
        finished = finished | (nxt == eos_idx)
        if bool(finished.all()):
            break
    return out
