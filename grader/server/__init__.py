"""The course server: students hand in over HTTP, the server grades each hand-in as the batch does.

``gradekit serve init`` makes the data folder and the database (``store``, its schema by the revisions of
``migrate``), ``gradekit serve roster import`` gives each student a token, ``gradekit serve run`` serves the pages
and the API (``app``) and grades what was handed in, one submission at a time, through the batch's judge processes
(``grading``), with the instructor's reviews of ``overrides.toml`` applied (``reviews``); the instructor reads the
gradebook and the batch's class pages in the browser (``classpages``); ``gradekit submit`` hands in from a terminal
(``client``). docs/SERVER.md says how to run it for a class and what it guarantees.

Nothing here imports or runs a student's code: a judge grades it, sealed, in a process of its own.
"""
