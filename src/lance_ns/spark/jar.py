"""The bridge jar: the ``lance`` format's JVM path, the lance SQL catalogs and the SQL extension.

The Java sources ship in this package (``bridge/*.java``).  :func:`jar_path` finds the jar
for the running pyspark, in this order:

1. **Built with the package**: building the wheel (or ``pip install`` from source, or an
   editable install) compiles the bridge once per supported Spark minor
   (:data:`SPARK_RELEASES`) against that release's jars from Maven Central
   (:func:`build_release_jars`, run by ``setup.py``) into ``lance_ns/spark/``.  So a
   machine with a Java runtime and no JDK (the usual Spark image) runs the JVM path.  A jar
   is used only while it was built from the sources beside it (their digest is inside it).
2. **Built here** with a JDK's ``javac`` against the installed pyspark's jars (a pyspark
   outside the supported minors, or sources edited since the package was built), cached
   under ``$LANCE_NS_CACHE`` (default ``~/.cache/lance-ns``), keyed by the sources and the
   pyspark version.
3. **None**: no jar for this pyspark and no ``javac``, or ``LANCE_NS_SPARK_BRIDGE=0``; the
   ``lance`` format is then the pure Python data source (and says so once).

This module needs the standard library only: ``setup.py`` loads it by its path to build the jars.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Callable

SOURCES = Path(__file__).parent / "bridge"
#: where the jars built with the package are (one per supported Spark minor, beside this module)
PACKAGED = Path(__file__).parent
PROVIDER = "lancens.spark.LanceProvider"
_SERVICE = "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister"
#: the digest of the sources a jar was compiled from, inside the jar
_SOURCES_DIGEST = "META-INF/lance-ns/sources.sha256"

#: each supported Spark minor (the ``spark`` extra's pyspark range) -> the release its packaged
#: jar is compiled against (any patch release of the minor runs it)
SPARK_RELEASES = {"4.1": "4.1.3", "4.2": "4.2.0", "4.3": "4.3.0"}
#: the Spark modules the bridge compiles against (Scala 2.13 builds, as pyspark ships)
_SPARK_MODULES = ("spark-sql", "spark-sql-api", "spark-catalyst", "spark-core", "spark-common-utils",
                  "spark-common-utils-java", "spark-unsafe")
#: what else javac must see of Spark's classpath: types in the signatures the bridge uses
#: (compile-time only: at run time the JVM has Spark's own copies)
_COMPILE_LIBRARIES = (
    ("org.scala-lang", "scala-library", "2.13.16"),
    ("org.scala-lang", "scala-reflect", "2.13.16"),
    ("org.apache.arrow", "arrow-vector", "18.3.0"),
    ("org.apache.arrow", "arrow-memory-core", "18.3.0"),
    ("org.apache.arrow", "arrow-format", "18.3.0"),
    ("com.fasterxml.jackson.core", "jackson-core", "2.18.2"),
    ("com.fasterxml.jackson.core", "jackson-databind", "2.18.2"),
    ("com.fasterxml.jackson.core", "jackson-annotations", "2.18.2"),
    ("org.slf4j", "slf4j-api", "2.0.16"),
    ("com.esotericsoftware", "kryo-shaded", "4.0.3"),
)


def _cache_dir() -> Path:
    base = os.environ.get("LANCE_NS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "lance-ns"
    )
    return Path(base)


def _javac() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "javac"), os.X_OK):
        return os.path.join(home, "bin", "javac")
    return shutil.which("javac")


def enabled() -> bool:
    return os.environ.get("LANCE_NS_SPARK_BRIDGE", "1").lower() not in ("0", "false", "no", "off")


def _sources() -> list[Path]:
    return sorted(SOURCES.glob("*.java"))


def sources_digest() -> str:
    """The digest of the bridge's Java sources (names and contents)."""
    digest = hashlib.sha256()
    for src in _sources():
        digest.update(src.name.encode() + b"\0" + src.read_bytes())
    return digest.hexdigest()


def spark_minor(version: str) -> str:
    """``"4.3"`` of ``"4.3.0"`` (or of ``"4.3.0.dev1"``)."""
    return ".".join(version.split(".")[:2])


