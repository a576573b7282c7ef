"""The core layer: what every other layer builds on and that imports none of them.

The problem protocol, the measurement protocol, records, the schema builder (one
declaration per option), stores and caches, the safe-expression compiler and small
process-level utilities. Layers above (registry, domain, run, face) may import it; it
imports only :mod:`searchlab.errors`, :mod:`searchlab.spaces` and :mod:`searchlab.interchange`
(docs/architecture.md).
"""
