import unittest

from cart.pricing import apply_discount, cart_total


class ApplyDiscountTests(unittest.TestCase):
    def test_no_discount_keeps_the_price(self):
        self.assertEqual(apply_discount(1999, 0), 1999)

    def test_quarter_off(self):
        self.assertEqual(apply_discount(2000, 25), 1500)

    def test_rejects_discount_over_100(self):
        with self.assertRaises(ValueError):
            apply_discount(100, 150)


class CartTotalTests(unittest.TestCase):
    def test_cart_total_with_discount(self):
        self.assertEqual(cart_total([1000, 500], percent=10), 1350)

    def test_empty_cart_costs_nothing(self):
        self.assertEqual(cart_total([], percent=50), 0)
