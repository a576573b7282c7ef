"""The run layer: one run's lifecycle and the machinery it drives (docs/architecture.md).

- :mod:`searchlab.run.prepare`: every check, nothing written; a frozen ``Prepared``;
- :mod:`searchlab.run.lifecycle`: ``Run``: start -> loop -> finish -> close;
- :mod:`searchlab.run.loop`: the budget, the search phase and ``drive``, which every phase uses;
- :mod:`searchlab.run.confirm`: the confirm phase and its report;
- :mod:`searchlab.run.summary`, ``verdict``, ``progress``, ``plot``, ``failures``, ``checks``;
- :mod:`searchlab.run.execution`: executors (serial, Ray).

Nothing is imported here, so importing one module of the layer imports only what it needs.
"""
