"""The directory namespace (``impl=dir``): Lance tables in a directory, pylance's layout."""

from .namespace import DirectoryNamespace

__all__ = ["DirectoryNamespace"]
