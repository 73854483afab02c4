"""The greybox engine: corpus, feedback, schedules, mutators, prediction, the fuzz loop."""
