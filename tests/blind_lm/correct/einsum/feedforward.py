import torch
import torch.nn.functional as F
from torch import nn


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden_dim, bias=False)
        self.up_proj = nn.Linear(dim, hidden_dim, bias=False)
        self.down_proj = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x):
        g = torch.einsum("...d,fd->...f", x, self.gate_proj.weight)
        u = torch.einsum("...d,fd->...f", x, self.up_proj.weight)
        return torch.einsum("...f,df->...d", F.silu(g) * u, self.down_proj.weight)
