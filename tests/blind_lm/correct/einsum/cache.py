class KVCache:
    """Preallocated storage that grows by fixed blocks of positions."""

    BLOCK = 32

    def __init__(self):
        self._store = None  # [2, B, Hkv, capacity, Dh]
        self._len = 0

    @property
    def length(self):
        return self._len

    @property
    def keys(self):
        return None if self._store is None else self._store[0, :, :, : self._len]

    @property
    def values(self):
        return None if self._store is None else self._store[1, :, :, : self._len]

    def update(self, keys, values):
        B, Hkv, L, Dh = keys.shape
        need = self._len + L
        if self._store is None or self._store.shape[3] < need:
            cap = -(-need // self.BLOCK) * self.BLOCK
            store = keys.new_zeros(2, B, Hkv, cap, Dh)
            if self._store is not None:
                store[:, :, :, : self._len] = self._store[:, :, :, : self._len]
            self._store = store
        self._store[0, :, :, self._len : need] = keys
        self._store[1, :, :, self._len : need] = values
        self._len = need
        return self.keys, self.values
