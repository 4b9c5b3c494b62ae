"""The memory subsystem of reflexkit."""
