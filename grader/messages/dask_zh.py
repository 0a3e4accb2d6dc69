"""在 Dask 上批量评分（``grader.batch.distributed``）以及批量评分进度行的中文语句。"""

MESSAGES = {
    "dask.missing": "--scheduler 需要 Dask，但本机未安装：pip install 'gradekit[dask]'",
    "dask.bad_scheduler": "无法识别 --scheduler {value!r}；应为 local:N（在本机启动 N 个工作进程，N >= 1），"
                          "或 Dask 调度器的地址，例如 tcp://host:8786",
    "dask.dashboard": "Dask 仪表盘（按学生列出评分任务）：{link}",
    "dask.not_sealed": "警告：Dask 工作节点 {workers} 不是以 root 身份运行，被评分的代码在那里以该用户的身份运行、"
                       "没有隔离环境：它能读取该用户能读取的一切，包括参考实现。要给出正式成绩，请以 root 身份运行工作节点"
                       "（见 docs/CLUSTER.md）。",
    "dask.detail.no_start": "评分进程未能在 Dask 工作节点上启动",
    "dask.detail.late": "评分进程已停止，或用时超过 {seconds} 秒",
    "dask.detail.worker_died": "为它评分的 Dask 工作节点先后终止了 {n} 次（已在 {n} 个工作节点上尝试）",
    "dask.detail.task": "评分任务在 Dask 工作节点上两次失败：{error}",
    "dask.detail.other_grader": "Dask 工作节点 {worker} 使用的 gradekit 或作业版本不同（{theirs}；本次批量评分：{ours}）；"
                                "请在每个工作节点上安装相同的版本",
    "batch.progress.rate": "每分钟 {rate} 份",
    "batch.progress.left": "剩余 {time}",
}
