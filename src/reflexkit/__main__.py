"""``python -m reflexkit``: the same as the ``reflexkit`` command."""

from reflexkit.cli import main

if __name__ == "__main__":
    main()
