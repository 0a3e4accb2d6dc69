"""古诗演示并排对照（``gradekit demo --assignment decoder_lm --submission``）的中文消息。键与 ``demo_en.py`` 相同。"""

MESSAGES = {
    "demo.poems.sampled": "每个首字各写一首，采样方式相同（温度 0.8、top-k 20、top-p 0.9、同一随机种子、使用 KV 缓存）：",
    "demo.poems.first_loss": "第一步的损失：你的 {yours}，参考实现 {reference}（未训练的模型应接近 ln V = {ln_v}）。",
}
