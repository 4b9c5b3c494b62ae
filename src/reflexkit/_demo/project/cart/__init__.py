"""A tiny shopping cart: the example project of ``reflexkit demo``."""
