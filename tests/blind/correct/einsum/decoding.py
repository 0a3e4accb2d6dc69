import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    B = src.shape[0]
    src_mask = padding_mask(src, pad_idx)
    memory = model.encode(src, src_mask)
    out = torch.full((B, 1), bos_idx, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    step = 0
    while step < max_len and not done.all():
        h = model.decode(out, memory, target_mask(out, pad_idx), src_mask)
        last = h[:, -1, :]
        logits = torch.einsum("bd,vd->bv", last, model.output_proj.weight) + model.output_proj.bias
        tok = torch.where(done, torch.full_like(done, pad_idx, dtype=torch.long), logits.argmax(-1))
        out = torch.cat((out, tok[:, None]), dim=1)
        done = done | (tok == eos_idx)
        step += 1
    return out
