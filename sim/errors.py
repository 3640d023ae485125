"""Re-export of the input error type (defined in models so that models stay free of sim)."""

from models.errors import InputError

__all__ = ["InputError"]