def jar_path() -> str | None:
    """The bridge jar for this pyspark: the one built with the package, else one built here
    with ``javac`` (once); None if disabled or neither exists (the ``lance`` format then runs
    in Python only)."""
    if not enabled():
        return None
    import pyspark

    packaged = packaged_jar(spark_minor(pyspark.__version__))
    if packaged is not None:
        return str(packaged)
    return built_jar(pyspark.__version__, Path(pyspark.__file__).parent / "jars")


def packaged_jar(minor: str) -> Path | None:
    """The jar built with the package for Spark ``minor``, if it was built from these sources."""
    jar = PACKAGED / f"lance-ns-spark-{minor}.jar"
    try:
        with zipfile.ZipFile(jar) as z:
            built_from = z.read(_SOURCES_DIGEST).decode().strip()
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    return jar if built_from == sources_digest() else None


def built_jar(pyspark_version: str, spark_jars: Path) -> str | None:
    """The jar compiled here with ``javac`` against ``spark_jars`` (cached); None without a JDK."""
    digest = hashlib.sha256(pyspark_version.encode())
    digest.update(sources_digest().encode())
    jar = _cache_dir() / f"lance-ns-spark-{digest.hexdigest()[:16]}.jar"
    if jar.exists():
        return str(jar)
    javac = _javac()
    if javac is None:
        return None
    _compile(javac, [f"{spark_jars}/*"], jar)
    return str(jar)


def _compile(javac: str, classpath: list[str], jar: Path) -> None:
    """Compile the sources against ``classpath`` into ``jar`` (written whole or not at all)."""
    jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=jar.parent) as tmp:
        classes = Path(tmp) / "classes"
        result = subprocess.run(
            [javac, "-nowarn", "--release", "17", "-d", str(classes), "-cp", os.pathsep.join(classpath),
             *map(str, _sources())],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise RuntimeError(f"compiling the lance Spark bridge failed:\n{result.stderr}")
        staged = Path(tmp) / jar.name
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(_SERVICE, PROVIDER + "\n")
            z.writestr(_SOURCES_DIGEST, sources_digest() + "\n")
            for cls in sorted(classes.rglob("*.class")):
                z.write(cls, cls.relative_to(classes).as_posix())
        os.replace(staged, jar)  # atomic: concurrent builders both succeed


# -- the jars built with the package ---------------------------------------------------------

def maven_repository() -> str:
    """Where the Spark jars the package's jars compile against come from (a mirror may be set)."""
    return os.environ.get("LANCE_NS_MAVEN_REPOSITORY", "https://repo1.maven.org/maven2").rstrip("/")


def _maven_jar(group: str, artifact: str, version: str) -> Path:
    """One jar from the Maven repository, kept under the cache and checked against the
    repository's SHA-1 (a corrupt or cut-short download is fetched again, never used)."""
    relative = f"{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.jar"
    local = _cache_dir() / "maven" / relative
    if local.exists():
        return local
    url = f"{maven_repository()}/{relative}"
    with urllib.request.urlopen(url + ".sha1", timeout=60) as answer:
        want = answer.read().decode().split()[0].strip().lower()
    _download(url, local, "sha1", want, "the repository's", timeout=300)
    return local


def _download(url: str, local: Path, algorithm: str, want: str, whose: str, timeout: float) -> None:
    """``url`` saved as ``local`` only if its ``algorithm`` digest is ``want`` (``whose``
    digest, for the error): a corrupt or cut-short download is never left in its place."""
    local.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=local.parent, prefix=".download-")
    try:
        digest = hashlib.new(algorithm)
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as answer:
            while chunk := answer.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != want.lower():
            raise RuntimeError(f"{url}: {algorithm.upper()} {digest.hexdigest()} is not {whose} {want}")
        os.replace(partial, local)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


def release_classpath(spark_version: str) -> list[str]:
    """The jars javac needs to compile the bridge for Spark ``spark_version`` (fetched once).
    Spark's own come from the Maven repository, or, where it refuses one (a mirror that does
    not carry a release), from that release's pyspark source distribution on PyPI."""
    try:
        jars = [_maven_jar("org.apache.spark", f"{module}_2.13", spark_version) for module in _SPARK_MODULES]
    except urllib.error.HTTPError as refused:
        if refused.code not in (403, 404):
            raise
        jars = _jars_of_pyspark_sdist(spark_version)
    jars += [_maven_jar(*library) for library in _COMPILE_LIBRARIES]
    return [str(j) for j in jars]


