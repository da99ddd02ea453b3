"""Explaining one decision: decision paths in words, Saabas contributions and exact
TreeSHAP values (and interaction values), all computed on the Forest."""
