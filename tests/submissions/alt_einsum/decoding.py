"""Greedy decoding with a per-row finished list."""

import torch

from .masks import padding_mask, target_mask


def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    with torch.no_grad():
        src_mask = padding_mask(src, pad_idx)
        memory = model.encode(src, src_mask)
        n = src.shape[0]
        out = torch.full((n, 1), bos_idx, dtype=torch.long, device=src.device)
        finished = [False] * n
        step = 0
        while step < max_len and not all(finished):
            hidden = model.decode(out, memory, target_mask(out, pad_idx), src_mask)
            best = model.output_proj(hidden[:, -1, :]).argmax(-1).tolist()
            row = []
            for i, tok in enumerate(best):
                if finished[i]:
                    row.append(pad_idx)
                else:
                    row.append(tok)
                    finished[i] = tok == eos_idx
            col = torch.tensor(row, dtype=torch.long, device=src.device).unsqueeze(1)
            out = torch.cat((out, col), dim=1)
            step += 1
        return out
