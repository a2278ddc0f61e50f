"""mechdesign: certified optimal local privacy mechanisms."""
