"""Emitter `docker`: the competition's root ``Dockerfile`` and ``computility-run.yaml``."""
