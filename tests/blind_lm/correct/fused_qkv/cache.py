import torch


class KVCache:
    """Chunks are appended to lists and joined when read."""

    def __init__(self):
        self._key_chunks = []
        self._value_chunks = []

    def _joined(self, chunks):
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
        return sum(c.shape[2] for c in self._key_chunks)

    def update(self, keys, values):
        self._key_chunks.append(keys)
        self._value_chunks.append(values)
        return self.keys, self.values
