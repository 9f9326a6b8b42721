"""The ``ticdc-conformance`` command: a thin layer over the subpackages.

Exit codes: 0 success, 1 conformance failure (input that is not valid for the protocol, or
events that cannot be encoded), 2 usage or configuration error, 3 the run itself broke.
"""
