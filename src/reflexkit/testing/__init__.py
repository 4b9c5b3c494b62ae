"""The testing subsystem of reflexkit."""
