"""``python -m grader``: the same entry point as the ``gradekit`` command."""

import sys

from grader.cli import main

sys.exit(main())
