"""Kept so that code written against tinynet.experiments still runs; the XOR bench is
tinynet.xor."""

from .xor import (FAILURES, NOTES_ARMS, Arm, ArmResult, Comparison, Study, Setup, compare,
                  run_study)

XorSetup = Setup
"""The name :class:`~tinynet.xor.Setup` had before studies ran on other data sets."""

__all__ = ["Arm", "Setup", "XorSetup", "ArmResult", "Comparison", "Study", "run_study", "compare",
           "NOTES_ARMS", "FAILURES"]
