"""The core layer: what every other layer builds on, importing nothing above it.

The problem protocol and the measurement protocol, records, the schema builder (one
declaration per option), the store and cache, sensors, the safe-expression compiler,
threads, signals and the OpenCL seam. The registry, domain (searchers, adapters), run and
face layers may import it; it imports only :mod:`searchlab.errors`, :mod:`searchlab.core.spaces`
and :mod:`searchlab.interchange` (issue 21, item 3; docs/architecture.md).
"""
