"""学生工具包（``grader.kit``、``gradekit kit``）的中文消息：工具包只带有从参考实现记录下来的答案，不带参考实现。"""

MESSAGES = {
    "kit.needs_reference": "{door} 需要参考实现，而这是学生工具包：它只带有从参考实现记录下来的答案，不带参考实现本身。请在教师的完整工具包中运行 {door}。",
    "kit.profile_not_recorded": "这个学生工具包只带有 {recorded} 档位的记录答案，没有 {profile} 档位的；请加上 --profile {first} 评分。",
    "kit.banked": "本次评分对照的是从参考实现记录下来的答案（学生工具包，不带参考实现）：这些答案无法判断的检查会被跳过，不扣分。最终成绩由教师用完整工具包评定。",
    "kit.answers": "答案",
    "kit.answers_banked": "从参考实现记录而来（学生工具包）",
    "kit.quiz_choice_only": "这个学生工具包不带参考实现，因此答案要由参考实现算出的题目已略去。",
}
