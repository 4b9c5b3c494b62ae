"""``python -m reflexkit``: the same as the ``reflexkit`` command."""

if __name__ == "__main__":
    import gc

    gc.disable()  # before the imports, which make garbage: main() decides when it is back on

    from reflexkit.cli import main

    main()
