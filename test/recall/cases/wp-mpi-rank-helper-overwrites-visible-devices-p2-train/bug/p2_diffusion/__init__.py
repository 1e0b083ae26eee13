"""Diffusion training with perception-prioritized (P2) loss weighting."""
