"""学生工具包（``grader.kit``、``gradekit kit``）的中文消息：工具包只带有从参考实现记录下来的答案，不带参考实现。"""

MESSAGES = {
    "kit.readme": "## {title}：学生工具包\n\n"
    "作业 `{assignment}` 的自查工具（gradekit {version}）。它不带参考实现：它对照从参考实现记录下来的答案为你的代码评分，"
    "每份报告都会注明这一点。\n\n"
    "### 安装\n\n"
    "- `pip install {wheel}`（wheel 文件），或者 `pip install` 课程给出的 wheel 网址。\n"
    "- 或者解压 `{zip}`，在它的文件夹 `{folder}/` 中，把本页的 `gradekit` 换成 `python -m grader` 运行。\n"
    "- 在 Jupyter 或 Colab 中：在单元格里 `%pip install` 课程给出的 wheel 网址。\n\n"
    "### 做作业\n\n"
    "1. `gradekit start my_work`：新建文件夹 `my_work/`，里面是存根代码（工具包中的 `{skeleton}`）和契约 "
    "`CONTRACT.md`。\n"
    "2. 按照契约和文档字符串，补全每一个抛出 `NotImplementedError` 的函数。\n"
    "3. `gradekit check my_work --profile quick`：给出得分；对每个未通过的检查，给出原因、最小的失败样例，以及只重新运行该检查的命令。\n"
    "4. `gradekit watch my_work`：同样的检查，每次保存时重新运行（按 Ctrl-C 停止）。\n\n"
    "在笔记本中：`gradekit start my_work.ipynb --notebook` 写出入门笔记本，每个任务一个代码单元格，后面跟着它的检查单元格。"
    '在任何笔记本中，先 `from grader import notebook as gk`，再 `gk.check("{task}")` 为内核运行过的代码中的该任务评分，'
    "并把报告显示在单元格中；`gk.check_all()` 为所有任务评分。\n\n"
    '中文消息：在任何命令后加上 `--lang zh`（笔记本中用 `gk.check("{task}", lang="zh")`）。\n\n'
    "这是自查，不是成绩：最终成绩由教师用完整工具包评定，它还会用本工具包没有的样例评分；本工具包无法判定的检查会标为未判定："
    "在这里不得分，但也不算丢分，由最终评分评判。",
    "kit.needs_reference": "{door} 需要参考实现，而这是学生工具包：它只带有从参考实现记录下来的答案，不带参考实现本身。请在教师的完整工具包中运行 {door}。",
    "kit.profile_not_recorded": "这个学生工具包只带有 {recorded} 档位的记录答案，没有 {profile} 档位的；请加上 --profile {first} 评分。",
    "kit.banked": "本次评分对照的是从参考实现记录下来的答案（学生工具包，不带参考实现）：这些答案无法判断的检查标为“未评判”：它在本次得分中不得分，但也不算丢分。最终成绩由教师用完整工具包评定。",
    "kit.unjudged": "总分 {max_score} 分中有 {points} 分属于这个工具包在这里无法评判的检查（未评判）：本次得分中这些分数为零，但并未丢失，由最终评分评判。",
    "kit.unjudged_short": "{points} 分属于这里未评判的检查（由最终评分评判）",
    "kit.answers": "答案",
    "kit.answers_banked": "从参考实现记录而来（学生工具包）",
    "kit.quiz_choice_only": "这个学生工具包不带参考实现，因此答案要由参考实现算出的题目已略去。",
    "kit.cli.recording": "[{i}/{n}] 在 {name} 上记录 {profile} 档位的答案",
    "kit.cli.bank": "答案库：{answers} 个答案，另有已知错误答案的 {prints} 个指纹（工具包据此指出错误名称），档位 {profiles}",
    "kit.cli.built": "{path}：{files} 个文件，{size} MB",
    "kit.cli.whole_kept": "已保留参考实现在 {over} 的部件上的 {task} 运行记录（{profile} 档位）：张量共 {size} MB，"
    "未超过 --whole-run-mb {limit}",
    "kit.cli.whole_empty": "参考实现在 {over} 的部件上的 {task} 运行（{profile} 档位）没有记录到任何张量：无需保留",
    "kit.cli.whole_left": "未保留参考实现在 {over} 的部件上的 {task} 运行记录（{profile} 档位）：张量共 {size} MB，"
    "超过 --whole-run-mb {limit}；{task} 需要 {over} 的部件来弥补下层任务时，工具包将其标为“未评判”"
    "（设为 --whole-run-mb {need} 即可保留）",
    "kit.cli.scan_clean": "{path}：没有发现参考实现（检查了 {files} 个文件）",
    "kit.cli.scan_found": "{path}：发现 {n} 处问题：工具包不得带有参考实现、编译后的代码或序列化（pickle）数据",
    "kit.cli.refused": "工具包没有写出：检查发现了工具包不得带有的内容（见上面列出的问题）",
    "kit.cli.no_kits": "{path}：没有可检查的工具包（应为 .whl 或 .zip 文件，或含有这些文件的文件夹）",
    "kit.finding.same_code": "{member}：{name} 就是参考实现的 {ref}",
    "kit.finding.renamed": "{member}：{name} 就是参考实现的 {ref}，只是改了名字",
    "kit.finding.line": "{member} 第 {line} 行：参考实现 {ref} 中的一行：{text}",
    "kit.finding.packed": "{member}：压缩内容中含有参考实现 {ref} 中的一行：{text}",
    "kit.finding.compiled": "{member}：编译后的 Python 代码",
    "kit.finding.pickle": "{member}：序列化数据（pickle、torch.save 或 TorchScript）",
    "kit.finding.suffix": "{member}：{suffix} 文件（编译后的代码、pickle 或保存的权重）",
    "kit.finding.secret": "{member}：含有最终评分所用保留例子的课程密钥（请把课程配置和密钥文件放在作业文件夹之外）",
    "kit.finding.unreadable": "{member}：无法解析的 Python 代码，因此无法与参考实现比较（{detail}）",
}
