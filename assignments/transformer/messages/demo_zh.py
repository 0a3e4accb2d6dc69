"""拼音演示并排对照（``gradekit demo --submission``）的中文消息。键与 ``demo_en.py`` 相同。"""

MESSAGES = {
    "demo.pinyin.col_pinyin": "拼音",
    "demo.pinyin.col_expected": "正确答案",
    "demo.pinyin.exact": "{n} 个留出短语的完全匹配：你的 {yours}/{n}（{yours_pct}%），参考实现 {reference}/{n}（{reference_pct}%）。",
}
