"""The polynomial network as a PyTorch ``nn.Module`` (optional: ``pip install 'margintheory[torch]'``).

:class:`PolyNet` holds parameters ``U`` ``(m, k, p)`` and ``W`` ``(m, p)`` - the names and shapes of this package's
network files, so ``torch.save(model.state_dict(), "net.pt")`` is read back by
:meth:`margintheory.core.network.PolyNetwork.load` (without torch) and verified by ``margintheory verify --network``.
``forward(a)`` computes ``f(a)[c] = sum_i (U[i,0,a_1] + ... + U[i,k-1,a_k])^k W[i,c]`` (the network of Li, Liang,
Shi, Song, Zhou, "Fourier circuits in neural networks", arXiv:2402.09469, Section 3; ``k = 2`` is Morwani et al.,
arXiv:2311.07568) for a batch of integer inputs ``a`` of shape ``(batch, k)``.

Only this module imports torch; the rest of the package never does.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from margintheory.core.network import PolyNetwork

__all__ = ["PolyNet"]


class PolyNet(nn.Module):
    """``m`` neurons, ``k`` inputs, modulus ``p``; parameters ``U`` ``(m, k, p)`` and ``W`` ``(m, p)``."""

    def __init__(self, m: int, k: int, p: int, *, dtype: torch.dtype = torch.float64,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.k, self.p = int(k), int(p)
        self.U = nn.Parameter(torch.randn(m, k, p, dtype=dtype, generator=generator) / np.sqrt(p))
        self.W = nn.Parameter(torch.randn(m, p, dtype=dtype, generator=generator) / np.sqrt(p))

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, p)`` of integer inputs ``a`` ``(batch, k)`` with entries in ``0..p-1``."""
        if a.ndim != 2 or a.shape[1] != self.k:
            raise ValueError(f"inputs must have shape (batch, {self.k}), got {tuple(a.shape)}")
        hidden = sum(self.U[:, j, a[:, j]] for j in range(self.k))  # (m, batch)
        return (hidden**self.k).T @ self.W

    def norm(self) -> torch.Tensor:
        """``||theta||_{2,k+1} = (sum_i ||theta_i||_2^(k+1))^(1/(k+1))`` (differentiable)."""
        r = torch.sqrt((self.U**2).sum(dim=(1, 2)) + (self.W**2).sum(dim=1))
        return (r ** (self.k + 1)).sum() ** (1.0 / (self.k + 1))

    @classmethod
    def from_network(cls, net: PolyNetwork, *, dtype: torch.dtype = torch.float64) -> PolyNet:
        """A module holding ``net``'s weights (copied)."""
        model = cls(net.m, net.k, net.p, dtype=dtype)
        with torch.no_grad():
            model.U.copy_(torch.from_numpy(net.U))
            model.W.copy_(torch.from_numpy(net.W))
        return model

    def to_network(self) -> PolyNetwork:
        """The weights as a :class:`~margintheory.core.network.PolyNetwork` (float64 copies, on the CPU)."""
        U = self.U.detach().to("cpu", torch.float64).numpy().copy()
        W = self.W.detach().to("cpu", torch.float64).numpy().copy()
        return PolyNetwork(U, W)
