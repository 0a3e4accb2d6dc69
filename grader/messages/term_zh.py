"""教师批改学期功能的中文语句：批量评分跳过了什么、哪些提交无法评分。"""

MESSAGES = {
    "gradescope.empty": "你的提交是空的：其中没有 .py 文件。请上传作业要求的文件（{files}）后重新提交。",
    "batch.reason.load_files": "无法导入：{files}",
    "batch.reason.empty": "空提交（没有 .py 文件）",
    "batch.skipped.hidden": "隐藏项",
    "batch.skipped.system": "系统文件夹",
    "batch.skipped.file": "不是文件夹或 .zip",
    "batch.cli.skipped": "跳过了 {n} 个不是提交的条目：{entries}",
    "batch.cli.skipped_one": "跳过了 1 个不是提交的条目：{entries}",
    "batch.cli.not_graded": "{n} 份提交无法评分：{entries}",
}
