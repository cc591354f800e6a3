"""A machine with a Java runtime and no JDK, for the Spark tests: ``jlink`` makes a Java
runtime image of this JDK without its compiler (module ``jdk.compiler``, so no ``javac``),
cached by the JDK's version, and :func:`jre_only_env` is an environment whose ``JAVA_HOME``
is that image and whose ``PATH`` holds no JDK tool."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

#: what Spark needs of the platform: Java SE, sun.misc.Unsafe, the vector API it uses, and the
#: usual runtime services (what a distribution's JRE package holds, minus nothing Spark uses)
JRE_MODULES = ("java.se", "jdk.unsupported", "jdk.incubator.vector", "jdk.crypto.ec", "jdk.management",
               "jdk.naming.dns", "jdk.zipfs", "jdk.localedata", "jdk.security.auth", "jdk.net", "jdk.charsets")


def jdk_home() -> Path:
    javac = shutil.which("javac") or pytest.fail("CI has a JDK: no javac found to make a JRE from")
    return Path(os.path.realpath(javac)).parents[1]


def jre() -> Path:
    """A Java runtime image of this JDK without its compiler, made once per JDK version."""
    jdk = jdk_home()
    version = subprocess.run([jdk / "bin" / "java", "-version"], capture_output=True, text=True).stderr.split("\n")[0]
    key = re.sub(r"[^0-9A-Za-z.]+", "-", version).strip("-")
    base = Path(os.environ.get("LANCE_NS_CACHE") or Path.home() / ".cache" / "lance-ns") / "jre" / key
    if not (base / "bin" / "java").exists():
        shutil.rmtree(base, ignore_errors=True)
        base.parent.mkdir(parents=True, exist_ok=True)
        made = subprocess.run([jdk / "bin" / "jlink", "--add-modules", ",".join(JRE_MODULES), "--output", base,
                               "--no-header-files", "--no-man-pages", "--strip-debug"],
                              capture_output=True, text=True, timeout=300)
        assert made.returncode == 0, made.stderr
    assert not (base / "bin" / "javac").exists()
    return base


def _without_jdk(directory: Path, mirror: Path) -> str:
    """``directory`` as a PATH entry, or where it holds the JDK's tools (``/usr/bin/javac`` is a
    link into the JDK), a mirror of it without them: the rest of the machine as it is."""
    if not os.access(directory / "javac", os.X_OK):
        return str(directory)
    jdk = jdk_home()
    mirror.mkdir(parents=True)
    for entry in directory.iterdir():
        if not Path(os.path.realpath(entry)).is_relative_to(jdk):
            (mirror / entry.name).symlink_to(entry)
    return str(mirror)


def jre_only_env(env: dict[str, str], scratch: Path) -> tuple[dict[str, str], Path]:
    """``env`` as on a machine with the JRE (returned too) and no JDK tool on ``PATH``."""
    runtime = jre()
    path = [str(runtime / "bin")] + [_without_jdk(Path(d), scratch / "path" / str(i))
                                     for i, d in enumerate(env["PATH"].split(os.pathsep)) if d]
    return {**env, "JAVA_HOME": str(runtime), "PATH": os.pathsep.join(path)}, runtime
