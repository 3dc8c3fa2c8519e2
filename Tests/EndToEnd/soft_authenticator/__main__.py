"""`python3 Tests/EndToEnd/soft_authenticator --socket PATH [--pin PIN]`: a
virtual security key on a UNIX socket until SIGTERM or Ctrl-C (the package's
docstring says more)."""
import sys
from pathlib import Path

# Run as a directory, Python puts this directory first on sys.path. Import the
# package from its parent, Tests/EndToEnd, instead, so that the package's own
# module names (constants, parameters, ...) cannot shadow any other module.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from soft_authenticator.command_line import main  # noqa: E402 (needs the path above)

sys.exit(main())
