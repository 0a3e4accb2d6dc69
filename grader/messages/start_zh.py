"""``gradekit start``：学生自己的一份存根代码（``grader.start``）的中文消息。"""

MESSAGES = {
    "start.refused": "{path} 已经存在，而且不是空文件夹：gradekit start 只写入新的或空的文件夹，绝不覆盖你的作业。"
    "请换一个新的文件夹名。",
    "start.refused_file": "{path} 已经存在：gradekit start 绝不覆盖你的作业。请换一个新的笔记本文件名。",
    "start.no_skeleton": "作业 {assignment} 在这里没有存根文件夹（{path}）：没有可复制的存根代码。",
    "start.wrote": "已写入 {path}：作业 {assignment} 的存根代码（{files} 个文件）。",
    "start.wrote_notebook": "已写入 {path}：作业 {assignment} 的入门笔记本（每个任务的存根代码各占一个代码单元格，"
    "后面跟着检查它的单元格）。",
    "start.wrote_contract": "契约（要遵循的名称、签名和约定）在 {path}。",
    "start.fill_in": "接下来，按照契约和文档字符串，补全每一个抛出 NotImplementedError 的函数，然后：",
    "start.fill_in_notebook": "接下来，在 Jupyter 中打开它（或上传到 Colab），运行准备单元格，逐个完成任务，"
    "并运行每个任务后面的检查单元格。保存后，这个笔记本可以作为提交来评分：",
    "start.next_check": "为它评分（quick 配置：快速反馈）：",
    "start.next_watch": "或者让它在每次保存时重新评分（按 Ctrl-C 停止）：",
    "start.next_check_notebook": "为保存的笔记本评分：",
}
