"""Where the key's socket goes: a private directory of its own, or a chosen
path whose directory only this user can enter."""
import os
import stat
import tempfile
from pathlib import Path

from .constants import MAX_SOCKET_PATH, SOCKET_NAME


def private_directory(base):
    """A new directory only we can enter (mkdtemp makes it 0700), short enough
    for a socket path."""
    made = Path(tempfile.mkdtemp(prefix="soft-key-", dir=base))
    if len(str(made / SOCKET_NAME).encode()) > MAX_SOCKET_PATH:
        made.rmdir()
        made = Path(tempfile.mkdtemp(prefix="soft-key-"))
    os.chmod(made, 0o700)
    return made


def prepare_socket_path(path):
    """For a socket at a chosen path: its directory made private if new, refused
    if others can enter it; a stale socket there removed."""
    if len(str(path).encode()) > MAX_SOCKET_PATH:
        raise ValueError(f"{path}: too long for a UNIX socket path")
    directory = path.parent
    if not directory.exists():
        directory.mkdir(mode=0o700, parents=True)
    info = directory.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ValueError(f"{directory} is not private to this user: chmod 700 it, or choose another")
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise ValueError(f"{path} exists and is not a socket")
        path.unlink()
