import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    batch = src.shape[0]
    src_mask = padding_mask(src, pad_idx)
    memory = model.encode(src, src_mask)
    out = torch.full((batch, 1), bos_idx, dtype=torch.long, device=src.device)
    finished = torch.zeros(batch, dtype=torch.bool, device=src.device)
    step = 0
    while step < max_len:
        hidden = model.decode(out, memory, target_mask(out, pad_idx), src_mask)
        logits = model.output_proj(hidden[:, -1, :])
        nxt = logits.argmax(-1)
        nxt[finished] = pad_idx
        out = torch.cat((out, nxt[:, None]), dim=1)
        finished = finished | (nxt == eos_idx)
        step += 1
        if bool(finished.all()):
            break
    return out
