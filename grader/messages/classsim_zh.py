"""全班代码相似度页面（``grader.batch.classsim``）的中文文本。"""

MESSAGES = {
    "classsim.title": "全班代码相似度",
    "classsim.private": "仅供教师查看：本页并排展示学生的代码，请勿分享给任何学生。",
    "classsim.intro": "共比较 {n} 份提交。比较前已忽略变量名、注释、文档字符串和排版，并去掉了作业框架代码以及"
                      "全班大多数人都会写的代码。两份提交共有的指纹达到较小一份的 {threshold}%，且至少 "
                      "{min_shared} 个时才列出；两份提交在包括常见代码在内的整体上有 {near}% 相同时也会列出（这样人数多到"
                      "算作常见代码的抄袭群组也能被发现）。代码相似只说明值得查看，并不等于抄袭的结论。",
    "classsim.clusters": "相似群组",
    "classsim.cluster": "群组 {n}：{size} 份提交",
    "classsim.members": "成员",
    "classsim.max": "最高相似度",
    "classsim.mean": "平均相似度",
    "classsim.pairs": "相似的提交对（按相似度从高到低）",
    "classsim.pair_of": "提交",
    "classsim.score": "相似度",
    "classsim.shared": "共有指纹",
    "classsim.none": "没有哪两份提交的共同代码多到需要列出。",
    "classsim.more": "另有 {n} 对只在上表中列出，未展示代码；similarity.json 中包含全部结果。",
    "classsim.unreadable": "无法读取此文件。",
    "classsim.skipped": "未参与比较的文件：",
    "classsim.why.too_large": "文件过大",
    "classsim.why.syntax": "无法解析",
    "classsim.why.unreadable": "无法读取",
    "classsim.why.not_a_file": "不是普通文件",
    "classsim.summary.row": "群组 {n}：{size} 份提交的代码相似（最高 {top}%）",
}
