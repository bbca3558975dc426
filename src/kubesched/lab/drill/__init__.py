"""The curriculum's drills on fake nodes and virtual time (`kubesched drill`), one module per drill."""

from kubesched.lab.drill.c1 import print_c1, run_c1
from kubesched.lab.drill.c2 import print_c2, run_c2
from kubesched.lab.drill.c3 import print_c3, run_c3
from kubesched.lab.drill.c4 import print_c4, run_c4

__all__ = ["print_c1", "print_c2", "print_c3", "print_c4", "run_c1", "run_c2", "run_c3", "run_c4"]
