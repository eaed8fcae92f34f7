import unittest
from tools import ktap


class TestTimestamp(unittest.TestCase):
    def test_strip(self):
        self.assertEqual(ktap.strip_timestamp("[    1.234567]     ok 1 a\n"), "    ok 1 a")
