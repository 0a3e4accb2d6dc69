"""The decoder-only LM's toy task: classical Chinese poems, one character per token.

The shipped file ``data/poems.txt`` next to this module holds one poem per line as
``author<TAB>title<TAB>text`` (``data/README.md`` says what they are; all public domain). Only the texts are
learnt. A training row is one poem between two newline characters::

    \\n 床 前 明 月 光 ， 疑 是 地 上 霜 。 … \\n <pad> <pad> …

The leading newline is where a poem starts (a prompt of just ``\\n`` asks for a whole new poem), the
trailing one is where it ends (generation stops there), and rows shorter than the batch's longest are
right-padded with ``PAD``, which ``lm_loss(..., pad_id=PAD)`` ignores as a target.

Only ``torch`` and the standard library are needed here.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

PAD, NEWLINE = 0, 1
SPECIALS = ("<pad>", "\n")
"""Token ids 0 and 1: padding, then the newline that opens and closes every poem."""

DATA_FILE = Path(__file__).resolve().parent / "data" / "poems.txt"


@dataclass(frozen=True)
class Poem:
    """One line of the corpus file."""

    author: str
    """The poet (or the collection: ``诗经``, ``汉乐府``)."""
    title: str
    """The title."""
    text: str
    """The poem itself, punctuation included, without a newline."""


def load_poems(path: str | Path | None = None) -> list[Poem]:
    """Read ``author<TAB>title<TAB>text`` lines, skipping blank lines and ``#`` comments.

    Args:
        path: a file in that format; the shipped corpus when ``None``.

    Returns:
        the poems in file order.

    Raises:
        ValueError: on a line without exactly three tab-separated fields, or with an empty text.
    """
    path = DATA_FILE if path is None else Path(path)
    poems: list[Poem] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not fields[2].strip():
            raise ValueError(f"{path}:{lineno}: expected 'author<TAB>title<TAB>text', got {line!r}")
        poems.append(Poem(*(f.strip() for f in fields)))
    return poems


@dataclass(frozen=True)
class Vocab:
    """A character <-> id table whose first ids are ``SPECIALS`` (``PAD``, ``NEWLINE``).

    Attributes:
        itos: id -> character (``"<pad>"`` for ``PAD``, ``"\\n"`` for ``NEWLINE``).
        stoi: character -> id.
    """

    itos: tuple[str, ...]
    stoi: dict[str, int]

    @classmethod
    def build(cls, texts: Iterable[str]) -> Vocab:
        """The specials, then every distinct character of ``texts`` in code-point order."""
        chars = sorted({ch for text in texts for ch in text} - set(SPECIALS))
        itos = SPECIALS + tuple(chars)
        return cls(itos=itos, stoi={ch: i for i, ch in enumerate(itos)})

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``'s characters (a ``\\n`` in it is ``NEWLINE``).

        Raises:
            ValueError: naming the first character the vocabulary does not have.
        """
        try:
            return [self.stoi[ch] for ch in text]
        except KeyError as exc:
            raise ValueError(f"character {exc.args[0]!r} is not in the vocabulary ({len(self)} tokens)") from None

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids`` (ints or a 1-D tensor): ``PAD`` is dropped, ``NEWLINE`` is ``"\\n"``.

        Raises:
            ValueError: on an id outside ``0 .. len(self) - 1``.
        """
        out: list[str] = []
        for i in (int(i) for i in ids):
            if not 0 <= i < len(self.itos):
                raise ValueError(f"token id {i} is outside the vocabulary (0 .. {len(self.itos) - 1})")
            if i != PAD:
                out.append(self.itos[i])
        return "".join(out)


@dataclass
class PoemTask:
    """The demo's data: the poems and the vocabulary of their characters."""

    vocab: Vocab
    poems: list[Poem]

    @property
    def texts(self) -> list[str]:
        """The poems' texts, in file order."""
        return [p.text for p in self.poems]

    @property
    def max_row(self) -> int:
        """The length of the longest training row (a poem and its two newlines)."""
        return 2 + max(len(t) for t in self.texts)


def build_task(poems: Sequence[Poem] | None = None) -> PoemTask:
    """The task on ``poems`` (the shipped corpus when ``None``): every poem is trained on (a language model
    is judged here by what it writes, not by a held-out score)."""
    poems = load_poems() if poems is None else list(poems)
    if not poems:
        raise ValueError("build_task needs at least one poem")
    return PoemTask(vocab=Vocab.build(p.text for p in poems), poems=poems)


def encode_row(text: str, vocab: Vocab) -> list[int]:
    """One training row: ``NEWLINE``, the characters of ``text``, ``NEWLINE``."""
    return [NEWLINE] + vocab.encode(text) + [NEWLINE]


def make_batch(texts: Sequence[str], vocab: Vocab) -> torch.Tensor:
    """Encode poems as one padded batch.

    Returns:
        ``long [B, L]``: row ``b`` is ``encode_row(texts[b])`` right-padded with ``PAD`` to ``L``, the
        longest row's length.
    """
    if not texts:
        raise ValueError("make_batch needs at least one poem")
    rows = [encode_row(t, vocab) for t in texts]
    width = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (width - len(r)) for r in rows], dtype=torch.long)


def batches(task: PoemTask, batch_size: int, *, seed: int = 0, pool: int = 8) -> Iterator[torch.Tensor]:
    """Training batches forever, of poems of similar length (less padding, so faster steps).

    Every epoch visits every poem once: the poems are shuffled by ``random.Random(seed)``, cut into pools of
    ``pool * batch_size``, each pool sorted by length and cut into batches, and a pool's batches come in a
    shuffled order. A batch never straddles two epochs (an epoch's last short batch is dropped, unless the
    corpus is smaller than ``batch_size``). The same ``seed`` gives the same batches.

    Yields:
        ``make_batch`` tensors ``long [batch_size, L]`` (``[len(poems), L]`` when there are fewer poems).
    """
    if batch_size < 1 or pool < 1:
        raise ValueError(f"batch_size and pool must be at least 1, got batch_size={batch_size}, pool={pool}")
    rng = random.Random(seed)
    texts = task.texts
    size = min(batch_size, len(texts))
    while True:
        order = list(range(len(texts)))
        rng.shuffle(order)
        order = order[: len(order) - len(order) % size]
        for start in range(0, len(order), pool * size):
            chunk = sorted(order[start : start + pool * size], key=lambda i: len(texts[i]))
            groups = [chunk[j : j + size] for j in range(0, len(chunk), size)]
            rng.shuffle(groups)
            for group in groups:
                yield make_batch([texts[i] for i in group], task.vocab)


def first_line(text: str) -> str:
    """``text`` up to its first newline (a sampled continuation ends its poem there)."""
    return text.split("\n", 1)[0]
