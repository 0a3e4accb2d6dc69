"""English messages of the kit's ``gradekit practice`` (``practice.*``) and ``gradekit quiz`` (``quiz.*``): the
screens, whatever the assignment. An assignment's own (drill titles, hints, questions, topics, the quiz's heading)
are in its ``messages/practice_en.py``."""

MESSAGES = {
    # -- list ---------------------------------------------------------------------------------------------------
    "practice.list.header": "Interview drills: write one module against the clock in a workspace where everything "
                            "else is the reference.",
    "practice.list.tasks": "One task:",
    "practice.list.sets": "Interview sets:",
    "practice.list.usage": "Start: gradekit practice DRILL [--minutes M] [--no-hints]   (or --random)\n"
                           "Then:  gradekit practice --check | --hint | --history      Quiz: gradekit quiz",
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
    "practice.start.next": "Next: cd {path}, edit, then `gradekit practice --check` (stuck? `gradekit practice "
                           "--hint`).",
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
    "practice.check.failed": "Not yet: the attempt is recorded as failed until a check passes. Fix and check again.",
    "practice.check.hint_tip": "Stuck? `gradekit practice --hint` shows the next hint level.",
    # -- hints --------------------------------------------------------------------------------------------------
    "practice.hint.header": "Hint {level}/{levels} for {task} ({title}):",
    "practice.hint.exhausted": "All hint levels for {task} have been shown; the rest is yours. `gradekit practice "
                               "--check` tells you what is still wrong.",
    "practice.hint.others": "Hints left for: {tasks} (gradekit practice --hint TASK).",
    # -- history ------------------------------------------------------------------------------------------------
    "practice.history.empty": "No attempts yet. Start one: gradekit practice DRILL",
    "practice.history.header": "Your attempts ({n}; the last 20 shown; ⊘ = no-hints mode):",
    "practice.history.chart": "Time per attempt ({width} columns = the time limit; ░ = overtime):",
    "practice.history.bests": "Personal bests:",
    "practice.history.best_of": "limit {limit}, {when}, {hints} hint level(s)",
    "practice.result.passed": "✓ passed",
    "practice.result.failed": "✗ failed",
    "practice.result.late": "(late)",
    # -- errors -------------------------------------------------------------------------------------------------
    "practice.error": "error",
    "practice.error.unknown_drill": "unknown drill {drill!r}; expected one of: {drills}.",
    "practice.error.minutes": "--minutes must be more than 0, got {minutes}.",
    "practice.error.not_empty": "{path} already exists and is not empty; choose another --dir or remove it.",
    "practice.error.no_workspace": "{path} is not a practice workspace (no .gradekit-practice.json here or above); "
                                   "pass --dir PATH or cd into the workspace.",
    "practice.error.bad_state": "the practice state file {path} cannot be read ({detail}); start a new drill.",
    "practice.error.hint_task": "{task} is not part of this drill; hints exist for: {tasks}.",
    "practice.error.no_hints_mode": "this drill runs in no-hints mode: hints come once the time is up.",
    "practice.error.one_action": "give one thing to do: a drill to start (or --random), --check, --hint or "
                                 "--history.",
    # -- quiz ---------------------------------------------------------------------------------------------------
    "quiz.prompt_choice": "Answer with a letter.",
    "quiz.prompt_number": "Answer with a whole number.",
    "quiz.prompt_number_tol": "Answer with a number (3 significant digits are enough, e.g. 0.000123 or 1.23e-4).",
    "quiz.retry_choice": "Not understood; answer with a letter from a to d, or an empty line to skip.",
    "quiz.retry_number": "Not understood; answer with a number (digits, a point, e-notation), or an empty line to "
                         "skip.",
    "quiz.right": "✓ Right.",
    "quiz.wrong": "✗ You answered {reply}; the answer is {answer}.",
    "quiz.unanswered": "✗ No answer; the answer is {answer}.",
    "quiz.unreadable": "✗ Not an answer ({reply}); the answer is {answer}.",
    "quiz.score": "Score: {right} / {total} ({pct}%).",
}
