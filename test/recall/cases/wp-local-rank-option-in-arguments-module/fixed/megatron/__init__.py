"""A small Megatron-style library: arguments, initialisation and training loop."""
