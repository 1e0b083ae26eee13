from .scattermoe_prepare import prepare_scattermoe

__all__ = ["prepare_scattermoe"]
