"""The plugin's name and the CycleState keys PreFilter and PreScore write under."""

from __future__ import annotations

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
