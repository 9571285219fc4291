"""What users run: the CLI, the simulate run loop and recorder, plots."""
