"""Generators: Hypothesis strategies for change events, and TiCDC stream simulation.

Strategies produce change events, never bytes: the bytes come from the reference encoders.
"""
