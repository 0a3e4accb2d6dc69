"""中文：检查如何适应提交（说明），以及公平性检查。"""

MESSAGES = {
    "note.partly_isolated": "你的 {task} 代码没有使用约定中的 {names}（它有自己的实现）：本项检查也评了你自己的这部分，而不是参考实现。",
    "note.charged_beneath_whole": "使用你自己的部件时失败；把 {parts} 换成参考实现、其余仍用你的代码后通过：问题出在 {tasks}，"
                                  "已在那里扣分，这里不再扣分。",
    "note.charged_beneath": "使用你自己的下层部件时失败，换成参考实现的部件后通过：问题出在 {tasks}，已在那里扣分，这里不再扣分。",
    "note.not_isolated": "改用你自己的各部分评分：在参考实现的部件之上运行时，你的代码报错"
                         "（{detail}；{file}:{line}），因为它依赖自己部件上某个约定之外的属性。下层部件中的错误也会"
                         "在这里显现；该错误由其所属任务指出。",
    "note.float32_inside": "{what} 与 float64 参考实现的差异不超过一次 float32 计算的舍入（在 float32 中计算统计量再转回原 dtype）：按 float32 精度比较。",
    "note.zero_bias": "{what} 没有 {names}：比较时把参考实现中的对应参数设为零（缺少的参数只在约定检查中扣分一次）。",
    "note.output_dropped": "有 {n} 次调用打印的内容超过输出上限，超出部分已丢弃（打印不扣分）。",
    "fail.defaults": "{what} 不传 {argument} 时的行为与约定的默认值 {argument}={default} 不同：{detail}",
    "fail.defaults_spelled": "{what} 不传 {arguments} 时，与显式传入约定默认值（{defaults}）时的行为不同：{detail}",
    "fail.default_left_out": "调用 {what} 时不传 {argument}，结果与传入约定默认值 {argument}={default} 时不同（输入与随机种子相同）："
                             "{where} 不传时为 {got}，传入时为 {expected}（{count} 不同）。",
    "fail.default_left_out_raised": "调用 {what} 时不传 {argument}（约定默认值为 {argument}={default}）抛出了异常：{detail}",
    "fail.dropout_zero": "{what} 以 dropout=0.0 构造并处于 train() 模式时，输出与 eval() 不同：某个 dropout 没有使用 "
                         "dropout 参数（写死了概率？）。",
    "check.defaults": "构造函数的默认值符合约定",
}
