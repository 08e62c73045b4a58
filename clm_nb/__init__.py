__version__ = "0.1.0"

# The public API: every module's exports, so that `from clm_nb import calinski_harabasz` works and importing
# the package fills the measure registry. Modules are listed in notebook order.
from .core import *
from .pairs import *
from .internal import *
from .cvi import *
from .external import *
from .curves import *
from .dsi import *
from .consensus import *
from .between import *   # note: the function `between` shadows the submodule attribute; import from clm_nb.between works
from .datasets import *
from .clusterers import *
from .evaluation import *
from .runner import *
from .charts import *
from .report import *
from .assess import *
