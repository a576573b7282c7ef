"""Safe expressions written as data: one compiler (:mod:`._compile`), two grammars.

- :class:`Expression`: scalar constraints, features and formulas in configs and tables
  (:mod:`._scalar`, bounded integers and strings);
- :class:`ArrayExpression`: numpy reference outputs of user kernels (:mod:`._array`,
  bounded array sizes).
"""

from searchlab.core.expr._array import MAX_ELEMENTS, ArrayExpression
from searchlab.core.expr._compile import Compiled, Grammar
from searchlab.core.expr._scalar import MAX_INT_BITS, MAX_STRING, Expression

__all__ = ["MAX_ELEMENTS", "MAX_INT_BITS", "MAX_STRING", "ArrayExpression", "Compiled", "Expression", "Grammar"]
