"""Taking a submission in: what of it was refused (links, special files, files over the caps) and why."""

MESSAGES = {
    "snapshot.refused": "not graded: {path} is {what}; expected regular files only (the contract's .py files "
    "and plain data files) inside the submission folder",
    "snapshot.more": "{count} more items were not graded either",
    "snapshot.heading": "Not graded: links, special files and files over the caps",
    "snapshot.kind.symlink": "a symbolic link (links are never followed, not even to a file inside the folder)",
    "snapshot.kind.fifo": "a named pipe (FIFO)",
    "snapshot.kind.socket": "a socket",
    "snapshot.kind.device": "a device file",
    "snapshot.kind.special": "a special file",
    "snapshot.kind.too_big": "a file of {size} bytes, more than the {limit} bytes one file may hold",
    "snapshot.kind.total": "a file past the {limit} bytes the whole submission may hold (it and the files "
    "after it were not copied)",
    "snapshot.kind.count": "a file past the {limit} files a submission may hold (it and the files after it "
    "were not copied)",
    "snapshot.kind.entries": "past the {limit} entries a submission folder may hold (the rest were not looked at)",
    "snapshot.kind.bad_name": "a name that is not valid UTF-8 text or holds control characters",
    "snapshot.kind.deep": "a folder more than {limit} levels deep",
    "snapshot.kind.unreadable": "a file that could not be read",
    "snapshot.kind.changed": "a file that changed while it was being copied",
    "snapshot.kind.more": "one of many",
    "snapshot.short.symlink": "symbolic link",
    "snapshot.short.fifo": "named pipe",
    "snapshot.short.socket": "socket",
    "snapshot.short.device": "device file",
    "snapshot.short.special": "special file",
    "snapshot.short.too_big": "over the size cap",
    "snapshot.short.total": "past the submission's size cap",
    "snapshot.short.count": "past the file-count cap",
    "snapshot.short.entries": "past the entry cap",
    "snapshot.short.bad_name": "name not UTF-8 or with control characters",
    "snapshot.short.deep": "too deep",
    "snapshot.short.unreadable": "unreadable",
    "snapshot.short.changed": "changed while copied",
    "snapshot.short.more": "more",
}
