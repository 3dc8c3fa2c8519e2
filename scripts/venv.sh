# Sourced by the other scripts: where the project's Python virtual
# environment lives (made by scripts/install-deps), and its bin first on
# PATH, so `python3`, pytest, moto and the real Python clients all come
# from it and nothing is installed into the system's Python.
#
# Outside the checkout, so a fresh clone on the same machine (CI) reuses it;
# COG_CRED_VENV puts it elsewhere.
COG_CRED_VENV=${COG_CRED_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/cog-cred/venv}
export COG_CRED_VENV
export PATH="$COG_CRED_VENV/bin:$PATH"
