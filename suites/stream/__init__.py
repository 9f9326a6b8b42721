"""The stream checker: TiCDC's stream rules over a captured or simulated topic dump.

``catalog`` names the rules, the settings a check needs and what it reports; ``rules`` checks
one Kafka partition's records in offset order in plain Python; ``tasks`` and ``layout`` are
what runs on Spark's executors; ``spark`` is the Spark job (the only module importing
pyspark); ``arguments`` are ``check-stream``'s command-line arguments (no pyarrow imported);
``job`` runs it: settings, engine, report and exit code.
"""
