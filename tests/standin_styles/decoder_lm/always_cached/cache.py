"""A cache that keeps the appended chunks and joins them only when keys or values are read."""

import torch


class KVCache:
    def __init__(self):
        self._key_chunks = []
        self._value_chunks = []

    @staticmethod
    def _joined(chunks):
        if not chunks:
            return None
        if len(chunks) > 1:
            chunks[:] = [torch.cat(chunks, dim=2)]
        return chunks[0]

    @property
    def keys(self):
        return self._joined(self._key_chunks)

    @property
    def values(self):
        return self._joined(self._value_chunks)

    @property
    def length(self):
        return sum(chunk.shape[2] for chunk in self._key_chunks)

    def update(self, keys, values):
        self._key_chunks.append(keys)
        self._value_chunks.append(values)
        return self.keys, self.values
