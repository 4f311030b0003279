"""Kept so that code written against tinynet.experiments still runs; the XOR bench is
tinynet.xor."""

from .xor import (FAILURES, NOTES_ARMS, Arm, ArmResult, Comparison, Study, XorSetup, compare,
                  run_study)

__all__ = ["Arm", "XorSetup", "ArmResult", "Comparison", "Study", "run_study", "compare",
           "NOTES_ARMS", "FAILURES"]
