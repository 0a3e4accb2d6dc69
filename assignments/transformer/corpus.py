"""The pinyin -> characters toy corpus: loading, vocabularies, the train/test split, batches.

The shipped file ``data/pinyin_pairs.tsv`` next to this module (written by
``tools/make_pinyin_corpus.py``) holds short sentences as ``pinyin<TAB>characters``,
e.g. ``wo xi huan chi ping guo<TAB>我喜欢吃苹果``: one toneless syllable per character,
so source and target have the same length. The source tokens are the syllables, the
target tokens are the characters.

Only ``torch`` and the standard library are needed here.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")

DATA_FILE = Path(__file__).resolve().parent / "data" / "pinyin_pairs.tsv"

Pair = tuple[str, str]  # (pinyin, characters)


def load_pairs(path: str | Path | None = None) -> list[Pair]:
    """Read ``pinyin<TAB>characters`` lines, skipping blank lines and ``#`` comments.

    Args:
        path: a TSV file; the shipped corpus when ``None``.

    Returns:
        the pairs in file order.

    Raises:
        ValueError: on a line without exactly one tab.
    """
    path = DATA_FILE if path is None else Path(path)
    pairs: list[Pair] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise ValueError(f"{path}:{lineno}: expected 'pinyin<TAB>characters', got {line!r}")
        pairs.append((fields[0], fields[1]))
    return pairs


def src_tokens(pinyin: str) -> list[str]:
    """The source tokens of a pinyin string: its space-separated syllables."""
    return pinyin.split()


def tgt_tokens(chars: str) -> list[str]:
    """The target tokens of a character string: its characters."""
    return list(chars)


@dataclass(frozen=True)
class Vocab:
    """A token <-> id table whose first ids are ``SPECIALS`` (``PAD, BOS, EOS, UNK``).

    Attributes:
        itos: id -> token.
        stoi: token -> id.
    """

    itos: tuple[str, ...]
    stoi: dict[str, int]

    @classmethod
    def build(cls, sequences: Iterable[Sequence[str]]) -> Vocab:
        """The specials, then every distinct token of ``sequences`` in sorted order."""
        tokens = sorted({tok for seq in sequences for tok in seq} - set(SPECIALS))
        itos = SPECIALS + tuple(tokens)
        return cls(itos=itos, stoi={tok: i for i, tok in enumerate(itos)})

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: Iterable[str], *, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Token ids (``UNK`` for unknown tokens), optionally wrapped in ``BOS`` ... ``EOS``."""
        ids = [self.stoi.get(tok, UNK) for tok in tokens]
        return ([BOS] if add_bos else []) + ids + ([EOS] if add_eos else [])

    def decode(self, ids: Iterable[int], *, strip_special: bool = True) -> list[str]:
        """Tokens of ``ids`` (ints or a 1-D tensor).

        With ``strip_special`` the result stops at the first ``EOS`` and drops
        ``PAD`` and ``BOS``; ``UNK`` is kept (it stands for a real token).
        """
        out: list[str] = []
        for i in (int(i) for i in ids):
            if strip_special:
                if i == EOS:
                    break
                if i in (PAD, BOS):
                    continue
            out.append(self.itos[i] if 0 <= i < len(self.itos) else SPECIALS[UNK])
        return out


@dataclass
class PinyinTask:
    """The demo task: vocabularies built on the training pairs, and the split.

    Every source syllable and target character of ``test`` also occurs in ``train``.
    """

    src_vocab: Vocab
    tgt_vocab: Vocab
    train: list[Pair]
    test: list[Pair]


def build_task(*, holdout: float = 0.1, seed: int = 0, pairs: list[Pair] | None = None) -> PinyinTask:
    """Split the corpus deterministically into train and held-out test pairs.

    About ``holdout`` of the pairs are held out, chosen by ``random.Random(seed)``;
    a held-out pair with a syllable or character that no training pair has is moved
    back to train, so the test set only asks for tokens the model has seen.

    Args:
        holdout: fraction of pairs to hold out, in ``[0, 1)``.
        seed: the shuffle's seed.
        pairs: the corpus; the shipped one when ``None``.
    """
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"holdout must be in [0, 1), got {holdout}")
    pairs = load_pairs() if pairs is None else list(pairs)
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    n_test = round(len(pairs) * holdout)
    test_idx, train_idx = set(order[:n_test]), order[n_test:]
    train = [pairs[i] for i in sorted(train_idx)]
    src_seen = {s for p, _ in train for s in src_tokens(p)}
    tgt_seen = {c for _, c in train for c in tgt_tokens(c)}
    # Held-out pairs (in shuffled order) whose tokens all occur in train stay held out; the
    # others move to train, which may in turn make later held-out pairs coverable.
    test: list[Pair] = []
    for i in (i for i in order if i in test_idx):
        p, c = pairs[i]
        if set(src_tokens(p)) <= src_seen and set(tgt_tokens(c)) <= tgt_seen:
            test.append((p, c))
        else:
            train.append((p, c))
            src_seen.update(src_tokens(p))
            tgt_seen.update(tgt_tokens(c))
    # Moving a pair to train never removes coverage, so every kept test pair stays covered.
    return PinyinTask(
        src_vocab=Vocab.build(src_tokens(p) for p, _ in train),
        tgt_vocab=Vocab.build(tgt_tokens(c) for _, c in train),
        train=train,
        test=test,
    )


def _pad(rows: list[list[int]]) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (width - len(r)) for r in rows], dtype=torch.long)


def make_batch(pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab) -> tuple[torch.Tensor, torch.Tensor]:
    """Encode pairs as padded id tensors.

    Returns:
        ``src`` long ``[B, Ls]`` (syllable ids, right-padded with ``PAD``) and
        ``tgt`` long ``[B, Lt]`` (``BOS`` characters ``EOS``, right-padded with ``PAD``),
        with ``Ls`` / ``Lt`` the longest row.
    """
    if not pairs:
        raise ValueError("make_batch needs at least one pair")
    src = _pad([src_vocab.encode(src_tokens(p)) for p, _ in pairs])
    tgt = _pad([tgt_vocab.encode(tgt_tokens(c), add_bos=True, add_eos=True) for _, c in pairs])
    return src, tgt


def sample_pairs(n: int = 10, *, seed: int = 0) -> list[Pair]:
    """``n`` distinct pairs of the shipped corpus, the same ones for the same ``seed``.

    Used by the assignment's overfit check (learn these, then decode them back).
    """
    pairs = load_pairs()
    if not 0 <= n <= len(pairs):
        raise ValueError(f"n must be in [0, {len(pairs)}], got {n}")
    return random.Random(seed).sample(pairs, n)
