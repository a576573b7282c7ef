"""Safe expressions written as data: one compiler (:mod:`._compile`), three grammars.

- :class:`Expression`: scalar constraints, features and formulas in configs and tables
  (:mod:`._scalar`, bounded integers and strings);
- :class:`ArrayExpression`: numpy reference outputs of user kernels (:mod:`._array`,
  bounded array sizes);
- :func:`evaluate_values`: parameter values as Kernel Tuner's T1 files write them, comprehensions
  included (:mod:`._values`, bounded list sizes and steps).
"""

from searchlab.core.expr._array import MAX_ELEMENTS, ArrayExpression
from searchlab.core.expr._compile import Compiled, Grammar
from searchlab.core.expr._scalar import MAX_INT_BITS, MAX_STRING, Expression
from searchlab.core.expr._values import MAX_STEPS, MAX_VALUES, evaluate_values

__all__ = ["MAX_ELEMENTS", "MAX_INT_BITS", "MAX_STEPS", "MAX_STRING", "MAX_VALUES", "ArrayExpression", "Compiled",
           "Expression", "Grammar", "evaluate_values"]
