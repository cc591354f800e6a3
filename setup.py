"""The build step pyproject.toml cannot declare: the Spark bridge jars built with the package.

Every metadata field lives in pyproject.toml.  This only extends ``build_py`` so that a wheel
(or an install from source, or an editable install) carries the bridge compiled once per
supported Spark minor (lance_ns/spark/jar.py: ``build_release_jars``), and a machine with a
Java runtime and no JDK runs the JVM path.  Without a JDK or the Maven repository the jars are
skipped with one line saying why, and the package builds as before.
"""

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _jar_module():
    """lance_ns/spark/jar.py by its path: importing the package would need its dependencies."""
    spec = importlib.util.spec_from_file_location("_lance_ns_spark_jar", HERE / "src/lance_ns/spark/jar.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class build_py_with_jars(build_py):
    def run(self):
        super().run()
        # an editable install reads the package from src/: the jars go there (ignored by git)
        root = HERE / "src" if getattr(self, "editable_mode", False) else Path(self.build_lib)
        _jar_module().build_release_jars(root / "lance_ns" / "spark", log=lambda m: self.announce(m, 2))


setup(cmdclass={"build_py": build_py_with_jars})