def _jars_of_pyspark_sdist(spark_version: str) -> list[Path]:
    """Spark's jars (:data:`_SPARK_MODULES`) out of pyspark ``spark_version``'s source
    distribution on PyPI, checked against the index's SHA-256, kept under the cache."""
    import json
    import tarfile

    names = {f"{module}_2.13-{spark_version}.jar": module for module in _SPARK_MODULES}
    kept = _cache_dir() / "pyspark-sdist-jars" / spark_version
    if all((kept / name).exists() for name in names):
        return [kept / name for name in names]
    index = os.environ.get("LANCE_NS_PYPI_SIMPLE", "https://pypi.org/simple").rstrip("/")
    listing = urllib.request.Request(f"{index}/pyspark/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(listing, timeout=60) as answer:
        files = json.load(answer)["files"]
    sdist = next((f for f in files if f["filename"] == f"pyspark-{spark_version}.tar.gz"), None)
    if sdist is None:
        raise RuntimeError(f"neither the Maven repository nor PyPI has Spark {spark_version}'s jars")
    kept.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=kept) as tmp:
        archive = Path(tmp) / sdist["filename"]
        _download(sdist["url"], archive, "sha256", sdist["hashes"]["sha256"], "the index's", timeout=600)
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                name = member.name.rsplit("/", 1)[-1]
                if name in names and member.isfile():
                    with tar.extractfile(member) as jar, open(Path(tmp) / name, "wb") as out:
                        shutil.copyfileobj(jar, out)
                    os.replace(Path(tmp) / name, kept / name)
    missing = [name for name in names if not (kept / name).exists()]
    if missing:
        raise RuntimeError(f"pyspark {spark_version}'s source distribution has no {', '.join(missing)}")
    return [kept / name for name in names]


def build_release_jars(out_dir: Path, log: Callable[[str], None] = print) -> list[Path]:
    """Compile the bridge for every supported Spark minor into ``out_dir`` (what the package
    carries).  Skipped, with one line saying why, without a JDK or the Maven repository: the
    package then works as before (a jar built at first use where ``javac`` exists)."""
    if os.environ.get("LANCE_NS_BUILD_SPARK_JARS", "1").lower() in ("0", "false", "no", "off"):
        log("lance-ns: LANCE_NS_BUILD_SPARK_JARS=0: no Spark bridge jars built with the package")
        return []
    javac = _javac()
    if javac is None:
        log("lance-ns: no JDK (javac): the package carries no Spark bridge jars; the lance format "
            "builds its jar at first use where a JDK is, else reads through Python")
        return []
    built = []
    for minor, release in SPARK_RELEASES.items():
        jar = Path(out_dir) / f"lance-ns-spark-{minor}.jar"
        try:
            _compile(javac, release_classpath(release), jar)
        except Exception as exc:  # noqa: BLE001 - an acceleration that cannot be built never fails the install
            log(f"lance-ns: no Spark {minor} bridge jar built ({exc})")
            continue
        built.append(jar)
    return built


def main(argv: list[str] | None = None) -> int:
    """``python -m lance_ns.spark.jar``: print the jar's path (building it if need be), e.g. for
    ``spark-submit --jars "$(python -m lance_ns.spark.jar)"``."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m lance_ns.spark.jar", description=main.__doc__)
    parser.add_argument("--build-release", metavar="DIR",
                        help="compile the jar of every supported Spark minor into DIR (what setup.py does)")
    args = parser.parse_args(argv)
    if args.build_release:
        built = build_release_jars(Path(args.build_release), log=lambda m: print(m, file=sys.stderr))
        print("\n".join(map(str, built)))
        return 0 if len(built) == len(SPARK_RELEASES) else 1
    jar = jar_path()
    if jar is None:
        import pyspark

        print(f"no bridge jar: LANCE_NS_SPARK_BRIDGE is off, or this install carries none for pyspark "
              f"{pyspark.__version__} (it carries Spark {', '.join(sorted(_packaged_minors())) or 'none'}) "
              "and no JDK (javac) was found to build one", file=sys.stderr)
        return 1
    print(jar)
    return 0


def _packaged_minors() -> list[str]:
    return [m for m in SPARK_RELEASES if packaged_jar(m) is not None]


if __name__ == "__main__":
    raise SystemExit(main())
