"""Greedy decoding under torch.inference_mode(), rows' state kept in a Python list of flags."""

import torch

from .masks import padding_mask, target_mask


def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    batch = src.size(0)
    with torch.inference_mode():
        src_mask = padding_mask(src, pad_idx)
        memory = model.encode(src, src_mask)
        columns = [torch.full((batch,), bos_idx, dtype=torch.long, device=src.device)]
        done = [False] * batch
        step = 0
        while step < max_len and not all(done):
            ys = torch.stack(columns, dim=1)
            logits = model.output_proj(model.decode(ys, memory, target_mask(ys, pad_idx), src_mask))
            choice = logits[:, -1].argmax(-1).tolist()
            row_tokens = []
            for row, token in enumerate(choice):
                if done[row]:
                    token = pad_idx
                elif token == eos_idx:
                    done[row] = True
                row_tokens.append(token)
            columns.append(torch.tensor(row_tokens, dtype=torch.long, device=src.device))
            step += 1
        return torch.stack(columns, dim=1)
