"""Conformance suites: load golden cases, check an implementation against them, report.

Built on ``ticdc_conformance.reference``; the pytest plugin and the stream checker live here.
"""
