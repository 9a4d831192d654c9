"""Step-3.5: Qwen3-Coder XML (the Step-3.5-Flash template's layout), ``<think>`` reasoning.

Step-3.5 writes exactly what Nemotron 3 writes (both are rows over the Qwen3-Coder declaration),
so it runs the same table.
"""

from tests.dialects.test_nemotron_v3 import CASES
from tests.harness import make_table_tests

test_whole, test_per_character, test_random_chunkings = make_table_tests("step3p5", CASES)
