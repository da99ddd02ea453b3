"""Importance: MDI, node statistics and sums (one engine), the replay rules,
losses, gain, permutation and debiased importance."""
