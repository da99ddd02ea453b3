"""Pictures: the Display classes, geometry without matplotlib, tree layout, DOT."""
