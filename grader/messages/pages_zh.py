"""Gradescope 输出和全班汇总页新增部分的中文语句。"""

MESSAGES = {
    "batch.page.all_passed": "所有学生都通过的 {n} 项检查",
    "gradescope.rerun": "在你的电脑上再次运行此项检查",
    "gradescope.your_folder": "<你的文件夹>",
    "gradescope.not_graded": "自动评分程序未能为本次提交评分。教师可以看到原因，请告知教师。",
    "gradescope.copy.name": "与参考答案的相似程度（仅教师可见）",
    "gradescope.copy.not_flagged": "未标记：代码不是参考答案的副本",
    "gradescope.copy.share": "在作业要求的主要定义中，有 {share}% 与参考答案几乎相同；各定义的相似程度（1 表示代码相同）：",
    "batch.page.rate": "通过率",
    "batch.page.axis": "得分（占满分的百分比）",
    "batch.page.similar": "彼此非常相似的提交",
    "batch.page.similar_note": "以下各组提交在忽略名称、注释和文档字符串后代码几乎相同。请先人工复核，再作任何决定。",
    "batch.page.members": "学生",
    "batch.page.likeness": "相似程度",
    "batch.page.compare": "对比",
    "batch.page.skipped": "已跳过：不是提交的条目（{n} 个）",
    "batch.page.unsealed": "有 {n} 份提交是在未封闭的子进程中评分的（它以评分用户的身份运行，没有独立用户身份的隔离环境）："
                           "这些成绩不能防范恶意提交。要得到封闭的成绩，请以 root 运行评分，或让工作进程以 root 运行。",
    "batch.page.colon": "：",
    "batch.page.all_note": "点击姓名可打开该学生的报告。",
}
