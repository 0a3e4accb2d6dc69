import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    src_mask = padding_mask(src, pad_idx)
    memory = model.encode(src, src_mask)
    b = src.size(0)
    ys = torch.full((b, 1), bos_idx, dtype=torch.long, device=src.device)
    done = torch.zeros(b, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        out = model.decode(ys, memory, target_mask(ys, pad_idx), src_mask)
        logits = model.output_proj(out[:, -1])
        nxt = logits.argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad_idx), nxt)
        ys = torch.cat([ys, nxt[:, None]], dim=1)
        done = done | (nxt == eos_idx)
        if bool(done.all()):
            break
    return ys
