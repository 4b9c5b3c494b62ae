"""``python -m reflexkit``: the same as the ``reflexkit`` command."""

if __name__ == "__main__":
    from reflexkit.cli import main

    main()
