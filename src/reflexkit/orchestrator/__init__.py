"""The orchestrator subsystem of reflexkit."""
