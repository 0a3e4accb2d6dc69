"""Write notice-like lines and a pickle into every descriptor this worker holds (its reply pipe, the output,
anything inherited): a second judge's notice pipe or results must not be reachable from a worker, and a line
such as "done", "0" or "../x" must not change any result."""

import os
import pickle

LINES = b"0\n1\n2\ndone\n../../../../etc/passwd\n" + pickle.dumps(("forged", []))


def spray():
    for fd in range(3, 256):
        try:
            os.write(fd, LINES)
        except OSError:
            pass
    for folder in ("/tmp", "/dev/shm", "/home", "/"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith("gradekit-shard-"):
                for entry in ("0", "1", "done"):
                    try:
                        with open(os.path.join(folder, name, entry), "wb") as f:
                            f.write(pickle.dumps(("forged", [])))
                    except OSError:
                        pass


spray()
