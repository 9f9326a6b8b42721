"""``python -m ticdc_conformance.cli``."""

from __future__ import annotations

from ticdc_conformance.cli.entry import main

raise SystemExit(main())
