"""Learning that measures itself: calibration of questions and members from recorded picks.

Pure functions over plain dataclasses (no SQLAlchemy, no platform): ``picks`` is the input
shape, ``online`` the per-answer Elo-style update, ``irt`` the periodic batch Rasch/2PL fit,
``readiness`` turns an ability into "expected share right on an interview-level question",
``quality`` flags questions whose answers say they are broken. See docs/learning.md.
"""
