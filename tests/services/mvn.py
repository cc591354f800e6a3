"""Class paths of the JVM servers and clients the tests run, resolved by Maven.

``maven_classpath(pom, key, extra_args)`` runs ``mvn dependency:build-classpath`` on one of the
poms under ``maven/`` (``~/.m2`` is the jar cache; nothing is committed) and keeps the answer in
CACHE between processes, keyed by the pom's bytes, ``key`` and the arguments; a kept answer is
used only while every jar it names is still there.  The answer is written to a PID-suffixed
file and renamed, so a racing process finds a whole class path or none.  Where ``mvn`` is
missing or fails, :class:`MavenError` says so with Maven's own words (its ``refused`` names the
artifacts Maven would not give).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

#: resolved class paths (and other downloads the tests build once), kept between processes
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lance-ns"

_lock = threading.Lock()


def refused_artifacts(output: str) -> list[str]:
    """The artifacts Maven names as not fetched in ``output``."""
    found = re.findall(r"(?:Could not find artifact|Could not transfer artifact|Failure to find) (\S+)", output)
    found += re.findall(r"The following artifacts could not be resolved: ([^:]+(?::[^:\s,]+){2,4})", output)
    found += re.findall(r"(\S+:\S+:\S+) was not found in \S+ during a previous attempt", output)  # cached failure
    return sorted(set(found))


class MavenError(RuntimeError):
    """``mvn`` is not on PATH (``returncode`` None) or could not provide ``what``."""

    def __init__(self, what: str, cmd: Sequence[str] = (), returncode: int | None = None, output: str = ""):
        self.cmd, self.returncode, self.output = list(cmd), returncode, output
        #: Maven's ERROR lines (its whole output if it printed none)
        self.errors = [line for line in output.splitlines() if "ERROR" in line] or [output]
        self.refused = refused_artifacts(output)
        if returncode is None:
            super().__init__(f"`mvn` is not on PATH: it fetches {what}")
            return
        refused = f" (refused or not found: {', '.join(self.refused)})" if self.refused else ""
        super().__init__(f"Maven could not provide {what}{refused}: {self.errors[0][:1500]}\n"
                         f"({' '.join(self.cmd)} exited with {returncode}; a failure Maven cached is retried with -U)")


def maven_classpath(pom: Path, key: str, extra_args: Sequence[str] = (), what: str | None = None) -> str:
    """The ``:``-separated jar paths ``mvn dependency:build-classpath`` answers for ``pom`` with
    ``extra_args`` (``-Dproperty=value``...); ``key`` names the cache entry (a file name part) and
    ``what`` what is fetched, for the error messages."""
    what = what or f"the class path of {pom}"
    with _lock:
        digest = hashlib.sha256(pom.read_bytes() + "\0".join([key, *extra_args]).encode()).hexdigest()[:16]
        cached = CACHE / f"{key}-{digest}.classpath"
        if cached.exists():
            jars = cached.read_text().strip()
            if jars and all(Path(j).exists() for j in jars.split(os.pathsep)):
                return jars
        mvn = shutil.which("mvn")
        if mvn is None:
            raise MavenError(what)
        CACHE.mkdir(parents=True, exist_ok=True)
        out = CACHE / f"{key}-{digest}.{os.getpid()}.tmp"
        cmd = [mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(pom), "dependency:build-classpath",
               f"-Dmdep.outputFile={out}", *extra_args]
        done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=900)
        if done.returncode != 0 or not out.exists():
            output = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)  # mvn colours some lines anyway
            raise MavenError(what, cmd, done.returncode, output)
        jars = out.read_text().strip()
        out.replace(cached)
        return jars
