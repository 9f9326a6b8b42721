"""ticdc-conformance: the conformance kit for TiCDC's Kafka message protocols.

Subpackages: ``reference`` (codecs, event models, JSON forms), ``generators`` (strategies,
stream simulator, dumps), ``fixtures`` (golden cases), ``suites`` (the suite library, the
pytest plugin, the stream checker) and ``cli`` (the ``ticdc-conformance`` command).

The root is a regular package, not a namespace, so that a wheel on Spark's ``--py-files``
(read by ``zipimport``, which does not find namespace packages) imports on the executors.
"""
