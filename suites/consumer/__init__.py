"""The consumer check: what a consumer made of a TiCDC stream, against what it must make.

``expected`` writes and reads the expected state (``reference.consumer``'s result on disk),
``actual`` reads what a consumer produced (table snapshots in files or PostgreSQL, an applied
log), ``values`` compares one value type-aware, ``check`` runs the rules of ``catalog`` in plain
Python and ``spark`` at scale; ``job`` is the ``check-consumer`` command.
"""
