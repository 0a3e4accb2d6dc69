"""English messages of the kit's ``gradekit practice`` (``practice.*``) and ``gradekit quiz`` (``quiz.*``): the
screens, whatever the assignment. An assignment's own (drill titles, hints, questions, topics, the quiz's heading)
are in its ``messages/practice_en.py``."""

MESSAGES = {
    # -- list ---------------------------------------------------------------------------------------------------
    "practice.list.header": "Interview drills: write one module against the clock in a workspace where everything "
    "else is the reference.",
    "practice.list.tasks": "One task:",
    "practice.list.sets": "Interview sets:",
    "practice.list.usage": "Start: {practice} DRILL [--minutes M] [--no-hints]   (or --random)\n"
    "Then:  {practice} --check | --hint | --history      Quiz: {quiz}",
    "practice.col.drill": "drill",
    "practice.col.what": "what",
    "practice.col.level": "level",
    "practice.col.time": "typical time",
    "practice.col.when": "started",
    "practice.col.result": "result",
    "practice.col.used": "time / limit",
    "practice.col.score": "score",
    "practice.col.hints": "hints",
    "practice.col.checks": "checks",
    "practice.level.easy": "easy",
    "practice.level.medium": "medium",
    "practice.level.hard": "hard",
    "practice.minutes": "{minutes} min",
    # -- start --------------------------------------------------------------------------------------------------
    "practice.start.header": "Drill {drill}: {title} ({level}, typically {minutes} min)",
    "practice.start.workspace": "Workspace: {path}",
    "practice.start.files": "Write: {names} in {files}. Everything else there is the reference.",
    "practice.start.clock": "Clock: {limit} from now (until {ends}).",
    "practice.start.no_hints": "No-hints mode: diagnoses and hints are withheld until the time is up.",
    "practice.start.next": "Next: edit {files} there, then run `{check}` from this folder (stuck? `{hint}`).",
    "practice.workspace.chosen": "Workspace (the drill started last): {path}",
    "practice.doc.hints": "Hints:",
    "practice.todo": "write this; the docstring above says what it must do.",
    "practice.stub.not_implemented": "{task}: {name} is not implemented yet",
    # -- check --------------------------------------------------------------------------------------------------
    "practice.check.header": "Drill {drill}: {title}",
    "practice.time.within": "Time: {used} of {limit} ({left} left).",
    "practice.time.over": "Time: {used} of {limit}, over by {over}.",
    "practice.check.withheld": "No-hints mode: diagnoses are withheld for another {left}.",
    "practice.check.passed": "Passed in {used}, with {hints} hint level(s). Recorded in your history.",
    "practice.check.new_best": "New personal best (previous best {previous}).",
    "practice.check.first_best": "First pass of this drill: your personal best to beat.",
    "practice.check.already_passed": "This attempt was already recorded as passed in {used}; start a new drill to "
    "try again.",
    "practice.check.failed": "Not yet. Fix and check again: the attempt counts as passed from the first check that "
    "passes.",
    "practice.check.partial": "A rerun of single checks: not recorded in your history. `{check}` grades the whole "
    "drill.",
    "practice.check.hint_tip": "Stuck? `{hint}` shows the next hint level.",
    # -- hints --------------------------------------------------------------------------------------------------
    "practice.hint.header": "Hint {level}/{levels} for {task} ({title}):",
    "practice.hint.exhausted": "All hint levels for {task} have been shown; the rest is yours. `{check}` tells you "
    "what is still wrong.",
    "practice.hint.others": "Hints left for: {tasks} ({hint} TASK).",
    # -- history ------------------------------------------------------------------------------------------------
    "practice.history.empty": "No attempts and no quizzes yet. Start one: {practice} DRILL, or {quiz}",
    "practice.history.header": "Your attempts ({n}; the last 20 shown; ⊘ = no-hints mode):",
    "practice.history.chart": "Time per attempt ({width} columns = the time limit; ░ = overtime):",
    "practice.history.bests": "Personal bests:",
    "practice.history.best_of": "limit {limit}, {when}, {hints} hint level(s)",
    "practice.history.quizzes": "Your quizzes ({n}; the last 20 shown):",
    "practice.history.topics": "Right answers by topic, over all your quizzes (the weakest first):",
    "practice.col.taken": "taken",
    "practice.col.answered": "answered",
    "practice.col.again": "the same questions again",
    "practice.result.passed": "✓ passed",
    "practice.result.failed": "✗ failed",
    "practice.result.late": "(late)",
    "practice.result.running": "… in progress ({left} left)",
    "practice.result.abandoned": "– abandoned",
    # -- errors -------------------------------------------------------------------------------------------------
    "practice.error": "error",
    "practice.error.unknown_drill": "unknown drill {drill!r}; expected one of: {drills}.",
    "practice.error.minutes": "--minutes must be more than 0, got {minutes}.",
    "practice.error.not_empty": "{path} already exists and is not empty; choose another --dir or remove it.",
    "practice.error.no_workspace": "{path} is not a practice workspace (no .gradekit-practice.json here or above); "
    "pass --dir PATH or cd into the workspace.",
    "practice.error.no_workspace_yet": "{path} is in no practice workspace and no drill has been started yet; start "
    "one: {practice} DRILL.",
    "practice.error.only_needs_check": "--only goes with --check: {check} --only CHECK.",
    "practice.error.only": "this drill has no check {checks}; expected some of: {known}.",
    "practice.error.bad_state": "the practice state file {path} cannot be read ({detail}); start a new drill.",
    "practice.error.hint_task": "{task} is not part of this drill; hints exist for: {tasks}.",
    "practice.error.no_hints_mode": "this drill runs in no-hints mode: hints come once the time is up.",
    "practice.error.one_action": "give one thing to do: a drill to start (or --random), --check, --hint or --history.",
    # -- quiz ---------------------------------------------------------------------------------------------------
    "quiz.prompt_choice": "Answer with a letter.",
    "quiz.prompt_whole": "Answer with a whole number.",
    "quiz.prompt_number": "Answer with a number (3 significant digits are enough, e.g. 0.000123 or 1.23e-4).",
    "quiz.retry_choice": "“{reply}” is not one of the options: answer with a letter from a to d, or an empty line to "
    "skip the question.",
    "quiz.retry_whole": "“{reply}” is not a whole number: answer with digits, such as 512, or an empty line to skip "
    "the question.",
    "quiz.retry_number": "“{reply}” is not a number: answer such as 0.000698 or 6.98e-4, or an empty line to skip "
    "the question.",
    "quiz.error.answer_choice": "answer {i} of --answers ({reply}) is not one of the options; expected a letter from "
    "a to d, or nothing to skip the question.",
    "quiz.error.answer_whole": "answer {i} of --answers ({reply}) is not a whole number; expected digits such as 512, "
    "or nothing to skip the question.",
    "quiz.error.answer_number": "answer {i} of --answers ({reply}) is not a number; expected one such as 0.000698 or "
    "6.98e-4, or nothing to skip the question.",
    "quiz.error.answer_count": "--answers has {given} answers for {n} questions; expected at most {n}.",
    "quiz.saved": "Saved in your history ({history}).",
    "quiz.right": "✓ Right.",
    "quiz.wrong": "✗ You answered {reply}; the answer is {answer}.",
    "quiz.unanswered": "✗ No answer; the answer is {answer}.",
    "quiz.score": "Score: {right} / {total} ({pct}%).",
}
