"""`python3 Tests/EndToEnd/cognito_double --host 127.0.0.1 --port 0`: prints
one line `LISTENING http://127.0.0.1:<port>/` and serves until SIGTERM/SIGINT."""
import sys
from pathlib import Path

# Run as a directory, Python puts this directory first on sys.path. Import the
# package from its parent, Tests/EndToEnd (where serving.py is too), instead,
# so that the package's own module names cannot shadow any other module.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from cognito_double.server import main  # noqa: E402 (needs the path above)

sys.exit(main())
