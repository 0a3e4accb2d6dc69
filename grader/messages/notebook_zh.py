"""Chinese messages of notebooks (``notebook.*``): see ``notebook_en.py``."""

MESSAGES = {
    # -- grading a notebook (grader.submission.ipynb) -----------------------------------------------------------
    "notebook.unreadable": "无法把 {notebook} 读作 Jupyter 笔记本（{detail}）；需要由 Jupyter 或 Colab 保存的 .ipynb 文件。",
    "notebook.code_in.execution": "这里评分的代码在 {notebook} 的单元格 [{cell}] 中：{names}。",
    "notebook.code_in.position": "这里评分的代码在 {notebook} 自上而下第 {cell} 个代码单元格中：{names}。",
    "notebook.error_at.execution": "出错位置：{notebook} 的单元格 [{cell}]，第 {line} 行。",
    "notebook.error_at.position": "出错位置：{notebook} 自上而下第 {cell} 个代码单元格，第 {line} 行。",
    "notebook.not_defined": "{notebook} 中没有任何单元格定义 {names}。",
    # -- checks from inside a notebook (grader.notebook) -----------------------------------------------------------
    "notebook.this": "本笔记本",
    "notebook.no_kernel": "gk.check() 评的是正在运行的笔记本里的代码，但这里没有：请在 Jupyter 或 Colab 的单元格中运行"
    "（要评文件夹里的文件，请用 gradekit check 文件夹）。",
    "notebook.unknown_task": "没有任务 {task!r}；可选的任务有：{tasks}。",
    # -- the starter notebook (grader.notebook_starter) ------------------------------------------------------------
    "notebook.starter.title": "# {title}：入门笔记本\n\n"
    "在每段说明下方的代码单元格里写出对应部分，运行它，再运行紧随其后的检查单元格：它会评判本笔记本中"
    "定义的代码，并把报告显示在单元格下方。",
    "notebook.starter.setup": "## 准备\n\n在 Colab 上（或任何尚未安装 gradekit 的地方），把课程给出的 wheel 网址填入下一个"
    "单元格，去掉行首的 `#`，运行一次即可安装（从仓库的克隆安装：用克隆的文件夹代替网址）；已经"
    "安装了 gradekit 就跳过它。然后运行导入单元格：导入各个桩代码用到的模块和检查工具（`gk`）。",
    "notebook.starter.task": "## 任务 `{task}`：{names}",
    "notebook.starter.whole": "## 任务 `{task}`\n\n整个模型的实战：它学习几个样本，再把它们解码出来。上面的任务全部通过后再运行它。",
}
