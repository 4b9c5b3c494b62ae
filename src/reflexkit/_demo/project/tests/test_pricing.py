import pytest

from cart.pricing import apply_discount, cart_total


def test_no_discount_keeps_the_price():
    assert apply_discount(1999, 0) == 1999


def test_quarter_off():
    assert apply_discount(2000, 25) == 1500


def test_cart_total_with_discount():
    assert cart_total([1000, 500], percent=10) == 1350


def test_rejects_discount_over_100():
    with pytest.raises(ValueError):
        apply_discount(100, 150)
