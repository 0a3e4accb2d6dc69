import torch
import torch.nn.functional as F
from torch import nn


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.gate_proj = nn.Linear(dim, hidden_dim, bias=False)
        self.up_proj = nn.Linear(dim, hidden_dim, bias=False)
        self.down_proj = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x):
        # gate and up in one matmul
        w = torch.cat([self.gate_proj.weight, self.up_proj.weight], dim=0)  # [2F, D]
        gate, up = F.linear(x, w).split(self.hidden_dim, dim=-1)
        return self.down_proj(F.silu(gate) * up)
