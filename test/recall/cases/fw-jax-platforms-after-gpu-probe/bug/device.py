def init_device(device="auto", backend="jax"):
    """Select the compute device for the active backend ('cpu', 'gpu' or 'auto')."""
    if device == "cpu":
        return _cpu_case(backend)
    return _gpu_case(backend)


def _cpu_case(backend):
    if backend == "jax":
        import jax

        try:
            has_gpu = bool(jax.devices("gpu"))
        except RuntimeError:
            has_gpu = False
        if not has_gpu:
            jax.config.update("jax_platforms", "cpu")
        return jax.devices()[0]
    return "cpu"


def _gpu_case(backend):
    if backend == "jax":
        import jax

        return jax.devices()[0]
    return "cuda:0"
