"""The command line every assignment's demo shares: ``gradekit demo [--assignment A] [--steps N] [--seed S] [--quiet]
[--threads T]``. An assignment's demo module gives its own name, default step count and ``run_demo``; this parses,
sets torch's threads and runs it."""

import argparse


def main(argv, *, prog, description, steps, quiet_help, run_demo, quiet_lines):
    """Parse ``argv`` and train: ``run_demo(steps=, seed=)`` prints as it goes; with ``--quiet`` it runs with
    ``log=None`` and ``quiet_lines(result)`` are printed instead. Returns the exit status."""
    import torch

    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--steps", type=int, default=steps, help="optimizer steps (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    parser.add_argument("--quiet", action="store_true", help=quiet_help)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default: %(default)s; a model this small trains fastest on one)")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    torch.set_num_threads(max(1, args.threads))
    if args.quiet:
        for line in quiet_lines(run_demo(steps=args.steps, seed=args.seed, log=None)):
            print(line)
    else:
        run_demo(steps=args.steps, seed=args.seed)
    return 0
