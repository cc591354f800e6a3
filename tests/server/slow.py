"""A memory namespace whose DescribeNamespace takes ``delay_ms`` (default 2000): an
in-flight request to hold while the server is asked to stop."""

from __future__ import annotations

import time

from lance_ns.impls.memory import MemoryNamespace


class SlowNamespace(MemoryNamespace):
    def __init__(self, **properties):
        super().__init__()
        self.delay = int(properties.get("delay_ms", "2000")) / 1000

    def describe_namespace(self, request):
        time.sleep(self.delay)
        return super().describe_namespace(request)
