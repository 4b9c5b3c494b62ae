"""What is said about an attempt: its report, risk floor, completion judge, ending, calibration.

The retry loop and the hooks both use these (docs/reports.md); they sit beside
:mod:`reflexkit.insights`, below :mod:`reflexkit.orchestrator`.
"""
