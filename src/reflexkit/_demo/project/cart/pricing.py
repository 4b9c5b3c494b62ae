"""Prices in cents, discounts in percent."""


def apply_discount(price_cents: int, percent: int) -> int:
    """Return the price after a discount of *percent* per cent, rounded to the nearest cent."""
    if not 0 <= percent <= 100:
        raise ValueError(f"discount must be between 0 and 100, got {percent}")
    return round(price_cents * percent / 100)


def cart_total(prices_cents: list[int], percent: int = 0) -> int:
    """Return the total of a cart after a discount on every item."""
    return sum(apply_discount(price, percent) for price in prices_cents)
