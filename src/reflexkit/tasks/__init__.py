"""The tasks subsystem of reflexkit."""
