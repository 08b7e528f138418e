"""File operations done as the OS user a server runs as.

When tdebench runs as root, servers run as the unprivileged ``tdebench`` user, and a gocryptfs mount
belongs to that user without ``-allow_other`` (see :mod:`tdebench.engines.toolkit.fsencrypt` for why): root itself
cannot enter it. Whatever tdebench must read or write inside a server's data directory therefore goes
through a short-lived child process running as that user. With ``user=None`` (tdebench is not root) the
same functions act directly.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

from tdebench.encryption import redact
from tdebench.errors import EnvironmentProblem
from tdebench.lifeline import helper_preexec

_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "LANG": "C"}


def _as(user: pwd.struct_passwd) -> dict[str, object]:
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def run_as(user: pwd.struct_passwd | None, argv: Sequence[str], *, input_text: str | None = None,
           stdin: IO[bytes] | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run ``argv`` as ``user`` (or as ourselves); EnvironmentProblem with its stderr if ``check`` and it fails."""
    kwargs = _as(user) if user is not None else {}
    data = input_text.encode() if input_text is not None else None
    result = subprocess.run(list(argv), input=data, stdin=stdin if data is None else None, capture_output=True,
                            env=_ENV, cwd="/", check=False, preexec_fn=helper_preexec(), **kwargs)  # type: ignore[arg-type]
    if check and result.returncode != 0:
        who = f" as {user.pw_name}" if user is not None else ""
        raise EnvironmentProblem(f"'{' '.join(argv[:3])}'{who} failed (code {result.returncode}): "
                                 f"{redact(result.stderr.decode(errors='replace').strip())[-300:]}",
                                 "check the permissions and free space of that directory")
    return result


def is_file(user: pwd.struct_passwd | None, path: Path) -> bool:
    """``path`` is a regular file, as ``user`` sees it."""
    if user is None:
        return path.is_file()
    return run_as(user, ["test", "-f", str(path)], check=False).returncode == 0


def read_text(user: pwd.struct_passwd | None, path: Path) -> str:
    if user is None:
        return path.read_text()
    return run_as(user, ["cat", str(path)]).stdout.decode()


def write_text(user: pwd.struct_passwd | None, path: Path, text: str, mode: int = 0o600) -> None:
    """Write ``text`` to ``path`` (owned by ``user``, ``mode``)."""
    if user is None:
        path.write_text(text)
        os.chmod(path, mode)
        return
    run_as(user, ["sh", "-c", 'umask 077 && cat > "$1" && chmod "$2" "$1"', "sh", str(path), f"{mode:o}"],
           input_text=text)


def rename(user: pwd.struct_passwd | None, source: Path, target: Path) -> None:
    if user is None:
        source.rename(target)
    else:
        run_as(user, ["mv", "-T", str(source), str(target)])


def remove_tree(user: pwd.struct_passwd | None, path: Path) -> None:
    """Delete ``path`` (file or directory tree) if it exists."""
    if user is None:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
    else:
        run_as(user, ["rm", "-rf", "--", str(path)])


def exists(user: pwd.struct_passwd | None, path: Path) -> bool:
    if user is None:
        return path.exists()
    return run_as(user, ["test", "-e", str(path)], check=False).returncode == 0


def make_dir(user: pwd.struct_passwd | None, path: Path, mode: int = 0o700) -> None:
    if user is None:
        path.mkdir(mode=mode)
        os.chmod(path, mode)
    else:
        run_as(user, ["mkdir", "-m", f"{mode:o}", "--", str(path)])


def extract_tar(user: pwd.struct_passwd | None, archive: Path, target: Path, gzip: bool) -> None:
    """Unpack ``archive`` (read by us, so it may sit in a directory ``user`` cannot enter) into ``target``."""
    with open(archive, "rb") as handle:
        run_as(user, ["tar", "-xzf" if gzip else "-xf", "-", "-C", str(target)], stdin=handle)


def copy_tree(user: pwd.struct_passwd | None, source: Path, target: Path) -> None:
    """Copy the directory ``source`` (readable by us) to the new directory ``target``, owned by ``user``."""
    if user is None:
        shutil.copytree(source, target, symlinks=True)
        return
    make_dir(user, target)
    packer = subprocess.Popen(["tar", "-cf", "-", "-C", str(source), "."], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=_ENV, preexec_fn=helper_preexec())
    assert packer.stdout is not None and packer.stderr is not None
    try:
        run_as(user, ["tar", "-xf", "-", "-C", str(target)], stdin=packer.stdout)
    finally:
        packer.stdout.close()
        errors = packer.stderr.read().decode(errors="replace").strip()
        packer.stderr.close()
        code = packer.wait()
    if code != 0:
        raise EnvironmentProblem(f"could not read {source} to copy it: {errors[-200:]}",
                                 "check that the backup directory is intact")


@contextlib.contextmanager
def tar_stream(user: pwd.struct_passwd | None, directory: Path) -> Iterator[IO[bytes]]:
    """A tar stream of the tree ``directory`` (not entering other mounts), packed as ``user``: how tdebench reads a
    mount that admits only the server's user. The packer is ended and reaped when the block ends."""
    kwargs = _as(user) if user is not None else {}
    packer = subprocess.Popen(["tar", "-cf", "-", "--one-file-system", "-C", str(directory), "."],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_ENV, cwd="/",
                              preexec_fn=helper_preexec(), **kwargs)  # type: ignore[call-overload]
    assert packer.stdout is not None
    try:
        yield packer.stdout
    finally:
        packer.stdout.close()
        if packer.poll() is None:
            packer.kill()
        packer.wait()


def user_can_reach(path: Path, user: pwd.struct_passwd | None) -> bool:
    """True if ``user`` can search the deepest existing directory of ``path`` (asked as that user, so
    ACLs count). Always True when no service user is involved."""
    if user is None:
        return True
    existing = next((p for p in [path, *path.parents] if p.exists()), Path("/"))
    result = subprocess.run(["/usr/bin/test", "-x", str(existing)], user=user.pw_uid, group=user.pw_gid,
                            extra_groups=[], capture_output=True, check=False)
    return result.returncode == 0


def tree_bytes(user: pwd.struct_passwd | None, path: Path, apparent: bool = True) -> int:
    """Bytes of the tree ``path`` as ``user`` sees it (``du``): the files' sizes (``apparent``) or the blocks they
    take on disk."""
    argv = ["du", "-s", "-B1", *(["--apparent-size"] if apparent else []), "--", str(path)]
    return int(run_as(user, argv).stdout.split()[0])


def copy_into(user: pwd.struct_passwd | None, source: Path, target: Path) -> None:
    """``cp -a source target`` as ``user`` (``target`` must not exist), then every copied file fsynced (``sync``
    on each file: a filesystem-wide sync would not reach through a FUSE mount, and would flush other work too)."""
    run_as(user, ["cp", "-a", "--", str(source), str(target)])
    run_as(user, ["find", str(target), "-type", "f", "-exec", "sync", "--", "{}", "+"])
