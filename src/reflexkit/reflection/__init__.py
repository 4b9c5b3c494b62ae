"""The reflection subsystem of reflexkit."""
