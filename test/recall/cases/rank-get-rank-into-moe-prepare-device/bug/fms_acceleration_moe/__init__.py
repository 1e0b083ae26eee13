from .framework_plugin_scattermoe import ScatterMoEAccelerationPlugin

__all__ = ["ScatterMoEAccelerationPlugin"]
