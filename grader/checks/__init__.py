"""The check machinery: the registry and context (``base``), ``Fail``, and helpers shared by assignments' checks
(``common``). The checks themselves belong to assignments (``Assignment.checks``)."""
