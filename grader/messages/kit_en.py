"""Student kits (``grader.kit``, ``gradekit kit``): a kit that holds the reference's answers, recorded, not the
reference."""

MESSAGES = {
    "kit.needs_reference": "{door} needs the reference implementation, and this is a student kit: it holds the answers recorded from the reference, not the reference itself. Run {door} from the instructor's full kit.",
    "kit.profile_not_recorded": "this student kit holds the recorded answers of the {recorded} profile only, not of the {profile} profile; grade with --profile {first}.",
    "kit.banked": "Graded against the answers recorded from the reference (a student kit, which holds no reference): a check those answers cannot judge is skipped and costs nothing. The final grade is given with the instructor's full kit.",
    "kit.answers": "answers",
    "kit.answers_banked": "recorded from the reference (a student kit)",
    "kit.quiz_choice_only": "This student kit holds no reference, so the questions whose answers are computed from it are left out.",
}
