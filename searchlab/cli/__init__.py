"""The command line (the face layer): ``python -m searchlab``.

- :mod:`searchlab.cli.main`: the entry point; every run (fresh, resumed, each job of a sweep)
  enters :class:`searchlab.run.lifecycle.Run` through one door;
- :mod:`searchlab.cli.compose`: Hydra's composition, once per job, and the job's directory;
- :mod:`searchlab.cli.config`: the schemas in Hydra's ConfigStore;
- :mod:`searchlab.cli.helptext`: ``--help``.
"""
