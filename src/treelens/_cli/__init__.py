"""The command line, its tables and pictures, the HTML report and the demo: a thin
layer over the public API that computes nothing itself."""
