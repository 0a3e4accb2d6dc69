"""小型作业的中文消息。"""

MESSAGES = {
    "fail.tiny_rows_sum": "{what}：输出的某一行之和为 {total}，而不是 1（第 {row} 行）。",
    "fail.tiny_shift": "{what}(x + {shift}) 与 {what}(x) 不同，或含有非有限值：给一行的每个元素加上同一个常数，softmax 不应改变。",
    "bug.softmax.no_max_shift": "stable_softmax 直接对 x 取指数：较大的元素溢出为 inf，inf / inf 得到 NaN。",
    "bughint.softmax.no_max_shift": "在 exp() 之前先减去每一行的最大值（x.max(dim=-1, keepdim=True).values）。",
    "bug.softmax.sum_all": "stable_softmax 除以的是整个张量的和，而不是每一行的和。",
    "bughint.softmax.sum_all": "只在最后一维上求和：e.sum(dim=-1, keepdim=True)。",
    "bug.attend.no_proj": "Attend 没有使用它的 proj 层：得分成了 x @ x^T。",
    "bughint.attend.no_proj": "得分应为 self.proj(x) @ x.transpose(-2, -1)。",
}
