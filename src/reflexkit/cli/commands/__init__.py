"""The commands of ``reflexkit``, one module per command group.

:data:`reflexkit.cli.COMMANDS` names each with its one-line summary; a module is imported
only when its command runs.
"""
