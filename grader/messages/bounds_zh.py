"""中文：报告截去提交文本之处的标记（``safetext.bound_result``）。"""

MESSAGES = {
    "ui.cut": "[…已截去 {n} 个字符]",
    "ui.cut_entries": "[…另有 {n} 项已截去]",
}
