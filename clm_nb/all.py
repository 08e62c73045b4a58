# Every module's exports in one namespace, for notebooks and interactive work: `from clm_nb.all import *`.
#
# The package's top level (`import clm_nb`) is the small public surface; this module is the convenience that
# star-imports everything, in notebook order. It loads altair, jinja2 and the study machinery, so it is slower to
# import than `clm_nb` itself.

from .text import *
from .checks import *
from .registry import *
from .gower import *
from .core import *
from .distances import *
from .pairs import *
from .internal import *
from .cvi import *
from .curves import *
from .separability import *
from .density import *
from .external import *
from .consensus import *
from .between import *
from .catalog import *
from .prepare import *
from .bundle import *
from .rule import *
from .profile import *
from .intervals import *
from .assessment import *
from .representations import *
from .clusterers import *
from .repair import *
from .runner import *
from .study import *
from .tasks import *
from .evaluation import *
from .leaderboard import *
from .clustbench import *
from .curate import *
from .charts import *
from .report import *
from .cli.common import *
from .cli.assess import *
from .cli.score import *
from .cli.measures import *
from .cli.warm import *
from .cli.leaderboard import *
from .cli.results import *
from .cli.study import *
from .cli.bundle import *
from .cli import *
