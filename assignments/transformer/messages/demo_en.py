"""English sentences of the pinyin demo's side-by-side view (``gradekit demo --submission``)."""

MESSAGES = {
    "demo.pinyin.col_pinyin": "pinyin",
    "demo.pinyin.col_expected": "expected",
    "demo.pinyin.exact": "Exact match on {n} held-out phrases: yours {yours}/{n} ({yours_pct}%), the reference "
    "{reference}/{n} ({reference_pct}%).",
}
