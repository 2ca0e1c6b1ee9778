"""/challenge and /submit: problems, hints, judged submissions, first solves."""
