"""Evaluation and logging helpers."""
