"""The live state (contract §9): a job's live fields, what the running and done jobs hold
and how far they get by §8, and planning the waiting jobs around them."""
