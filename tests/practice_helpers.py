"""What the practice and quiz tests share: the command line and a template's fields (and, in conftest, the
``home`` fixture, a fresh history per test, which each of their modules uses for every test)."""

import argparse
import string

from grader.practice.cli import register


def gradekit(capsys, *argv):
    """``gradekit ARGV`` through the practice/quiz registration: ``(exit code, stdout, stderr)``."""
    parser = argparse.ArgumentParser(prog="gradekit")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def fields(template):
    """The ``{names}`` a message template fills in."""
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}
