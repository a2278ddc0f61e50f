"""The design pipeline, top to bottom: a problem (read from a file or built in Python) is
solved, its matrix certified, and a labelled result returned; a sweep does so across ε."""
