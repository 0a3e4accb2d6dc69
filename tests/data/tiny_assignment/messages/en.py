"""English messages of the tiny assignment."""

MESSAGES = {
    "fail.tiny_rows_sum": "{what}: a row of the output sums to {total}, not 1 (row {row}).",
    "fail.tiny_shift": "{what}(x + {shift}) differs from {what}(x), or is not finite: softmax must not change when a "
    "constant is added to every entry of a row.",
    "bug.softmax.no_max_shift": "stable_softmax exponentiates x directly: large entries overflow to inf, and inf / inf "
    "is NaN.",
    "bughint.softmax.no_max_shift": "Subtract each row's maximum (x.max(dim=-1, keepdim=True).values) before exp().",
    "bug.softmax.sum_all": "stable_softmax divides by the sum of the whole tensor, not of each row.",
    "bughint.softmax.sum_all": "Sum over the last dimension only: e.sum(dim=-1, keepdim=True).",
    "bug.attend.no_proj": "Attend never uses its proj layer: the scores are x @ x^T.",
    "bughint.attend.no_proj": "Compute the scores as self.proj(x) @ x.transpose(-2, -1).",
}
