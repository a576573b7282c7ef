"""One bounded reader for every file a run reads: tables, caches, T1/T4, specs, priors, YAML (issue 37, item 3).

Why: a probe gave ``problem.path=/dev/zero`` (the process grew to 23.9 GB and was OOM-killed), a
4.4 MB ``.json.gz`` that inflates to 1 GB (2 GB of memory before the error), ``prior=[/dev/zero]``
(a MemoryError traceback) and a 700-byte "billion laughs" YAML spec (50 s before it was refused).
Here every read:

- refuses what is not a regular file (a device, a FIFO, a directory) before opening it, so
  ``/dev/zero`` and a FIFO that never ends are one line, not a hang;
- reads at most :func:`max_bytes` bytes from the disk, and at most as many after decompressing
  a ``.gz`` (read in chunks, so a gzip bomb stops at the cap, never whole in memory);
- parses YAML with a safe loader that refuses more than :data:`MAX_YAML_ALIASES` aliases, or a
  document whose aliases would expand it beyond :data:`MAX_YAML_NODES` values (counted on the
  composed graph, where each shared node is one object): a "billion laughs" document is refused
  before anything expands it.

The cap is ``SEARCHLAB_MAX_READ_MB`` (default :data:`DEFAULT_MAX_MB`; real Kernel Tuner caches
inflate to about 5 MB), refused in one line when it is not a positive integer.

Every read is also noted with the SHA-256 of the bytes on disk (:func:`noted`), so a run can
record the content of the files it read and a resume can see that one changed (item 2).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from searchlab.core.jsondata import MAX_DEPTH, TooDeep, loads
from searchlab.errors import ConfigError

OVERRIDE = "SEARCHLAB_MAX_READ_MB"
DEFAULT_MAX_MB = 256
MAX_YAML_ALIASES = 100
MAX_YAML_NODES = 100_000
_CHUNK = 1 << 20
_NOTED: dict[str, str] = {}  # resolved path -> sha256 of its bytes, for every file read in this process


def max_bytes() -> int:
    """The cap on bytes read from one file, and on its decompressed size."""
    raw = os.environ.get(OVERRIDE, "")
    if not raw:
        return DEFAULT_MAX_MB * 1024 * 1024
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{OVERRIDE}={raw!r}: must be a positive integer (megabytes one file read may hold; "
                          f"default {DEFAULT_MAX_MB})")
    return int(raw) * 1024 * 1024


def _too_big(what: str, path: Path, limit: int, inflated: bool = False) -> ConfigError:
    size = "inflates to" if inflated else "holds"
    return ConfigError(f"{what} {str(path)!r} {size} more than {limit // (1024 * 1024)} MB, the cap on one file "
                       f"read ({OVERRIDE}=N raises it)")


def regular_file(path: str | Path, what: str) -> Path:
    """``path`` if it names a regular file (symbolic links followed), else one ConfigError."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except OSError as exc:
        raise ConfigError(f"{what} {str(p)!r} does not exist" if not p.exists() and not p.is_symlink()
                          else f"{what} {str(p)!r} cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a device, FIFO or socket)"
        raise ConfigError(f"{what} {str(p)!r} is {kind}; give a regular file")
    return p


def read_bytes(path: str | Path, what: str) -> bytes:
    """The bytes of ``path`` (a ``.gz`` decompressed), bounded by :func:`max_bytes`."""
    p = regular_file(path, what)
    limit = max_bytes()
    try:
        if p.stat().st_size > limit:  # before reading: a 1 GB sparse file is refused unread (issue 47, item 11)
            raise _too_big(what, p, limit)
        with p.open("rb") as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise ConfigError(f"{what} {str(p)!r} cannot be read ({exc.strerror or exc})") from None
    if len(raw) > limit:
        raise _too_big(what, p, limit)
    _NOTED[str(p.resolve())] = hashlib.sha256(raw).hexdigest()
    return _gunzip(raw, p, what, limit) if p.suffix == ".gz" else raw


def _gunzip(raw: bytes, path: Path, what: str, limit: int) -> bytes:
    out: list[bytes] = []
    total = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as fh:
            while chunk := fh.read(_CHUNK):
                total += len(chunk)
                if total > limit:
                    raise _too_big(what, path, limit, inflated=True)
                out.append(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        raise ConfigError(f"{what} {str(path)!r} is not readable gzip: {exc}") from None
    return b"".join(out)


def read_text(path: str | Path, what: str) -> str:
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what} {str(path)!r} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_json(path: str | Path, what: str) -> Any:
    text = read_text(path, what)
    try:
        return loads(text)
    except TooDeep:
        raise ConfigError(f"{what} {str(path)!r} nests too deeply to be data (more than {MAX_DEPTH} levels)") from None
    except ValueError as exc:
        raise ConfigError(f"{what} {str(path)!r} is not readable JSON: {exc}") from None


def load_yaml(text: str, what: str) -> Any:
    """YAML as data: ``yaml.SafeLoader``, refusing more than :data:`MAX_YAML_ALIASES` aliases."""
    import yaml

    try:
        return yaml.load(text, Loader=_bounded_loader())
    except ConfigError as exc:
        raise ConfigError(f"{what}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what} is not readable YAML: {str(exc).splitlines()[0][:200]}") from None
    except RecursionError:
        raise ConfigError(f"{what} nests too deeply to be data") from None


def _bounded_loader() -> type:
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        """Counts aliases while composing: a "billion laughs" document needs many, real specs few."""

        aliases = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_YAML_ALIASES:
                    raise ConfigError(f"more than {MAX_YAML_ALIASES} YAML aliases (*name): refused, as a document "
                                      f"that expands exponentially would be")
            return super().compose_node(parent, index)

        def compose_document(self) -> Any:
            node = super().compose_document()
            if _expanded(node, {}) > MAX_YAML_NODES:
                raise ConfigError(f"expands to more than {MAX_YAML_NODES} values through its aliases (*name): refused")
            return node

    return BoundedLoader


def _expanded(node: Any, sizes: dict[int, int]) -> int:
    """Values ``node`` stands for once every alias is expanded (shared nodes counted once per use)."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    sizes[id(node)] = MAX_YAML_NODES + 1  # a cycle (a recursive alias) expands for ever
    children = node.value if isinstance(node.value, list) else []
    total = 1
    for child in children:
        for part in child if isinstance(child, tuple) else (child,):
            total += _expanded(part, sizes)
            if total > MAX_YAML_NODES:
                break
    sizes[id(node)] = total
    return total


def noted() -> dict[str, str]:
    """Every file read so far in this process: resolved path -> SHA-256 of its bytes."""
    return dict(_NOTED)


@contextmanager
def noting() -> Iterator[dict[str, str]]:
    """The files read inside the block (path -> SHA-256), filled when the block ends."""
    before = dict(_NOTED)
    _NOTED.clear()
    seen: dict[str, str] = {}
    try:
        yield seen
    finally:
        seen.update(_NOTED)
        _NOTED.clear()
        _NOTED.update({**before, **seen})


def note(path: str | Path, digest: str) -> None:
    """Note a file read through a cache of its parsed content (same path, size and time)."""
    _NOTED[str(Path(path).resolve())] = digest


def digest_of(path: str | Path) -> str | None:
    """The SHA-256 of a regular file now, bounded like a read; None if it is gone or unreadable."""
    try:
        p = regular_file(path, "file")
        h = hashlib.sha256()
        limit, total = max_bytes(), 0
        with p.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                total += len(chunk)
                if total > limit:
                    return None
                h.update(chunk)
        return h.hexdigest()
    except (ConfigError, OSError):
        return None
