"""``python3 -m muh …`` is the ``muh`` command (for an interpreter whose console scripts are not on PATH, e.g. a
fresh pyenv install before ``pyenv rehash``)."""

from muh.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
